"""Make a graded notebook inert wherever the instructor looks at it.

Formgrader (its submission view), the feedback pages and JupyterLab render what a student
wrote as HTML in the instructor's browser, where a script can read the ``_xsrf`` cookie, change
grades through ``formgrader/api/grade`` and open a terminal. nbgrader 0.9.6 renders markdown
cells raw (``HTMLExporter.sanitize_html`` cleans outputs only), nbconvert keeps ``javascript:``
links and writes ```` ```mermaid ```` blocks unescaped, and ``application/javascript`` outputs
become ``<script>`` elements. ``make_inert`` runs in the ledger before a graded notebook is
installed under ``autograded/``, where all of them read it:

- **markdown** (a cell, or a ``text/markdown`` output): rendered with nbconvert's own renderer
  (the one Formgrader and feedback use) and cleaned with ``nh3`` (ammonia, an allowlist
  sanitiser). When cleaning changes nothing, the source stays as written (the honest
  reflection, its math and tables, look and read the same); otherwise the cell becomes the
  cleaned HTML, on one line so that every markdown renderer passes it through whole.
- **outputs**: ``text/html`` is cleaned; image data must be base64; an SVG is shown only
  through ``<img>``, where its scripts never run; JavaScript, widget views and any type no
  page shows safely are removed; output metadata keeps only numeric widths and heights.
- **raw cells** (rendered as HTML by nbconvert) are cleaned; the notebook's saved widget state,
  which JupyterLab and nbconvert would turn into live widgets, is removed.

What the allowlist keeps: text formatting, headings, lists, tables, code, images as
``data:image/...`` (PNG plots, pasted pictures) and links to ``http(s):``, ``mailto:`` and the
page's own anchors. Every ``id`` a student sets gets the prefix ``student-``, so it cannot stand
in for an element of Formgrader's page (its score inputs are found by id). Cells the
instructor wrote (their source is in the release notebook, e.g. read-only cells that nbgrader
restored) are left untouched; nbgrader's metadata (grade ids, checksums) is never changed.
"""
from __future__ import annotations

import base64
import html
import json
import re
from pathlib import Path

import nbformat
import nh3
from nbconvert.exporters.exporter import ResourcesDict
from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath
from nbformat import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor
from pygments.token import STANDARD_TYPES

ID_PREFIX = "student-"
IMAGE_DATA = re.compile(r"data:image/(png|jpeg|gif|webp|svg\+xml);base64,[A-Za-z0-9+/=\s]*\Z",
                        re.IGNORECASE)
BASE64 = re.compile(r"[A-Za-z0-9+/=\s]*\Z")
LINKS = ("http://", "https://", "mailto:")
HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
SHOWN = {"text/plain", "text/html", "text/markdown", "text/latex", "image/png", "image/jpeg",
         "image/gif", "image/svg+xml"}
RASTER = ("image/png", "image/jpeg", "image/gif")
NEWLINE = "&#10;"
REMOVED = "[the grader removed an output that could run code in a browser: {}]"
ATTRIBUTES = {
    "a": {"href", "title"}, "img": {"src", "alt", "title", "width", "height"},
    "ol": {"start"}, "th": {"align", "colspan", "rowspan", "style"},
    "td": {"align", "colspan", "rowspan", "style"}, "table": {"border"},
    **{heading: {"id"} for heading in HEADINGS},
}
CLASSES = {"a": {"anchor-link"}, "div": {"highlight"}, "table": {"dataframe"},
           "span": set(STANDARD_TYPES.values()) - {""}}


def _attribute(tag: str, name: str, value: str) -> str | None:
    """Links go to the web, mail or the page's own (prefixed) anchors; images are data."""
    if name == "src":
        return value if IMAGE_DATA.match(value.strip()) else None
    if name == "href":
        if value.startswith("#"):
            return value if value.startswith("#" + ID_PREFIX) else "#" + ID_PREFIX + value[1:]
        return value if value.strip().lower().startswith(LINKS) else None
    return value


CLEANER = nh3.Cleaner(tags=nh3.ALLOWED_TAGS - {"area", "map"}, attributes=ATTRIBUTES,
                      allowed_classes=CLASSES, attribute_filter=_attribute, link_rel=None,
                      url_schemes={"http", "https", "mailto", "data"},
                      filter_style_properties={"text-align"}, id_prefix=ID_PREFIX)


def clean_html(text: str) -> str:
    """``text`` with everything outside the allowlist removed."""
    return CLEANER.clean(text)


def _render(source: str, attachments: dict | None = None) -> str:
    """A markdown source as Formgrader and nbgrader's feedback render it."""
    renderer = IPythonRenderer(escape=False, attachments=attachments or {})
    return MarkdownWithMath(renderer=renderer).render(source)


def _inert(rendered: str) -> bool:
    """Whether a rendering is already what the cleaner makes of it (``&#10;`` is a newline)."""
    return clean_html(rendered) == rendered.replace(NEWLINE, "\n")


def _block(cleaned: str) -> str:
    """HTML as a markdown source of one line: an HTML block that markdown passes through."""
    return "<div>" + cleaned.replace("\n", NEWLINE) + "</div>"


def clean_markdown(source: str, attachments: dict | None = None) -> str:
    """``source`` itself when it renders inert, else its cleaned rendering (or, should that
    not render inert either, the source shown as text)."""
    try:
        rendered = _render(source, attachments)
    except Exception:  # noqa: BLE001 - e.g. a missing attachment: shown as text below
        rendered = None
    if rendered is not None:
        if _inert(rendered):
            return source
        block = _block(clean_html(rendered))
        if _inert(_render(block)):
            return block
    return _block("<pre>" + html.escape(source, quote=False) + "</pre>")


def _svg_as_image(svg: str) -> str:
    encoded = base64.b64encode(svg.encode("utf-8")).decode("ascii")
    return f'<img src="data:image/svg+xml;base64,{encoded}">'


def _image_metadata(metadata: dict) -> dict:
    """Only numeric widths and heights of images (templates write them unquoted)."""
    kept = {}
    for mime in RASTER:
        sizes = {key: value for key, value in (metadata.get(mime) or {}).items()
                 if key in ("width", "height") and type(value) in (int, float) and value > 0}
        if sizes:
            kept[mime] = sizes
    return kept


def clean_output(output: NotebookNode) -> bool:
    """Make one output inert in place; whether anything changed."""
    if output.get("output_type") not in ("display_data", "execute_result"):
        return False
    before = json.dumps(output, sort_keys=True)
    data = output.setdefault("data", {})
    removed = sorted(m for m in data if m not in SHOWN or not isinstance(data[m], str)
                     or (m in RASTER and not BASE64.match(data[m])))
    for mime in removed:
        del data[mime]
    if "image/svg+xml" in data:
        data.setdefault("text/html", _svg_as_image(data.pop("image/svg+xml")))
    if "text/html" in data:
        data["text/html"] = clean_html(data["text/html"])
    if "text/markdown" in data:
        data["text/markdown"] = clean_markdown(data["text/markdown"])
    if not data:
        data["text/plain"] = REMOVED.format(", ".join(removed))
    output.metadata = _image_metadata(output.get("metadata") or {})
    return json.dumps(output, sort_keys=True) != before


def _clean_cell(cell: NotebookNode, trusted: set[str]) -> bool:
    """Make one cell inert in place; whether anything changed."""
    if cell.cell_type == "code":
        return any([clean_output(output) for output in cell.get("outputs", [])])
    if cell.source in trusted and not cell.get("attachments"):
        return False
    if cell.cell_type == "markdown":
        source = clean_markdown(cell.source, cell.get("attachments"))
    else:   # raw: nbconvert writes it into the page as HTML
        source = clean_html(cell.source)
    if source == cell.source:
        return False
    cell.source = source
    cell.pop("attachments", None)   # a cleaned cell holds its images inline
    return True


def make_inert(nb: NotebookNode, trusted: set[str] = frozenset()) -> bool:
    """Make a graded notebook inert in place (see the module's docstring); ``trusted`` holds
    the instructor's own cell sources, left as they are. Whether anything changed."""
    changed = [_clean_cell(cell, trusted) for cell in nb.cells]
    return nb.metadata.pop("widgets", None) is not None or any(changed)


def instructor_sources(release: Path) -> set[str]:
    """The markdown and raw sources of the release notebooks in the folder ``release``: text
    the instructor wrote, which nbgrader puts back in read-only cells."""
    return {cell.source for path in sorted(release.glob("*.ipynb"))
            for cell in nbformat.read(str(path), as_version=4).cells if cell.cell_type != "code"}


def clean_file(data: bytes, trusted: set[str] = frozenset()) -> bytes:
    """A notebook file made inert (``make_inert``). Bytes that are not a notebook are kept:
    no page renders them as one."""
    try:
        nb = nbformat.reads(data.decode("utf-8"), as_version=4)
    except Exception:  # noqa: BLE001 - not a notebook: nothing renders it as HTML
        return data
    return nbformat.writes(nb).encode("utf-8") if make_inert(nb, trusted) else data


class MakeInert(NbGraderPreprocessor):
    """``make_inert`` as an nbgrader preprocessor: feedback pages are inert even for a notebook
    that reached ``autograded/`` some other way (graded before this defence, or by
    ``nbgrader autograde`` run by hand)."""

    def preprocess(self, nb: NotebookNode, resources: ResourcesDict):
        make_inert(nb)
        return nb, resources
