"""nbgrader preprocessors for what a graded notebook's outputs may hold.

``LimitOutputSize`` (autograding): nbgrader's ``LimitOutput`` counts lines, so one
50 MB line passes; this caps every output's text at ``max_chars`` characters.

``ScrubHiddenTracebacks`` (feedback, before ``ClearHiddenTests``): a failing hidden
test's traceback quotes the cell's lines and the checker's frames; in feedback it
becomes the one line ``CheckFailure: <the check's message>``, which is all a
student needs and shows no test code.
"""
from __future__ import annotations

from nbconvert.exporters.exporter import ResourcesDict
from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Integer, Unicode

TRUNCATED = "\n[... the grader cut this output here: it was longer than {:,} characters ...]\n"


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + TRUNCATED.format(limit)


class LimitOutputSize(NbGraderPreprocessor):
    """Cap the characters of every output of every code cell."""

    max_chars = Integer(1_000_000, help="characters kept per output (-1: no limit)").tag(config=True)

    def preprocess_cell(self, cell: NotebookNode, resources: ResourcesDict, index: int):
        if cell.cell_type != "code" or self.max_chars < 0:
            return cell, resources
        for output in cell.outputs:
            if output.output_type == "stream":
                output.text = _cut(output.text, self.max_chars)
            elif output.output_type == "error":
                output.evalue = _cut(output.evalue, self.max_chars)
                output.traceback = [_cut(line, self.max_chars) for line in output.traceback]
            elif "data" in output:
                for mime, value in list(output.data.items()):
                    if isinstance(value, str) and len(value) > self.max_chars:
                        output.data[mime] = (_cut(value, self.max_chars) if mime == "text/plain"
                                             else TRUNCATED.format(self.max_chars))
        return cell, resources


class ScrubHiddenTracebacks(NbGraderPreprocessor):
    """Reduce the error outputs of hidden-test cells to ``ename: evalue``."""

    begin_test_delimeter = Unicode("BEGIN HIDDEN TESTS").tag(config=True)

    def preprocess_cell(self, cell: NotebookNode, resources: ResourcesDict, index: int):
        if cell.cell_type != "code" or self.begin_test_delimeter not in cell.source:
            return cell, resources
        for output in cell.outputs:
            if output.output_type == "error":
                output.traceback = [f"{output.ename}: {output.evalue}"]
        return cell, resources
