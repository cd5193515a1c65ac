"""The demo notebook executed without a browser (as nbconvert and nbval do) leaves a static picture."""
from __future__ import annotations

import os
from pathlib import Path

import nbformat
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).parent / "notebooks" / "playground_demo.ipynb"
ROOT = Path(__file__).resolve().parents[2]


def test_demo_notebook_runs_headless_and_keeps_a_static_copy(tmp_path, monkeypatch):
    for var in ("IPYTHONDIR", "MPLCONFIGDIR"):
        monkeypatch.setenv(var, str(tmp_path / var.lower()))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = notebook.cells[-1].outputs
    assert [o.output_type for o in outputs] == ["execute_result"], outputs
    data = outputs[0].data
    assert "application/vnd.jupyter.widget-view+json" in data
    assert data["text/html"].count("<img src='data:image/png;base64,") == 3
    assert "epoch 20 " in data["text/html"] and "Error" not in data["text/html"]
