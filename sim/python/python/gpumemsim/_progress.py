"""Progress of a long call: a tqdm bar (in Jupyter, ``tqdm.auto``'s widget) when tqdm is installed,
else plain lines on stderr every 10 seconds, as the CLI prints them off a terminal.

The native job calls nothing here; the waiting thread does, every 100 ms, with ``(done, total,
messages)``. Like the CLI, nothing shows for work that ends within the first second.
"""

import sys
import time

#: Seconds before anything shows, and between two plain lines.
DELAY = 1.0
LINE_INTERVAL = 10.0


def _clock(secs):
    s = int(round(secs))
    h, m, s = s // 3600, s // 60 % 60, s % 60
    if h:
        return f"{h}h{m:02}m{s:02}s"
    if m:
        return f"{m}m{s:02}s"
    return f"{s}s"


class Lines:
    """``LABEL: DONE/TOTAL WHAT (P%), elapsed E`` at most every LINE_INTERVAL seconds."""

    def __init__(self, label, what, stream=None):
        self.label, self.what = label, what
        self.stream = stream or sys.stderr
        self.start = time.monotonic()
        self.last = self.start - LINE_INTERVAL + DELAY
        self.printed = False
        self.state = (0, 0)

    def __call__(self, done, total, messages):
        self.state = (done, total)
        for m in messages:
            print(m, file=self.stream)
        now = time.monotonic()
        if now - self.last >= LINE_INTERVAL:
            self.last = now
            self.printed = True
            self._line(now)

    def _line(self, now):
        done, total = self.state
        pct = f" ({100 * done / total:.0f}%)" if total else ""
        print(
            f"{self.label}: {done}/{total} {self.what}{pct}, elapsed {_clock(now - self.start)}",
            file=self.stream,
            flush=True,
        )

    def close(self):
        if self.printed:
            self._line(time.monotonic())


class Bar:
    """A tqdm bar that appears after DELAY seconds."""

    def __init__(self, label, what, tqdm):
        self.bar = tqdm(total=0, desc=label, unit=f" {what}", delay=DELAY, leave=False)
        self.tqdm = tqdm

    def __call__(self, done, total, messages):
        for m in messages:
            self.tqdm.write(m, file=sys.stderr)
        if total != self.bar.total:
            self.bar.total = total
        self.bar.n = done
        self.bar.refresh()

    def close(self):
        self.bar.close()


def reporter(progress, label, what):
    """What a call hands the native job: ``(callback, close)``; ``progress`` is True (show),
    False or None (nothing), or a callable ``f(done, total, messages)`` of the caller's."""
    if callable(progress):
        return progress, lambda: None
    if not progress:
        return None, lambda: None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        r = Lines(label, what)
    else:
        r = Bar(label, what, tqdm)
    return r, r.close
