"""No byte a student wrote is script, style or a page in the instructor's origin.

A Jupyter server extension (``autograder.pipeline.term.as_data``, in
``hub/instructor/jupyter_server_config.json``, which ``make lab`` and the hub's instructor
server read). A student's bytes reach the instructor's server in the student folders of the
course (``submitted/``, ``autograded/``, ``feedback/``, ``downloaded/`` and an exchange kept
there, by name or the folder ``MINITORCH_EXCHANGE`` names); Jupyter serves them at ``files/`` (as ``application/javascript``, ``text/html``,
``image/svg+xml``: a ``<script src>`` in any page of the origin ran them with the
instructor's session), ``view/`` and ``nbconvert/``, Formgrader at
``formgrader/submissions/<id>/<file>``. Here, for every request:

- asked for as a script, a style, a worker or a worklet (``Sec-Fetch-Dest``, which the browser
  sets and no page can), any file of the course is refused (403) before a handler runs: no
  page of the server loads one that way (its scripts come from its static paths, ``csp``);
  a student file asked for as a frame, an embed or an object is refused too;
- ``view/`` and ``nbconvert/`` of a student file answer with a redirect to its ``files/``;
- a student file is answered as data: ``text/plain`` if its type is text, script, markup or
  SVG, raster images as they are, anything else ``application/octet-stream`` as a download;
  always ``X-Content-Type-Options: nosniff`` and a policy ``sandbox; default-src 'none'``.

A browser without ``Sec-Fetch-Dest`` (Chromium and Firefox send it since 2020, Safari since
16.4) still gets the student's script as text, which with ``nosniff`` it never runs.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from urllib.parse import unquote

from tornado.httputil import HTTPHeaders, HTTPServerRequest
from tornado.routing import Matcher, Rule
from tornado.web import OutputTransform, RequestHandler

from autograder.pipeline.term.exchange import exchange

STUDENT_FOLDERS = frozenset({"submitted", "autograded", "feedback", "downloaded", "exchange",
                             "inbound", "outbound"})
ACTIVE = frozenset({"script", "style", "worker", "sharedworker", "serviceworker", "audioworklet",
                    "paintworklet", "xslt"})
FRAMES = frozenset({"iframe", "frame", "embed", "object", "fencedframe"})
ROUTES = re.compile(r"(?P<route>files|view)/(?P<path>.*)"
                    r"|(?P<converted>nbconvert)/[^/]+/(?P<notebook>.*)"
                    r"|formgrader/submissions/(?!components/)(?P<submission>[^/]+/.+)")
RASTER = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp", "image/avif"})
TEXT = re.compile(r"text/|application/(javascript|ecmascript|json|xml|xhtml)|.*\+(json|xml)$"
                  r"|image/svg")
SANDBOX = "sandbox; default-src 'none'"


@dataclass(frozen=True)
class Served:
    """A request for a file of the course: where it goes (``files``, ``view``, ``nbconvert``,
    ``submission``), the file's path in the server's root, and whether a student wrote it."""

    route: str
    path: str
    student: bool


class Course:
    """Which requests are for which files, for a server at ``base_url`` serving ``root``."""

    def __init__(self, base_url: str, root: str, exchange: str | None = None) -> None:
        self.base_url = "/" + base_url.strip("/") + "/" if base_url.strip("/") else "/"
        self.root = os.path.realpath(root)
        self.exchange = os.path.realpath(exchange) if exchange else None

    def served(self, url_path: str) -> Served | None:
        """The file ``url_path`` asks for, or None if it asks for none."""
        if not url_path.startswith(self.base_url):
            return None
        found = ROUTES.fullmatch(url_path[len(self.base_url):])
        if found is None:
            return None
        if found["submission"]:
            return Served("submission", found["submission"], True)
        route = found["route"] or found["converted"]
        path = unquote(found["path"] if found["route"] else found["notebook"])
        return Served(route, path, self.student(path))

    def student(self, path: str) -> bool:
        """Whether ``path`` (in the server's root) lies in a folder a student's bytes reach:
        by its name, or by where it leads on disk; a path that climbs out counts as one."""
        parts = [p for p in PurePosixPath(path).parts if p not in ("/", ".")]
        if ".." in parts or STUDENT_FOLDERS & set(parts):
            return True
        real = os.path.realpath(os.path.join(self.root, *parts))
        inside = os.path.relpath(real, self.root).split(os.sep)
        in_exchange = self.exchange is not None and (
            real == self.exchange or real.startswith(self.exchange + os.sep))
        return inside[0] == ".." or in_exchange or bool(STUDENT_FOLDERS & set(inside))


def refused(request: HTTPServerRequest, served: Served | None) -> bool:
    """Whether ``request`` asks for a file of the course as something a page would run."""
    destination = request.headers.get("Sec-Fetch-Dest", "").lower()
    return served is not None and (destination in ACTIVE
                                   or (served.student and destination in FRAMES))


class RefusedHandler(RequestHandler):
    """403 for any method, with a line that says why."""

    def prepare(self) -> None:
        self.set_status(403)
        self.set_header("Content-Type", "text/plain; charset=utf-8")
        self.finish("Refused: a file of the course is never loaded as a script, a style, a "
                    "worker or (a student's) a frame in the instructor's server.\n")


class AsFileHandler(RequestHandler):
    """A redirect from ``view/`` or ``nbconvert/`` of a student file to its ``files/``."""

    def initialize(self, course: Course) -> None:
        self.course = course

    def prepare(self) -> None:
        served = self.course.served(self.request.path)
        self.redirect(self.course.base_url + "files/" + "/".join(
            p for p in served.path.split("/") if p))


class Requests(Matcher):
    """Matches the requests ``wanted(request, served)`` picks among those for course files."""

    def __init__(self, course: Course, wanted) -> None:
        self.course, self.wanted = course, wanted

    def match(self, request: HTTPServerRequest) -> dict | None:
        return {} if self.wanted(request, self.course.served(request.path)) else None


def _viewed(request: HTTPServerRequest, served: Served | None) -> bool:
    return served is not None and served.student and served.route in ("view", "nbconvert")


def as_data(headers: HTTPHeaders) -> None:
    """Make a response's headers those of data: text, a raster image, or a download."""
    kind = headers.get("Content-Type", "").split(";")[0].strip().lower()
    if TEXT.match(kind):
        headers["Content-Type"] = "text/plain; charset=utf-8"
    elif kind not in RASTER:
        headers["Content-Type"] = "application/octet-stream"
        if not headers.get("Content-Disposition", "").startswith("attachment"):
            headers["Content-Disposition"] = "attachment"
    headers["X-Content-Type-Options"] = "nosniff"
    headers.add("Content-Security-Policy", SANDBOX)


def transform(course: Course) -> type[OutputTransform]:
    """A tornado output transform that answers every student file as data."""

    class StudentFilesAsData(OutputTransform):
        def __init__(self, request: HTTPServerRequest) -> None:
            super().__init__(request)
            self.served = course.served(request.path)

        def transform_first_chunk(self, status_code: int, headers: HTTPHeaders, chunk: bytes,
                                  finishing: bool) -> tuple[int, HTTPHeaders, bytes]:
            if self.served is not None and self.served.student:
                as_data(headers)
            return status_code, headers, chunk

    return StudentFilesAsData


def _load_jupyter_server_extension(serverapp) -> None:
    """The two rules before every route of the server, the transform before gzip's."""
    course = Course(serverapp.base_url, serverapp.root_dir, os.environ.get(exchange.VARIABLE))
    rules = serverapp.web_app.default_router.rules
    rules.insert(0, Rule(Requests(course, refused), RefusedHandler))
    rules.insert(1, Rule(Requests(course, _viewed), AsFileHandler, {"course": course}))
    serverapp.web_app.transforms.insert(0, transform(course))
    serverapp.log.info("autograder: student files served as data, course files never as scripts")


def _jupyter_server_extension_points() -> list[dict]:
    return [{"module": "autograder.pipeline.term.as_data"}]
