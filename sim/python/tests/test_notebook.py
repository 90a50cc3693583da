"""docs/notebooks/quickstart.ipynb runs top to bottom (nbclient, a fresh kernel of this interpreter)
and is stored with its outputs cleared."""

import os
import sys

import nbformat
from nbclient import NotebookClient

from conftest import REPO

NOTEBOOK = REPO / "docs" / "notebooks" / "quickstart.ipynb"


def test_the_notebook_is_stored_without_outputs():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code
    for c in code:
        assert c.outputs == [] and c.execution_count is None, c.source[:60]


def test_the_notebook_runs(monkeypatch, tmp_path):
    # The kernel is this interpreter, which has the package just built.
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOK.parent)}}
    )
    client.execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    # The sweep's plot and the histogram were drawn.
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) >= 2
    text = "".join(o.get("text", "") for o in outputs)
    assert "l2.ways = 0" in text
