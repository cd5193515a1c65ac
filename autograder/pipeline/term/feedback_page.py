"""A feedback page rendered once: nbconvert's HTML without its accessibility pass's second parse.

nbconvert's ``HTMLExporter`` renders the page, then parses all of it again with BeautifulSoup
(``html.parser``, in Python) and writes it out anew, to give every image that has no ``alt`` a
placeholder and to make the cells of the lab template focusable: two thirds of a feedback
page's time (2 of 3 s of CPU for unit 9's page, 1.5 MB and 28,000 tags). In the feedback
template (nbgrader's, on nbconvert's classic one) no cell is made focusable, and the images are
the outputs' pictures, which the template describes from their ``alt`` metadata: here
``DescribeImages`` gives each picture nbconvert's placeholder there, after ``MakeInert`` has
cleaned the metadata, and ``FeedbackExporter`` renders the page without the second parse. The
page is the one nbconvert writes before it parses it again (tests/pipeline/test_feedback_page.py);
an ``<img>`` typed into a markdown cell, and an SVG output (shown through an ``<img>`` the
template gives no ``alt``), keep the ``alt`` they have, or none.
Both are named in the course's ``nbgrader_config.py``.
"""
from __future__ import annotations

from typing import Any

from nbconvert.exporters import HTMLExporter, TemplateExporter
from nbconvert.filters import get_metadata
from nbconvert.filters.highlight import Highlight2HTML
from nbconvert.filters.widgetsdatatypefilter import WidgetsDataTypeFilter
from nbformat import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor

NO_DESCRIPTION = "No description has been provided for this image"    # nbconvert's words
PICTURES = ("image/png", "image/jpeg")     # the outputs the template shows with an ``alt``


class DescribeImages(NbGraderPreprocessor):
    """Every picture an output shows gets an ``alt``: the one the template would find (the
    output's, then the cell's), else nbconvert's placeholder."""

    def preprocess_cell(self, cell: NotebookNode, resources: dict, index: int):
        if cell.cell_type == "code" and not get_metadata(cell, "alt"):
            for output in cell.get("outputs", ()):
                for mimetype in PICTURES:
                    if mimetype in output.get("data", {}) and not get_metadata(output, "alt", mimetype):
                        output.setdefault("metadata", {}).setdefault(mimetype, {})["alt"] = NO_DESCRIPTION
        return cell, resources


class FeedbackExporter(HTMLExporter):
    """``HTMLExporter`` that returns the page its template renders, as it renders it."""

    def from_notebook_node(self, nb: NotebookNode, resources: dict | None = None,
                           **kw: Any) -> tuple[str, dict]:
        """The filters ``HTMLExporter.from_notebook_node`` registers, then the template."""
        language = nb.metadata.get("language_info", {})
        lexer = language.get("pygments_lexer", language.get("name"))
        self.register_filter("highlight_code", self.filters.get(
            "highlight_code", Highlight2HTML(pygments_lexer=lexer, parent=self)))
        resources = self._init_resources(resources)
        self.register_filter("filter_data_type", WidgetsDataTypeFilter(
            notebook_metadata=self._nb_metadata, parent=self, resources=resources))
        return TemplateExporter.from_notebook_node(self, nb, resources, **kw)
