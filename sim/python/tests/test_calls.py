"""How long calls behave: the GIL released, progress reported, Ctrl-C honoured."""

import _thread
import threading
import time

import pytest

import gpumemsim

MP = "workloads/litmus/ptx/mp_relaxed_gpu.litmus"


def test_progress_reaches_the_total():
    seen = []
    gpumemsim.litmus(MP, iterations=2000, progress=lambda d, t, m: seen.append((d, t)))
    assert seen and seen[-1] == (2000, 2000)
    assert all(t == 2000 for _, t in seen)


def test_a_long_call_releases_the_gil():
    ticks = 0
    worker = threading.Thread(target=lambda: gpumemsim.litmus(MP, iterations=20_000, progress=False))
    worker.start()
    while worker.is_alive():
        ticks += 1
        time.sleep(0.01)
    worker.join()
    # Python ran alongside: with the GIL held for the whole call this loop would see one tick.
    assert ticks > 5


def test_ctrl_c_interrupts_a_long_call_at_once():
    timer = threading.Timer(0.5, _thread.interrupt_main)
    start = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        gpumemsim.litmus(MP, iterations=10**9, progress=False)
    assert time.monotonic() - start < 5
    # The stopped job does not hold anything the next call needs.
    assert gpumemsim.litmus(MP, iterations=100, progress=False).tests[0]["iterations"] == 100


def test_an_error_in_the_progress_callback_stops_the_call():
    def boom(done, total, messages):
        raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        gpumemsim.litmus(MP, iterations=10**9, progress=boom)


def test_plain_progress_lines_without_tqdm(capsys, monkeypatch):
    from gpumemsim import _progress

    monkeypatch.setattr(_progress, "LINE_INTERVAL", 0.0)
    monkeypatch.setattr(_progress, "DELAY", 0.0)
    lines = _progress.Lines("litmus", "iterations")
    lines(5, 10, ["a message"])
    lines.close()
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "a message"
    assert err[1].startswith("litmus: 5/10 iterations (50%), elapsed ")


def test_litmus_json_records_the_set_overrides():
    # As `gpumemsim litmus --set ... --out FILE` records them (issue 45 item 3).
    r = gpumemsim.litmus(MP, set={"l2.slices": 50}, iterations=100, progress=False)
    assert r.tests[0]["overrides"] == {"set": ["l2.slices=50"], "param": {}}
