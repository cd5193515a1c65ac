"""Issue 46: no student byte is script, style or a page in the instructor's origin, and
Formgrader reflects nothing.

The attack: mallory hands in ``helper.js`` with her notebook (collect copied every safely named
file into ``submitted/``); her notebook links to
``formgrader/manage_submissions/<script src="/files/submitted/mallory/01_setup/helper.js">``
(nbgrader's templates wrote the id unescaped, and the script policy's ``'self'`` took in
``/files/``, which served her file as ``application/javascript``). Here the same file lies under
``submitted/``, ``autograded/`` and ``feedback/``, and the instructor's JupyterLab (``make
lab``'s configuration) is opened in Chromium at each of the five reflecting routes the issue
names, the script fetched from each folder and from Formgrader's submission files. Then, over
HTTP: every route of the server with markup in each path part; each student file asked for as
a script, style, worker or frame; each served as text or a download. One server for the module.
"""
from __future__ import annotations

import base64
import re
import shutil
from urllib.parse import quote

import pytest
import requests
import xss
from browser import launch, missing_browser, require
from instructor_lab import routes, running
from nbgrader.api import Gradebook

from autograder.pipeline.term import csp

pytestmark = pytest.mark.pipeline
UNIT, ATTACKER = "01_setup", xss.ATTACKER
STUDENT_FOLDERS = ("submitted", "autograded", "feedback")
DROP = "drop"   # an exchange an instructor set inside the course (MINITORCH_EXCHANGE)
HELPER = f"fetch('{xss.BEACON}'+document.currentScript.dataset.from,{{mode:'no-cors'}})"
PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGBgAAAABQAB"
                       "pfZFQAAAAABJRU5ErkJggg==")
FILES = {"helper.js": HELPER.encode(), "page.html": f"<script>{HELPER}</script>".encode(),
         "picture.svg": f'<svg xmlns="http://www.w3.org/2000/svg"><script>{HELPER}</script>'
                        "</svg>".encode(), "plot.png": PNG, "answers.zip": b"PK\x05\x06" + b"\0" * 18}
AS_TEXT = ("helper.js", "page.html", "picture.svg")
# The five routes the issue found reflecting their ids, each with {} for the markup.
REFLECTING = ("formgrader/manage_submissions/{}", "formgrader/gradebook/{}",
              "formgrader/gradebook/" + UNIT + "/{}", "formgrader/manage_students/{}",
              "formgrader/manage_students/" + ATTACKER + "/{}")
MARK = "\"'><i class=reflected>"
ACTIVE = ("script", "style", "worker", "sharedworker", "serviceworker", "audioworklet",
          "paintworklet", "xslt")
FRAMES = ("iframe", "frame", "embed", "object")


@pytest.fixture(scope="module")
def course(tmp_path_factory, isolated_jupyter, new_course):
    """Unit 01; mallory's files in each student folder, a submission of hers in the gradebook
    (Formgrader serves its files from ``autograded/``), and a script of the instructor's own."""
    root = tmp_path_factory.mktemp("origin") / "course"
    new_course(root, [UNIT])
    for where in [root / folder / ATTACKER / UNIT for folder in STUDENT_FOLDERS] + [root / DROP]:
        where.mkdir(parents=True)
        for name, data in FILES.items():
            (where / name).write_bytes(data)
    shutil.copy(root / "release" / UNIT / f"{UNIT}.ipynb", root / "submitted" / ATTACKER / UNIT)
    (root / "notes").mkdir()
    (root / "notes" / "own.js").write_text("console.log('the instructor wrote this');")
    (root / "notes" / "beacon.js").write_text(HELPER)
    (root / "notes" / "page.html").write_text(
        '<p>notes</p><script data-from="own-page" src="/files/notes/beacon.js"></script>')
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        gb.add_student(ATTACKER)
        submission = gb.add_submission(UNIT, ATTACKER)
        notebook_id = submission.notebooks[0].id
    return root, notebook_id


@pytest.fixture(scope="module")
def lab(course, tmp_path_factory):
    log = tmp_path_factory.mktemp("lab") / "lab.log"
    with running(course[0], log, {"MINITORCH_EXCHANGE": str(course[0] / DROP)}) as server:
        yield server


@pytest.fixture(scope="module")
def session(lab) -> requests.Session:
    http = requests.Session()
    http.headers["Authorization"] = f"token {lab.token}"
    return http


def _sources(notebook_id: str) -> dict[str, str]:
    """Where mallory's script is, by the beacon's name for it."""
    found = {folder: f"/files/{folder}/{ATTACKER}/{UNIT}/helper.js" for folder in STUDENT_FOLDERS}
    found["submission-files"] = f"/formgrader/submissions/{notebook_id}/helper.js"
    return found


def _links(notebook_id: str) -> dict[str, str]:
    """The links mallory's notebook could hold: each reflecting route, with a script element
    for each place her script lies, by beacon name."""
    links = {}
    for route in REFLECTING:
        for name, source in _sources(notebook_id).items():
            tag = f"{route.split('/')[1]}-{route.count('/')}-{name}"
            element = f'<script data-from="{tag}" src="{source}"></script>'
            links[tag] = route.format(quote(element, safe=""))
    return links


@pytest.fixture(scope="module")
def clicked(course, lab):
    """The instructor, logged in to JupyterLab, follows each link: the beacons that fired and
    the pages that showed the markup as elements."""
    require(missing_browser())
    from playwright.sync_api import sync_playwright
    seen = {"fired": [], "elements": [], "scripts": set(), "refused": []}
    with sync_playwright() as playwright:
        browser = launch(playwright)
        context = browser.new_context()
        context.route("**/__pwned__/**", lambda route: (
            seen["fired"].append(route.request.url.rsplit("/", 1)[1]), route.fulfill(status=204)))
        page = context.new_page()
        page.on("request", lambda r: seen["scripts"].add(r.url.split("?")[0])
                if r.resource_type == "script" else None)
        page.on("console", lambda m: seen["refused"].append((page.url, m.text))
                if "Content Security Policy" in m.text else None)
        page.goto(f"{lab.url}/lab?token={lab.token}")
        page.wait_for_selector(".jp-LabShell", timeout=120_000)
        page.goto(f"{lab.url}/formgrader/manage_students")
        page.locator("td", has_text=ATTACKER).first.wait_for()
        seen["pages"] = list(seen["refused"])
        page.goto(f"{lab.url}/files/notes/page.html", referer=f"{lab.url}/lab")
        page.wait_for_load_state("networkidle")
        for tag, link in _links(course[1]).items():
            page.goto(f"{lab.url}/{link}")
            page.wait_for_load_state("networkidle")
            if page.locator(f"script[data-from='{tag}']").count():
                seen["elements"].append(tag)
        browser.close()
    return seen


@pytest.mark.parametrize("route", REFLECTING)
@pytest.mark.parametrize("source", [*STUDENT_FOLDERS, "submission-files"])
def test_a_script_handed_in_runs_from_no_formgrader_link(clicked, route, source):
    tag = f"{route.split('/')[1]}-{route.count('/')}-{source}"
    assert tag not in clicked["fired"]
    assert tag not in clicked["elements"]


def test_the_instructors_pages_load_every_script_they_need(clicked):
    """JupyterLab and Formgrader, under the policy: nothing refused."""
    assert clicked["pages"] == []


@pytest.mark.parametrize("path", csp.SCRIPT_PATHS)
def test_each_script_path_is_used_and_serves_no_course_file(lab, session, clicked, path):
    assert any(url.startswith(f"{lab.url}/{path}") for url in clicked["scripts"])
    for climb in ("../" * 3, "%2e%2e/" * 3, "..%2f" * 3):
        answer = session.get(f"{lab.url}/{path}{climb}notes/beacon.js",
                             headers={"Sec-Fetch-Dest": "script"})
        assert HELPER not in answer.text


def test_a_script_of_the_course_is_refused_by_the_policy_too(clicked):
    """The instructor's own page in files/ (a student's is text) asks for a script of the
    course: the policy refuses it before the request (and the server would refuse it)."""
    assert "own-page" not in clicked["fired"]
    assert any("beacon.js" in text and "script-src" in text for _, text in clicked["refused"]), \
        (clicked["refused"], clicked["fired"])


def _url(pattern: str) -> str:
    """A path of ``pattern`` (a route's regular expression) with ``MARK`` in each group."""
    pattern = pattern.lstrip("^").rstrip("$")
    out, depth, start = [], 0, 0
    for at, char in enumerate(pattern):
        if char == "(" and (at == 0 or pattern[at - 1] != "\\"):
            if depth == 0:
                out.append(pattern[start:at])
                start = at
            depth += 1
        elif char == ")" and pattern[at - 1] != "\\":
            depth -= 1
            if depth == 0:
                group = pattern[start:at + 1]
                slash = "/" if "/[^/]" in group or group.startswith("(/") else ""
                out.append(slash + quote(MARK, safe=""))
                start = at + 1
    out.append(pattern[start:])
    path = re.sub(r"\\(.)", r"\1", "".join(out).replace("/?", "/").replace(".*", ""))
    return path if path.startswith("/") else "/" + path


def test_no_route_shows_markup_from_its_path(course, lab, session):
    """Every route of the server (Jupyter's, JupyterLab's, Notebook's, nbgrader's), with the
    markup in each part of its path: no page holds it as markup."""
    shown = []
    patterns = [p for p in routes(course[0]) if "(" in p]
    assert len(patterns) > 60 and any("manage_submissions" in p for p in patterns)
    for pattern in patterns:
        answer = session.get(lab.url + _url(pattern), timeout=30)
        if answer.headers.get("Content-Type", "").startswith("text/html") and \
                "<i class=reflected>" in answer.text:
            shown.append(pattern)
    assert shown == [], "\n".join(shown)


def test_formgrader_escapes_what_it_writes(lab, session):
    """An id the 404 rule lets through (no markup) still reaches the page escaped."""
    student = "o'neil&co"
    page = session.get(f"{lab.url}/formgrader/manage_students/{quote(student)}").text
    assert "o&#39;neil&amp;co" in page and "o'neil&co" not in page


def test_formgraders_api_answers_as_json(course, lab, session):
    api = [p for p in routes(course[0]) if "/formgrader/api/" in p]
    assert len(api) > 20
    answers = {p: session.get(lab.url + _url(p), timeout=30).headers for p in api}
    assert {p: h.get("Content-Type") for p, h in answers.items()
            if not h.get("Content-Type", "").startswith("application/json")} == {}
    assert all("sandbox" in h.get("Content-Security-Policy", "") for h in answers.values())


def _student_files(notebook_id: str) -> list[str]:
    return [*(f"files/{folder}/{ATTACKER}/{UNIT}/" for folder in STUDENT_FOLDERS),
            f"formgrader/submissions/{notebook_id}/", f"files/{DROP}/"]


@pytest.mark.parametrize("dest", [*ACTIVE, *FRAMES])
def test_a_student_file_asked_for_as_script_style_worker_or_frame_is_refused(course, lab, session,
                                                                             dest):
    for where in _student_files(course[1]):
        answer = session.get(f"{lab.url}/{where}helper.js", headers={"Sec-Fetch-Dest": dest})
        assert answer.status_code == 403, where
        assert HELPER not in answer.text


@pytest.mark.parametrize("dest", ACTIVE)
def test_no_file_of_the_course_is_a_script_or_style_not_even_the_instructors(lab, session, dest):
    answer = session.get(f"{lab.url}/files/notes/own.js", headers={"Sec-Fetch-Dest": dest})
    assert answer.status_code == 403
    assert session.get(f"{lab.url}/files/notes/own.js").status_code == 200


@pytest.mark.parametrize("name", FILES)
def test_a_student_file_is_served_as_text_or_a_download(course, lab, session, name):
    for where in _student_files(course[1]):
        answer = session.get(f"{lab.url}/{where}{name}", headers={"Sec-Fetch-Dest": "document"})
        kind = answer.headers["Content-Type"]
        assert answer.status_code == 200 and answer.content == FILES[name], where
        assert answer.headers["X-Content-Type-Options"] == "nosniff"
        assert "sandbox" in answer.headers["Content-Security-Policy"]
        if name in AS_TEXT:
            assert kind.startswith("text/plain"), (where, kind)
        elif name == "plot.png":
            assert kind == "image/png"
        else:
            assert kind == "application/octet-stream", (where, kind)
            assert answer.headers["Content-Disposition"].startswith("attachment")


@pytest.mark.parametrize("route, name", [("view", "page.html"), ("nbconvert/html", f"{UNIT}.ipynb")])
def test_a_student_file_viewed_or_converted_is_its_text(lab, session, route, name):
    where = f"submitted/{ATTACKER}/{UNIT}/{name}"
    answer = session.get(f"{lab.url}/{route}/{where}")
    assert answer.url == f"{lab.url}/files/{where}"
    assert answer.headers["Content-Type"].startswith("text/plain")
