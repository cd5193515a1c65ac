"""The feedback page's exporter writes the page nbconvert's ``HTMLExporter`` writes, rendered
once: the same document, with each picture described before the template renders it instead
of after, by a second parse of the whole page."""
from __future__ import annotations

import base64
import copy

import nbformat
from bs4 import BeautifulSoup
from nbconvert.exporters import HTMLExporter
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from autograder.pipeline.term.feedback_page import NO_DESCRIPTION, DescribeImages, FeedbackExporter

PIXEL = base64.b64encode(bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108060000001f"
                                       "15c4890000000d4944415478da63f8cfc0f01f0005000201a5f2d61e0000"
                                       "000049454e44ae426082")).decode()


def _picture(**metadata) -> nbformat.NotebookNode:
    return new_output("display_data", data={"image/png": PIXEL, "text/plain": "<Figure>"},
                      metadata=metadata)


def _notebook() -> nbformat.NotebookNode:
    """Pictures with no description, with their own, with their cell's; code, text, markdown."""
    return new_notebook(cells=[
        new_markdown_cell("# A unit\n\nSome *text*, a formula $x^2$ and ![a drawing](d.png)."),
        new_code_cell("plt.plot(x)", outputs=[_picture(), _picture(**{"image/png": {"width": 40}})]),
        new_code_cell("show()", outputs=[_picture(alt="the loss falls")]),
        new_code_cell("show()", outputs=[_picture()], metadata={"alt": "the cell's own words"}),
        new_code_cell("1 / 0", outputs=[new_output("error", ename="ZeroDivisionError",
                                                   evalue="division by zero", traceback=[])]),
    ], metadata={"language_info": {"name": "python", "pygments_lexer": "ipython3"}})


def test_the_page_is_nbconverts_page_without_its_second_pass():
    notebook = _notebook()
    theirs, _ = HTMLExporter(template_name="classic").from_notebook_node(copy.deepcopy(notebook))
    exporter = FeedbackExporter(template_name="classic")
    exporter.register_preprocessor(DescribeImages)
    ours, _ = exporter.from_notebook_node(notebook)
    assert str(BeautifulSoup(ours, features="html.parser")) == theirs
    assert ours.count(f'alt="{NO_DESCRIPTION}"') == 2


def test_a_picture_keeps_the_description_it_has():
    nb, _ = DescribeImages().preprocess(_notebook(), {})
    described = [output.metadata for cell in nb.cells[1:4] for output in cell.outputs]
    assert described == [{"image/png": {"alt": NO_DESCRIPTION}},
                         {"image/png": {"width": 40, "alt": NO_DESCRIPTION}},
                         {"alt": "the loss falls"}, {}]
