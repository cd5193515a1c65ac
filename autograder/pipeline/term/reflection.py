"""Formgrader writes no part of its URL into a page as markup, and its API answers as JSON.

A Jupyter server extension (``autograder.pipeline.term.reflection``, in
``hub/instructor/jupyter_server_config.json``, which ``make lab`` and the hub's instructor
server read). nbgrader 0.9.6 renders its pages with a jinja environment without autoescape:
the ids in ``manage_submissions/<a>``, ``gradebook/<a>[/<n>]``, ``manage_students/<s>[/<a>]``
went into the page as they were (``var assignment_id = "{{ assignment_id }}"`` and a
breadcrumb), so a link to one with a ``<script>`` in it ran in the instructor's origin. Here:

- a Formgrader page whose path holds markup or a string's end (``< > " ` \\``, as typed or
  percent-encoded) is answered 404 before nbgrader's handler runs (no id the course accepts
  holds one: ``autograder.pipeline.names``);
- once every extension is loaded, nbgrader's environment escapes what it writes (autoescape):
  a value is text wherever it lands, inside a script's string too (``&#34;`` ends none);
- every answer of ``formgrader/api/`` says ``application/json`` (nbgrader's said
  ``text/html``, so that an id it repeats in an error could be read as a page), except to
  Formgrader's own requests (``Sec-Fetch-Dest: empty``, a ``fetch``), whose code parses the
  text itself (``JSON.parse`` of what jQuery already parsed as JSON stopped every button); each
  answer is ``nosniff`` and sandboxed, so none is ever a page of the origin.
"""
from __future__ import annotations

import re

from tornado.httputil import HTTPHeaders, HTTPServerRequest
from tornado.routing import PathMatches, Rule
from tornado.web import OutputTransform, RequestHandler

MARKUP = r"""(?:[<>"`\\]|%3[CcEe]|%22|%60|%5[Cc])"""
JSON = "application/json; charset=UTF-8"


class NotFoundHandler(RequestHandler):
    """404 for any method, naming no part of the path."""

    def prepare(self) -> None:
        self.set_status(404)
        self.set_header("Content-Type", "text/plain; charset=utf-8")
        self.finish("Not found: no Formgrader page has markup in its address.\n")


def pages_with_markup(base_url: str) -> str:
    """The pattern of a Formgrader page (not its API) whose path holds markup."""
    return re.escape(base_url) + f"formgrader/(?!api/).*{MARKUP}.*"


def api_transform(base_url: str) -> type[OutputTransform]:
    """A tornado output transform that labels Formgrader's API answers as JSON."""
    prefix = base_url + "formgrader/api/"

    class FormgraderApiIsJson(OutputTransform):
        def __init__(self, request: HTTPServerRequest) -> None:
            super().__init__(request)
            self.api = request.path.startswith(prefix)
            self.fetched = request.headers.get("Sec-Fetch-Dest", "").lower() == "empty"

        def transform_first_chunk(self, status_code: int, headers: HTTPHeaders, chunk: bytes,
                                  finishing: bool) -> tuple[int, HTTPHeaders, bytes]:
            if self.api:
                if not self.fetched:
                    headers["Content-Type"] = JSON
                headers["X-Content-Type-Options"] = "nosniff"
                headers.add("Content-Security-Policy", "sandbox; default-src 'none'")
            return status_code, headers, chunk

    return FormgraderApiIsJson


def _load_jupyter_server_extension(serverapp) -> None:
    base_url = serverapp.base_url if serverapp.base_url.endswith("/") else serverapp.base_url + "/"
    serverapp.web_app.default_router.rules.insert(
        0, Rule(PathMatches(pages_with_markup(base_url)), NotFoundHandler))
    serverapp.web_app.transforms.insert(0, api_transform(base_url))


async def _start_jupyter_server_extension(serverapp) -> None:
    """nbgrader's environment exists once its extension is loaded (after this one, by name)."""
    environment = serverapp.web_app.settings.get("nbgrader_jinja2_env")
    if environment is None:
        serverapp.log.warning("autograder: no Formgrader here, nothing to escape")
        return
    environment.autoescape = True
    if environment.cache is not None:
        environment.cache.clear()
    serverapp.log.info("autograder: Formgrader escapes what it writes (autoescape)")


def _jupyter_server_extension_points() -> list[dict]:
    return [{"module": "autograder.pipeline.term.reflection"}]
