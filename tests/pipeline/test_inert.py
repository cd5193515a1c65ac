"""``autograder.pipeline.term.inert``: what a student wrote or printed is cleaned, what an honest
student and the instructor wrote reads as before, and nbgrader's metadata is never touched.
(No kernel, no browser: ``test_inert_pages`` opens the pages themselves.)"""
from __future__ import annotations

import base64

import nbformat
import pytest
import xss

from autograder.pipeline.term import inert
from autograder.pipeline.ledger.grade import _install

HONEST = ("I submitted a *784-128-10* network; with $\\eta = 10^{-3}$ and $p(y \\mid x) < 1$ it "
          "reached **95 %**.\n\n1. a list\n2. `code < 3`\n\n$$\\sum_i a_i & b_i$$\n\n"
          "| setting | accuracy |\n|---|---|\n| Adam | 0.95 |\n\n```\nx = a < b\n```\n")
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 16).decode()
DANGER = ("<script", "onerror", "javascript:", "<svg", "onload")


def _rendered(source: str) -> str:
    return inert._render(source)


def test_an_honest_answer_is_left_as_written():
    assert inert.clean_markdown(HONEST) == HONEST


@pytest.mark.parametrize("vector", xss.MARKDOWN_VECTORS)
def test_each_markdown_vector_renders_inert(vector):
    source = xss._markdown(vector)
    assert any(word in _rendered(source) for word in DANGER)      # as nbconvert renders it today
    cleaned = inert.clean_markdown(source)
    page = _rendered(cleaned)
    assert not [word for word in DANGER if word in page], page
    assert inert._inert(page)                                     # nothing left to remove


def test_a_cleaned_cell_keeps_its_text_math_and_pictures():
    source = f"## Results\n\nIt works: $a<b$. ![plot](data:image/png;base64,{PNG}) <b>bold</b>"
    page = _rendered(inert.clean_markdown(source))
    assert "$a&lt;b$" in page and f'src="data:image/png;base64,{PNG}"' in page
    assert "<b>bold</b>" in page and 'id="student-Results"' in page     # ids get a prefix


def test_a_missing_attachment_is_shown_as_text_not_an_error():
    assert "attachment:nothere.png" in _rendered(inert.clean_markdown("![x](attachment:nothere.png)"))


def _display(data: dict, metadata: dict | None = None):
    return nbformat.v4.new_output("display_data", data=data, metadata=metadata or {})


def test_javascript_and_widget_views_are_removed_and_said_so():
    script = _display({"application/javascript": "alert(1)"})
    assert inert.clean_output(script) and script.data == {
        "text/plain": inert.REMOVED.format("application/javascript")}
    widget = _display({"application/vnd.jupyter.widget-view+json": {"model_id": "a"},
                       "text/plain": "IntSlider(value=3)"})
    assert inert.clean_output(widget) and widget.data == {"text/plain": "IntSlider(value=3)"}


def test_html_outputs_keep_their_tables_and_lose_their_scripts():
    table = '<table class="dataframe"><tbody><tr><td>1</td></tr></tbody></table>'
    output = _display({"text/html": table + "<script>alert(1)</script><img src=x onerror=alert(1)>"})
    inert.clean_output(output)
    assert output.data["text/html"] == table + "<img>"


def test_plots_stay_and_forged_image_data_or_sizes_go():
    plot = _display({"image/png": PNG, "text/plain": "<Figure>"}, {"image/png": {"width": 400}})
    assert not inert.clean_output(plot)
    forged = _display({"image/png": 'x" onerror="alert(1)', "text/plain": "<Figure>"},
                      {"image/png": {"width": "1 onerror=alert(1)"}})
    assert inert.clean_output(forged)
    assert forged.data == {"text/plain": "<Figure>"} and forged.metadata == {}


def test_an_svg_output_is_shown_only_as_an_image():
    svg = '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'
    output = _display({"image/svg+xml": svg})
    inert.clean_output(output)
    encoded = base64.b64encode(svg.encode()).decode()
    assert output.data == {"text/html": f'<img src="data:image/svg+xml;base64,{encoded}">'}


def _notebook() -> nbformat.NotebookNode:
    answer = nbformat.v4.new_markdown_cell("<img src=x onerror=alert(1)>")
    answer.metadata["nbgrader"] = {"grade": True, "grade_id": "reflection", "points": 10,
                                   "solution": True, "locked": False, "checksum": "abc"}
    raw = nbformat.v4.new_raw_cell("<script>alert(1)</script>")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Unit 11"), answer, raw])
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    return nb


def test_a_notebook_keeps_the_instructors_cells_and_nbgraders_metadata():
    nb = _notebook()
    metadata = dict(nb.cells[1].metadata["nbgrader"])
    assert inert.make_inert(nb, trusted={"# Unit 11"})
    assert nb.cells[0].source == "# Unit 11"                      # the instructor's, as written
    assert "onerror" not in nb.cells[1].source and nb.cells[1].metadata["nbgrader"] == metadata
    assert "script" not in nb.cells[2].source and "widgets" not in nb.metadata
    assert not inert.make_inert(nb, trusted={"# Unit 11"})        # inert already


def test_the_ledger_installs_inert_notebooks_and_no_unsafe_file_name(tmp_path):
    clean = nbformat.writes(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(HONEST)]))
    files = {"11_capstone.ipynb": nbformat.writes(_notebook()).encode(),
             "honest.ipynb": clean.encode(), "<img src=x onerror=alert(1)>.ipynb": b"{}",
             ".grading.json": b"{}", "timestamp.txt": b"2026"}
    _install(files, tmp_path / "ada" / "11_capstone", {"# Unit 11"})
    installed = tmp_path / "ada" / "11_capstone"
    assert sorted(p.name for p in installed.iterdir()) == [
        ".grading.json", "11_capstone.ipynb", "honest.ipynb", "timestamp.txt"]
    assert "onerror" not in (installed / "11_capstone.ipynb").read_text()
    assert (installed / "honest.ipynb").read_text() == clean       # byte for byte
