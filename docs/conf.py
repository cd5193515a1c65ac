"""Sphinx configuration of the course's documentation site (``make docs``).

Sphinx with MyST Markdown, as nbgrader, JupyterHub and Dask build theirs. The build reads
nothing from the network (no intersphinx): references outside the project are left
unlinked on purpose (``nitpick_ignore_regex``), every reference inside it must resolve.
"""
from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path[:0] = [str(DOCS.parent), str(DOCS / "_ext")]

project = "minitorch-course"
author = "the minitorch-course authors"
copyright = "the minitorch-course authors, MIT licence"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.graphviz",
    "sphinx_copybutton",
    "checks_table",        # docs/_ext: the list of checks, generated from the registry
]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_ext"]

# MyST: headings up to ### get anchors, so a link to a renamed heading breaks the build.
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence", "deflist"]
suppress_warnings: list[str] = []

# Every cross-reference must resolve, except to code outside this project (numpy, the
# standard library), which no offline build can link to.
nitpicky = True
nitpick_ignore_regex = [
    (r"py:.*", r"(np|numpy|typing|collections|abc|pathlib)\..*"),
    (r"py:.*", r"(Callable|Iterable|Iterator|Sequence|Mapping|Any|Path|NotebookNode|"
               r"TypeVar|dtype|type|optional|default|ArrayLike|Generator|T_co|T)"),
    (r"py:.*", r"(float|int|str|bool|dict|list|tuple|object|None|bytes|function)"),
]

autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": True}
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_custom_sections = [("Shape", "params_style")]
napoleon_use_ivar = True     # an Attributes section beside the attribute's own entry: one entry

graphviz_output_format = "svg"

html_theme = "pydata_sphinx_theme"
html_title = "minitorch-course"
html_static_path: list[str] = []
html_theme_options = {
    "navigation_depth": 2,
    "header_links_before_dropdown": 5,
    "show_toc_level": 2,
    "navbar_align": "left",
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_show_sourcelink = False
# One page per reader and task, no sections below them: no left sidebar, wider pages.
html_sidebars: dict[str, list[str]] = {"**": []}
