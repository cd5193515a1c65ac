"""Issue 32 in a real browser: what a student hands in runs no script where the instructor looks.

One scratch course of unit 11, graded by ``python -m autograder grade``'s code: ada hands in an
honest reflection (math, a table) with the reference solution; mallory (``xss``) one script
per vector in her reflection, her own markdown cells and her outputs; a third student's id is
an ``<img onerror>``; eve's graded notebook is replaced by the vectors as grading left them
before ``inert`` (nothing cleaned). After the reflections are marked by hand (8 and 5), the instructor's
JupyterLab, with Formgrader and the course's server configuration (``hub/instructor``, as
``make lab`` loads it), is opened in Chromium: Manual Grading, both submission views (the
link clicked), the student and submission pages, mallory's notebook in JupyterLab, her
feedback page and the class report. No vector may reach its beacon, no grade may move, and
Formgrader must still grade ada's reflection by hand.

Skips (printing why) without Chromium or playwright, except under CI=true, where that fails.
"""
from __future__ import annotations

import shutil
from pathlib import Path
from urllib.parse import quote

import nbformat
import pytest
import xss
from browser import launch, missing_browser, require, score_by_hand, screenshot
from instructor_lab import running
from nbgrader.api import Gradebook

from autograder.pipeline.ledger import manual
from autograder.pipeline.term import feedback, report
from autograder.pipeline.demo.scenario import TIMESTAMP
from autograder.pipeline.ledger.grade import grade
from autograder.pipeline.job.job import Limits

pytestmark = pytest.mark.pipeline
UNIT, HONEST, EARLIER = xss.UNIT, "ada", "eve"
BEFORE = "before-"   # the beacons of eve's notebook, graded before inert.py (see ``course``)
REFLECTION = ("I chose a 784-128-10 network with Adam, $\\eta = 10^{-3}$, because "
              "$p(y \\mid x) < 1$ everywhere.\n\n| setting | accuracy |\n|---|---|\n"
              "| Adam | 0.95 |\n")
PAGES = ("formgrader/gradebook/{unit}/{unit}", "formgrader/manage_students",
         "formgrader/manage_students/{attacker}", "formgrader/manage_students/{attacker}/{unit}",
         "formgrader/manage_submissions/{unit}", "formgrader/manage_students/{student_id}",
         "formgrader/manage_students/{student_id}/{unit}")


def _hand_in(root: Path, student: str, nb) -> None:
    folder = root / "submitted" / student / UNIT
    folder.mkdir(parents=True)
    nbformat.write(nb, str(folder / f"{UNIT}.ipynb"))
    (folder / "timestamp.txt").write_text(TIMESTAMP)


def _honest(source: Path):
    nb = nbformat.read(str(source), as_version=4)
    task = next(i for i, c in enumerate(nb.cells)
                if c.metadata.get("nbgrader", {}).get("grade_id") == "reflection")
    nb.cells[task + 1].source = REFLECTION
    return nb


def _grades(root: Path) -> dict[tuple[str, str], float | None]:
    """Every grade of the gradebook: (student, grade id) -> its score."""
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        return {(s.student.id, g.name): g.score for s in gb.find_assignment(UNIT).submissions
                for nb in s.notebooks for g in nb.grades}


@pytest.fixture(scope="module")
def course(tmp_path_factory, isolated_jupyter, new_course):
    root = tmp_path_factory.mktemp("inert") / "course"
    new_course(root, [UNIT])
    source = root / "source" / UNIT / f"{UNIT}.ipynb"
    _hand_in(root, HONEST, _honest(source))
    _hand_in(root, xss.ATTACKER, xss.notebook(source))
    _hand_in(root, xss.student_id(), _honest(source))
    _hand_in(root, EARLIER, _honest(source))
    summary = grade(root, [UNIT], workers=2, limits=Limits(cell_timeout=30), progress=False)
    # as a notebook graded before this defence (or by `nbgrader autograde` by hand) lies there
    nbformat.write(xss.graded_before(source, BEFORE),
                   str(root / "autograded" / EARLIER / UNIT / f"{UNIT}.ipynb"))
    marks = root / "marks.csv"
    marks.write_text(f"student,assignment,grade_id,score,comment\n{HONEST},{UNIT},reflection,8,\n"
                     f"{xss.ATTACKER},{UNIT},reflection,5,\n", encoding="utf-8")
    manual.apply(root, marks)
    feedback.generate(root, [UNIT], workers=2, students=[HONEST, xss.ATTACKER, EARLIER])
    report.write_report(root)
    return root, summary


@pytest.fixture(scope="module")
def server(course, tmp_path_factory):
    """The instructor's JupyterLab at the course root, configured as ``make lab`` does."""
    require(missing_browser())
    with running(course[0], tmp_path_factory.mktemp("lab") / "lab.log") as lab:
        yield lab


def _submission_ids(root: Path) -> dict[str, str]:
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        return {s.student.id: s.notebooks[0].id for s in gb.find_assignment(UNIT).submissions}


def _visit(page, url: str) -> None:
    page.goto(url)
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(500)


def _formgrader(page, base: str, ids: dict[str, str], seen: dict) -> None:
    """Every Formgrader page a student's work or id reaches; each submission's policy and
    text; the script link clicked."""
    names = {"unit": UNIT, "attacker": xss.ATTACKER, "student_id": quote(xss.student_id(), safe="")}
    for path in PAGES:
        _visit(page, f"{base}/{path.format(**names)}")
    for student in (HONEST, xss.ATTACKER, EARLIER):
        response = page.goto(f"{base}/formgrader/submissions/{ids[student]}/")
        page.wait_for_load_state("networkidle")
        seen[student] = {"policy": response.headers.get("content-security-policy", ""),
                         "text": page.locator("body").inner_text(),
                         "plots": page.locator("img[src^='data:image/png']").count()}
        link = page.locator("a", has_text=xss.LINK_TEXT)
        if link.count():
            link.first.click()
            page.wait_for_timeout(1000)


def _elsewhere(page, base: str, root: Path) -> None:
    """Mallory's notebook in JupyterLab, her and eve's feedback pages, the class report."""
    _visit(page, f"{base}/lab/tree/autograded/{xss.ATTACKER}/{UNIT}/{UNIT}.ipynb")
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=60_000)
    page.wait_for_timeout(3000)   # widgets restore after the notebook opens
    for html in (root / "feedback" / xss.ATTACKER / UNIT / f"{UNIT}.html",
                 root / "feedback" / EARLIER / UNIT / f"{UNIT}.html",
                 root / "reports" / "class-report.html"):
        _visit(page, html.as_uri())
    screenshot(page, "class-report")


def _grade_by_hand(page, base: str, ids: dict[str, str]) -> None:
    """The instructor gives ada's reflection 9 in Formgrader's submission view."""
    page.goto(f"{base}/formgrader/submissions/{ids[HONEST]}/")
    score_by_hand(page, "reflection", "9")


@pytest.fixture(scope="module")
def visits(course, server):
    """Open every page as the instructor, then grade ada's reflection by hand. What is kept:
    the vectors whose beacon was asked for, the grades before, after the visits and after the
    hand grading, the console's CSP reports by page, and what each submission view showed."""
    from playwright.sync_api import sync_playwright
    root, (base, token, _) = course[0], server
    seen = {"before": _grades(root), "fired": [], "reports": [], "lab": ""}
    ids = _submission_ids(root)
    with sync_playwright() as playwright:
        browser = launch(playwright)
        context = browser.new_context(viewport={"width": 1400, "height": 900})
        context.route("**/__pwned__/**", lambda route: (
            seen["fired"].append(route.request.url.rsplit("/", 1)[1]), route.fulfill(status=204)))
        page = context.new_page()
        page.on("console", lambda m: seen["reports"].append((page.url, m.text))
                if "Content Security Policy" in m.text else None)
        response = page.goto(f"{base}/lab?token={token}")
        seen["lab"] = response.headers.get("content-security-policy", "")
        page.wait_for_selector(".jp-LabShell", timeout=120_000)
        _formgrader(page, base, ids, seen)
        _elsewhere(page, base, root)
        seen["after"] = _grades(root)
        _grade_by_hand(page, base, ids)
        browser.close()
    seen["graded"], seen["ids"] = _grades(root), ids
    return seen


@pytest.mark.parametrize("vector", [*xss.MARKDOWN_VECTORS, *xss.OUTPUT_VECTORS, "student-id"])
def test_no_script_of_the_student_runs_in_the_instructors_pages(visits, vector):
    assert vector not in visits["fired"], visits["fired"]


@pytest.mark.parametrize("vector", [*xss.MARKDOWN_VECTORS, *xss.OUTPUT_VECTORS])
def test_a_notebook_graded_before_this_defence_runs_no_script_either(visits, vector):
    """Eve's notebook was never cleaned: in Formgrader the policy stops its scripts, in
    feedback nbgrader's ``MakeInert`` preprocessor cleans it."""
    assert BEFORE + vector not in visits["fired"], visits["fired"]


def test_no_grade_moved(visits):
    assert visits["after"] == visits["before"]
    assert visits["before"][(HONEST, "reflection")] == 8
    assert visits["before"][(xss.ATTACKER, "reflection")] == 5


def test_a_student_id_holding_html_is_refused_and_never_reaches_the_gradebook(course):
    root, summary = course
    assert "REFUSED 1 submission(s) with unsafe names" in str(summary), str(summary)
    assert "the student id" in str(summary) and "<img src=x onerror=" in str(summary)
    assert {student for student, _ in _grades(root)} == {HONEST, xss.ATTACKER, EARLIER}


def test_the_honest_reflection_reads_as_written_and_is_graded_by_hand(visits):
    shown = visits[HONEST]
    assert "I chose a 784-128-10 network with Adam" in shown["text"]
    assert "$\\eta = 10^{-3}$" in shown["text"] and "$p(y \\mid x) < 1$" in shown["text"]
    assert "setting\taccuracy" in shown["text"] and "Adam\t0.95" in shown["text"]   # the table
    assert shown["plots"] >= 1 and visits[xss.ATTACKER]["plots"] >= 1     # matplotlib's PNGs
    assert visits["graded"][(HONEST, "reflection")] == 9


def test_formgrader_and_lab_run_under_the_policy(visits):
    """Formgrader's pages get no 'unsafe-inline' nor 'unsafe-eval'; the only script the policy
    stopped on them is MathJax from cdnjs; JupyterLab loaded (it needs 'unsafe-eval')."""
    for student in (HONEST, xss.ATTACKER, EARLIER):
        policy = visits[student]["policy"]
        assert "/formgrader/static/ 'unsafe-hashes'" in policy and "unsafe-inline" not in policy
        assert "unsafe-eval" not in policy
    assert "/formgrader/static/ 'unsafe-eval'" in visits["lab"]
    pages = [f"/formgrader/submissions/{visits['ids'][s]}/" for s in (HONEST, xss.ATTACKER)]
    stopped = [(url, text) for url, text in visits["reports"]
               if url.endswith("/manage_students") or any(url.endswith(p) for p in pages)]
    assert all("cdnjs" in text for _, text in stopped), stopped
