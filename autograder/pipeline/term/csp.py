"""The instructor's Jupyter server runs no script but its own: a Content-Security-Policy.

A Jupyter server extension (``jpserver_extensions = {"autograder.pipeline.term.csp": true}``, in
``hub/instructor/jupyter_server_config.json``, which ``make lab`` and the hub's instructor
server read). Every response gets, besides Jupyter's own policy (``frame-ancestors``)::

    script-src <host><base>static/ <host><base>lab/extensions/ <host><base>formgrader/static/
               ['unsafe-eval'] 'unsafe-hashes' <hashes>; object-src 'none'; base-uri 'self'

so a page runs the scripts of its server's own packages and nothing else: no ``<script>``
element a student's HTML slipped into a page, no ``onerror=`` attribute, no ``javascript:``
link, nothing from another host, and no file of the course (``'self'`` took in ``files/``,
where a student's ``.js`` was served as a script: issue 46). The three paths
(``SCRIPT_PATHS``) are every place the pages load scripts from (measured in Chromium:
JupyterLab's and Notebook's bundles under ``static/``, the prebuilt extensions under
``lab/extensions/``, Formgrader's under ``formgrader/static/``); each is served from the
installed packages' folders. The host is the request's (``Host``; one that is not a plain
name or address and port gets no script source at all). It is the second line behind ``inert`` (which cleans what a
student hands in) and it also covers what ``inert`` never sees, e.g. a student id in a URL.

What the pages need (measured in Chromium with nbgrader 0.9.6 and JupyterLab 4):

- Formgrader loads jQuery, Backbone, Bootstrap, DataTables and its own code from
  ``/formgrader/static`` ('self'). Each page also holds one to three inline scripts that set
  variables from the page's data (``var base_url = "..."``, the assignment, submission or
  student id) or wire its tooltips, and the submission view has two ``onclick`` handlers
  (``toggle_name``). An inline script is allowed by its hash, per response, when its text
  with the contents of its string literals left out is one of the inline scripts of the
  installed templates (nbgrader's, Jupyter Server's, JupyterLab's, Notebook's), and only the
  first script of each such shape in the page: data put inside a string cannot make a script
  of another shape, and a template's own script comes before any student content. The
  templates' fixed event handlers are allowed by hash ('unsafe-hashes' admits only those).
- JupyterLab loads its bundles from ``/static`` ('self'); its one inline script (removing the
  token from the address) is allowed as above. It compiles its settings' JSON schemas into
  functions (ajv), so outside ``/formgrader`` the policy adds 'unsafe-eval': the page's own
  code may evaluate strings, which admits no injected element, handler or link.
- Not allowed, so not shown: MathJax from cdnjs, which Formgrader's submission view and
  nbgrader's feedback pages load (math shows as TeX source there; on a machine without the
  internet it never loaded anyway), and nbconvert's widget manager from unpkg.

Styles and images are left to Jupyter's defaults: they cannot run script.
"""
from __future__ import annotations

import base64
import hashlib
import importlib.util
import re
from pathlib import Path

from jupyter_core.paths import jupyter_path
from tornado.httputil import HTTPHeaders, HTTPServerRequest
from tornado.web import OutputTransform

SCRIPT = re.compile(r"<script\b(?P<attributes>[^>]*)>(?P<body>.*?)</script\s*>",
                    re.IGNORECASE | re.DOTALL)
JAVASCRIPT_TYPES = ("", "text/javascript", "application/javascript", "module")
SOURCE = re.compile(r"\bsrc\s*=", re.IGNORECASE)
TYPE = re.compile(r"""\btype\s*=\s*["']?([^"'\s>]*)""", re.IGNORECASE)
STRING = re.compile(r""""(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'""")
HANDLER = re.compile(r"""\son[a-z]+\s*=\s*"([^"{}]*)\"""", re.IGNORECASE)
TEMPLATE_PACKAGES = ("nbgrader.server_extensions.formgrader", "jupyter_server",
                     "jupyterlab_server", "notebook")
FIXED = "object-src 'none'; base-uri 'self'"
FORMGRADER = "/formgrader"
SCRIPT_PATHS = ("static/", "lab/extensions/", "formgrader/static/")
HOST = re.compile(r"(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?")


def _inline_scripts(page: str) -> list[str]:
    """The text of every inline script of ``page`` that a browser would run."""
    found = []
    for match in SCRIPT.finditer(page):
        attributes = match.group("attributes")
        kind = TYPE.search(attributes)
        if not SOURCE.search(attributes) and (kind is None
                                              or kind.group(1).lower() in JAVASCRIPT_TYPES):
            found.append(match.group("body").replace("\r\n", "\n").replace("\r", "\n"))
    return found


def shape(script: str) -> str:
    """A script with the contents of its string literals and its spacing left out."""
    return " ".join(STRING.sub('""', script).split())


def digest(text: str) -> str:
    """The CSP source that allows exactly ``text``."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"


def script_sources(host: str, base_url: str) -> list[str]:
    """The sources of the scripts a page of the server at ``host`` and ``base_url`` may run."""
    if not HOST.fullmatch(host):
        return []
    base = "/" + base_url.strip("/") + "/" if base_url.strip("/") else "/"
    return [f"{host}{base}{path}" for path in SCRIPT_PATHS]


def _template_files() -> list[Path]:
    """The page templates of the installed Jupyter packages, and JupyterLab's built page."""
    folders = [Path(spec.origin).parent / "templates" for spec in map(
        importlib.util.find_spec, TEMPLATE_PACKAGES) if spec is not None and spec.origin]
    files = [p for folder in folders for p in sorted(folder.rglob("*"))
             if p.suffix in (".html", ".tpl", ".j2")]
    return files + [p for p in (Path(d) / "static" / "index.html" for d in jupyter_path("lab"))
                    if p.is_file()]


class Policy:
    """The shapes of the templates' inline scripts and their fixed event handlers."""

    def __init__(self, templates: list[Path] | None = None, base_url: str = "/") -> None:
        self.base_url = base_url
        texts = [p.read_text(encoding="utf-8", errors="replace")
                 for p in (_template_files() if templates is None else templates)]
        self.shapes = {shape(script) for text in texts for script in _inline_scripts(text)}
        handlers = {h for text in texts for h in HANDLER.findall(text)}
        self.handlers = sorted(digest(handler) for handler in handlers)

    def allowed(self, page: str) -> list[str]:
        """The hashes of the inline scripts of ``page`` to run: the first of each known shape."""
        seen, allowed = set(), []
        for script in _inline_scripts(page):
            form = shape(script)
            if form in self.shapes and form not in seen:
                seen.add(form)
                allowed.append(digest(script))
        return allowed

    def header(self, path: str, page: str | None, host: str) -> str:
        """The policy for the response to ``path`` at ``host`` whose body is ``page`` (None:
        not an HTML page). JupyterLab compiles its settings' schemas into functions (ajv):
        outside Formgrader, the page's own scripts may evaluate strings."""
        hashes = sorted(set(self.allowed(page))) if page else []
        evaluate = [] if FORMGRADER in path else ["'unsafe-eval'"]
        sources = " ".join([*script_sources(host, self.base_url), *evaluate, "'unsafe-hashes'",
                            *self.handlers, *hashes])
        return f"script-src {sources}; {FIXED}"


def transform(policy: Policy) -> type[OutputTransform]:
    """A tornado output transform that adds ``policy`` to every response."""

    class ContentSecurityPolicy(OutputTransform):
        def __init__(self, request: HTTPServerRequest) -> None:
            super().__init__(request)
            self.request = request

        def transform_first_chunk(self, status_code: int, headers: HTTPHeaders, chunk: bytes,
                                  finishing: bool) -> tuple[int, HTTPHeaders, bytes]:
            if status_code == 304:   # the browser keeps the policy it got with the same page
                return status_code, headers, chunk
            page = None
            if finishing and headers.get("Content-Type", "").startswith("text/html"):
                page = chunk.decode("utf-8", errors="replace")
            headers.add("Content-Security-Policy", policy.header(self.request.path, page,
                                                                self.request.host))
            return status_code, headers, chunk

    return ContentSecurityPolicy


def _load_jupyter_server_extension(serverapp) -> None:
    """Put the policy before any other transform (gzip would hide the page from it)."""
    serverapp.web_app.transforms.insert(0, transform(Policy(base_url=serverapp.base_url)))
    serverapp.log.info("autograder: Content-Security-Policy on every response (scripts from %s)",
                       ", ".join(SCRIPT_PATHS))


def _jupyter_server_extension_points() -> list[dict]:
    return [{"module": "autograder.pipeline.term.csp"}]
