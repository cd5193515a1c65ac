"""A term on the course's JupyterHub (``make hub``), driven through the web UI in Chromium.

Alice logs in, fetches unit 01 in the Assignments tab, types her solution, presses Validate
and submits; Bob submits the untouched release. The instructor releases and collects in
Formgrader, grades with ``python -m autograder grade``, generates and releases feedback in
Formgrader; both students fetch feedback and read their scores. Then the hand-graded
reflection of unit 11: Carol writes hers and submits, the instructor grades it in Formgrader's
Manual Grading and sees the total change. Everyone logs in with their own password from the
hub's ``logins.csv``; each student's server runs in its sandbox (``hubs.py`` starts the hub,
``test_hub_attacks.py`` attacks it). A hub set up wrongly refuses to start; with a
certificate it speaks HTTPS.

Skips (printing why) where the hub cannot run (``hubs.missing_hub``), except under CI=true,
where that is a failure.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
import os
import pwd
import time
from contextlib import nullcontext
from pathlib import Path

import nbformat
import pytest
import requests
from browser import free_port, score_by_hand, screenshot, wait_until_up
from hubs import (CAPSTONE, HOST, MINUTE, UNIT, Hub, clean_up, login, processes_of, refusals,
                  start, stop)

pytestmark = pytest.mark.pipeline


def _listed(response) -> bool:
    return "/assignments?course_id=" in response.url


def _assignments(page):
    """The Assignments tab (Nbgrader menu, Assignment List), refreshed, once every list it
    asked for is drawn. The tab loads its lists when it opens, and again on Refresh: a load
    still under way when a button is pressed draws the lists again later (the course's name
    comes first, then the list), and once collapsed the notebooks of a fetched assignment a
    test had just opened, which waited 60 s for a link it could not see."""
    opened = page.locator("#refresh_assignments_list").count()
    with nullcontext() if opened else page.expect_response(_listed, timeout=MINUTE):
        page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").click()
        page.locator(".lm-Menu-itemLabel", has_text="Assignment List").click()
    with page.expect_response(_listed, timeout=MINUTE):
        page.locator("#refresh_assignments_list").click()
    page.wait_for_selector("#released_assignments_list_loading", state="hidden")
    return page


def _fetch(page, unit: str, picture: str | None = None) -> None:
    _assignments(page).locator("#released_assignments_list .list_item", has_text=unit) \
        .locator("button", has_text="Fetch").click()
    page.wait_for_selector(f"#fetched_assignments_list .list_item:has-text('{unit}')")
    if picture:
        screenshot(page, picture)


def _open(page, unit: str) -> None:
    """Open the fetched notebook from the Assignments tab."""
    item = page.locator("#fetched_assignments_list > .list_item", has_text=unit)
    item.locator(".assignment-notebooks-link").click()
    item.locator(".nested_list_item a", has_text=unit).click()
    page.wait_for_selector(".jp-Notebook .jp-Cell")


def _type_into(page, cell, text: str) -> None:
    """Replace a cell's text as a student would, typing into its editor."""
    cell.scroll_into_view_if_needed()
    cell.locator(".cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(text)
    page.keyboard.press("Escape")


def _submit(page, unit: str) -> None:
    page.locator(".lm-TabBar-tabLabel", has_text="Assignments").click()
    page.locator("#fetched_assignments_list > .list_item", has_text=unit) \
        .locator(".item_status button", has_text="Submit").click()
    page.wait_for_selector(f"#submitted_assignments_list .list_item:has-text('{unit}')")


def _solutions(course: Path, unit: str) -> list[str]:
    notebook = nbformat.read(course / "source" / unit / f"{unit}.ipynb", as_version=4)
    return [cell.source for cell in notebook.cells
            if cell.metadata.get("nbgrader", {}).get("solution")]


def _formgrader(chromium, hub: Hub):
    """The instructor's Formgrader, under the script policy of ``hub/instructor/``."""
    page = login(chromium, hub, "instructor")
    response = page.goto(f"{hub.server('instructor')}/formgrader/manage_assignments")
    policy = response.headers["content-security-policy"]
    assert "/user/instructor/formgrader/static/ 'unsafe-hashes'" in policy
    return page


def _row_action(page, unit: str, action: str, done: str, picture: str | None = None) -> None:
    """Click ``action`` (release, collect, generate-feedback, ...) in Formgrader's row of
    ``unit``; its success dialog must say ``done`` (and is saved as ``picture`` for the docs)."""
    page.locator("tr", has_text=unit).locator(f"td.{action} a").click()
    dialog = page.locator("#success-modal, #error-modal")
    dialog.wait_for(timeout=3 * MINUTE)
    text = dialog.inner_text()
    assert dialog.get_attribute("id") == "success-modal" and done in text, text
    if picture:
        screenshot(page, picture)
    dialog.locator("button.close, button[data-dismiss=modal]").first.click()
    dialog.wait_for(state="detached")


def _grade(hub: Hub, unit: str) -> str:
    """The instructor's grading command: ours, sandboxed."""
    done = subprocess.run([sys.executable, "-m", "autograder", "--course", str(hub.course),
                           "grade", unit], env=hub.env, capture_output=True, text=True,
                          timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _feedback_page(page, unit: str, picture: str | None = None) -> str:
    """Fetch Feedback in the Assignments tab, follow "(view feedback)" to the file browser,
    open the page there; its text, once loaded (the viewer's frame starts with an empty
    body: read at once, it once gave '')."""
    _assignments(page).locator("#submitted_assignments_list .list_item", has_text=unit) \
        .locator("button", has_text="Fetch Feedback").click()
    page.locator("#submitted_assignments_list a", has_text="view feedback").first.click()
    page.locator(".jp-DirListing-item", has_text=f"{unit}.html").dblclick()
    body = page.frame_locator(".jp-HTMLViewer iframe").locator("body", has_text="(Score:")
    body.wait_for(timeout=MINUTE)
    if picture:     # the first failed check's message, for the docs
        failure = page.frame_locator(".jp-HTMLViewer iframe").get_by_text("CheckFailure")
        if failure.count():
            failure.first.scroll_into_view_if_needed()
        screenshot(page, picture)
    return body.inner_text()


def _autograde_refused(page, hub: Hub, student: str) -> None:
    """Formgrader's own Autograde (student code in the instructor's server) refuses, names
    our grader and leaves the graded submission as it was."""
    graded = hub.course / "autograded" / student / UNIT
    before = sorted(p.name for p in graded.iterdir())
    page.goto(f"{hub.server('instructor')}/formgrader/manage_submissions/{UNIT}")
    page.locator("tr", has_text=student).locator("td.autograde a").click()
    dialog = page.locator("#error-modal")
    dialog.wait_for()
    assert "python -m autograder grade" in dialog.inner_text()
    screenshot(page, "formgrader-autograde-refused")
    assert sorted(p.name for p in graded.iterdir()) == before


def test_a_term_through_the_hub(hub, chromium):
    alice, bob = login(chromium, hub, "alice"), login(chromium, hub, "bob")
    teacher = _formgrader(chromium, hub)
    _row_action(teacher, UNIT, "release", "released", picture="formgrader-release")

    _fetch(alice, UNIT, picture="student-assignments")
    _open(alice, UNIT)
    for solution in _solutions(hub.course, UNIT):
        _type_into(alice, alice.locator(".jp-CodeCell", has_text="raise NotImplementedError()")
                   .first, solution)
    alice.locator(".jp-Toolbar [title='Validate Assignment']").click()
    result = alice.locator(".jp-Dialog")
    result.wait_for(timeout=3 * MINUTE)
    assert "Success! Your notebook passes all the tests." in result.inner_text()
    screenshot(alice, "student-validate")
    result.locator("button.jp-Dialog-button").last.click()
    _submit(alice, UNIT)

    _fetch(bob, UNIT)
    _submit(bob, UNIT)

    teacher.reload()
    _row_action(teacher, UNIT, "collect", "collected", picture="formgrader-collect")
    summary = _grade(hub, UNIT)
    assert "graded 2 submission(s)" in summary, summary
    _autograde_refused(teacher, hub, "bob")
    teacher.goto(f"{hub.server('instructor')}/formgrader/manage_assignments")
    _row_action(teacher, UNIT, "generate-feedback", "feedback")
    _row_action(teacher, UNIT, "release-feedback", "released")

    assert "10.0 / 10.0" in _feedback_page(alice, UNIT)
    page = _feedback_page(bob, UNIT, picture="student-feedback")
    assert "0.0 / 10.0" in page and "not implemented yet" in page
    assert "BEGIN HIDDEN TESTS" not in page and "check.affine_values" not in page


def test_students_have_no_formgrader(hub, chromium):
    page = login(chromium, hub, "carol")
    other = page.context.new_page()       # the browser resolves carol.hub.localhost
    assert other.goto(f"{hub.server('carol')}/formgrader").status == 404
    other.close()
    page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").click()
    assert page.locator(".lm-Menu-itemLabel").all_inner_texts()[:1] == ["Assignment List"]
    assert "Formgrader" not in page.locator(".lm-Menu").inner_text()


REFLECTION = ("I submitted a 784-128-10 network trained with Adam; it reached about 95 % on "
              "the validation split, which I used to choose, never the test set.")


def _scores(page, hub: Hub) -> tuple[str, str]:
    """Formgrader's gradebook row of the one unit-11 submission: (total, task score)."""
    page.goto(f"{hub.server('instructor')}/formgrader/gradebook/{CAPSTONE}/{CAPSTONE}")
    row = page.locator("tr", has_text="Submission #1")
    row.locator("td.score").wait_for()
    page.wait_for_timeout(500)   # the row's scores arrive with the table's model
    return row.locator("td.score").inner_text(), row.locator("td.task-score").inner_text()


def test_the_reflection_is_graded_by_hand_in_formgrader(hub, chromium):
    teacher, carol = _formgrader(chromium, hub), login(chromium, hub, "carol")
    _row_action(teacher, CAPSTONE, "release", "released")
    _fetch(carol, CAPSTONE)
    _open(carol, CAPSTONE)
    answer = carol.locator(".jp-MarkdownCell", has_text="Write your answer here")
    answer.scroll_into_view_if_needed()
    answer.dblclick()
    _type_into(carol, answer, REFLECTION)
    carol.keyboard.press("Control+s")
    carol.wait_for_timeout(1000)
    _submit(carol, CAPSTONE)

    teacher.reload()
    _row_action(teacher, CAPSTONE, "collect", "collected")
    _grade(hub, CAPSTONE)
    total, task = _scores(teacher, hub)
    assert task == "0 / 10", task

    teacher.locator("tr", has_text="Submission #1").locator("td.name a.name-hidden").click()
    teacher.wait_for_selector("input.score#reflection")
    assert REFLECTION[:40] in teacher.locator("body").inner_text()
    score_by_hand(teacher, "reflection", "8")
    screenshot(teacher, "formgrader-manual-grading")
    new_total, new_task = _scores(teacher, hub)
    assert new_task == "8 / 10", new_task
    screenshot(teacher, "formgrader-gradebook")
    assert float(new_total.split("/")[0]) == float(total.split("/")[0]) + 8, (total, new_total)


# A hub set up badly refuses to start, saying why: each change to the running hub's environment,
# and what the refusal must say.
REFUSALS = [
    ({"MINITORCH_HUB_PASSWORD": "students-pass"}, "MINITORCH_HUB_PASSWORD is no longer used"),
    ({"MINITORCH_HUB_INSTRUCTOR_PASSWORD": "instructor-" + "x" * 32},
     "MINITORCH_HUB_INSTRUCTOR_PASSWORD is too weak: zxcvbn rates it 3 of 4"),
    ({"MINITORCH_HUB_INSTRUCTOR_PASSWORD": "Xk9#"}, "it has 4 characters, fewer than 12"),
    ({"MINITORCH_COURSE": "/nonexistent"}, "is not a course directory"),
    ({"MINITORCH_HUB_STUDENTS": "alice,instructor"}, "is both the instructor and a student"),
    ({"MINITORCH_HUB_STUDENTS": "alice,<b>eve</b>"}, "holds characters other than letters"),
    ({"MINITORCH_HUB_LIMITS": "memory=lots"}, "memory='lots' must be a size such as 512M"),
    ({"MINITORCH_HUB_STUDENT_ENV": "/nonexistent"}, "no student environment in /nonexistent"),
    ({"MINITORCH_HUB_SSL_CERT": "/etc/hub.crt"}, "MINITORCH_HUB_SSL_KEY go together"),
    ({"MINITORCH_HUB_URL": "http://hub.localhost:8000/jupyter"}, "must be scheme, host and port alone"),
    ({"MINITORCH_HUB_URL": "http://127.0.0.1:8000", "MINITORCH_HUB_SUBDOMAINS": "on"},
     "127.0.0.1 is an IP address, which has no subdomains"),
    ({"MINITORCH_HUB_IP": "everywhere"}, "MINITORCH_HUB_IP='everywhere' is not an IP address"),
]


def test_a_second_hub_on_the_running_ones_port_refuses_saying_why(hub, tmp_path):
    """``jupyterhub`` itself, started on the config as ``make hub`` does, exits with the
    config's refusal (the other refusals come from the same file: ``refused`` below)."""
    second = start(dict(hub.env, MINITORCH_HUB_STATE=str(tmp_path / "state")),
                   tmp_path / "refused.log")
    assert second.wait(timeout=60) == 2
    said = (tmp_path / "refused.log").read_text()
    assert "is taken (the hub uses" in said, said[-2000:]


@pytest.fixture(scope="module")
def refused(hub, tmp_path_factory) -> list[dict]:
    """The hub's config loaded under each of ``REFUSALS``, on ports and state of its own."""
    base = tmp_path_factory.mktemp("refused")
    return refusals([dict(hub.env, MINITORCH_HUB_STATE=str(base / f"state-{index}"),
                          MINITORCH_HUB_PORT=str(free_port(span=3)), **change)
                     for index, (change, _) in enumerate(REFUSALS)])


@pytest.mark.parametrize("index, message", [(index, message) for index, (_, message)
                                            in enumerate(REFUSALS)], ids=lambda x: str(x)[:40])
def test_a_hub_set_up_badly_refuses_saying_why(refused, index, message):
    assert refused[index]["code"] == 2, refused[index]["said"][-2000:]
    assert message in refused[index]["said"], refused[index]["said"][-2000:]


def test_a_roster_with_a_bad_line_is_refused_naming_it(hub, tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("student,name\nalice,Alice A.\nbob,Bob B.\nalice,Alice again\n")
    env = dict(hub.env, MINITORCH_HUB_STATE=str(tmp_path / "state"),
               MINITORCH_HUB_ROSTER=str(roster), MINITORCH_HUB_PORT=str(free_port(span=3)))
    second = start(env, tmp_path / "refused.log")
    assert second.wait(timeout=60) == 2
    said = (tmp_path / "refused.log").read_text()
    assert f"{roster}, line 4: the student id 'alice' is also on line 2" in said, said[-2000:]


def _another_hub(hub: Hub, tmp_path: Path, scheme: str = "http", **env: str) -> Hub:
    """A second hub on a copy of the course of ``hub``, with a port, state, exchange and
    accounts of its own (a hub hands its course and exchange to its own instructor account)."""
    port = free_port(span=3)
    url, state, course = f"{scheme}://{HOST}:{port}", tmp_path / "state", tmp_path / "course"
    shutil.copytree(hub.course, course, symlinks=True)
    return Hub(url, course, state, dict(
        hub.env, MINITORCH_HUB_STATE=str(state), MINITORCH_HUB_PORT=str(port),
        MINITORCH_COURSE=str(course), MINITORCH_EXCHANGE=str(tmp_path / "exchange"),
        MINITORCH_HUB_URL=url, MINITORCH_HUB_ACCOUNT_PREFIX=f"t{port}-", **env),
        tmp_path / f"{scheme}.log", f"t{port}-")


def _log_in(hub: Hub, user: str, verify: str | bool = True) -> tuple[requests.Session, list[str]]:
    """A session logged in as ``user`` and the Set-Cookie headers of the login."""
    session = requests.Session()   # verify on each request: REQUESTS_CA_BUNDLE beats session.verify
    session.get(f"{hub.url}/hub/login", verify=verify)
    answer = session.post(f"{hub.url}/hub/login", allow_redirects=False, verify=verify, data={
        "username": user, "password": hub.password(user),
        "_xsrf": session.cookies.get("_xsrf", path="/hub/")})
    assert answer.status_code == 302, answer.text[-500:]
    return session, answer.raw.headers.getlist("Set-Cookie")


def _lab(session: requests.Session, hub: Hub, user: str, verify: str | bool = True) -> requests.Response:
    """``user``'s JupyterLab, their server started and the OAuth round trip made."""
    session.get(f"{hub.url}/hub/spawn/{user}", verify=verify)
    deadline = time.monotonic() + 120
    while True:
        answer = session.get(f"{hub.server(user)}/lab", verify=verify)
        if answer.status_code == 200 and answer.url.startswith(hub.server(user)):
            return answer
        assert time.monotonic() < deadline, (answer.status_code, answer.url, hub.log.read_text()[-2000:])
        time.sleep(0.5)


def test_https_with_a_certificate_and_cookies_kept_to_their_site(hub, tmp_path):
    """With MINITORCH_HUB_SSL_CERT and _KEY (made here: self-signed, for hub.localhost and
    *.hub.localhost, as a wildcard certificate names a real domain and its users' hosts) the
    hub and Carol's server on her own host answer over HTTPS; every cookie is Secure, the
    login cookies' names start with __Host-; SameSite=Lax on either hub."""
    cert, key = tmp_path / "hub.crt", tmp_path / "hub.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", f"/CN={HOST}", "-addext", f"subjectAltName=DNS:{HOST},DNS:*.{HOST}",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    secure = _another_hub(hub, tmp_path, "https", MINITORCH_HUB_SSL_CERT=str(cert),
                          MINITORCH_HUB_SSL_KEY=str(key))
    process = start(secure.env, secure.log)
    try:
        deadline = time.monotonic() + 90
        while not _answers(f"{secure.url}/hub/api", str(cert)):
            assert process.poll() is None and time.monotonic() < deadline, secure.log.read_text()[-2000:]
            time.sleep(0.5)
        session, cookies = _log_in(secure, "carol", str(cert))
        lab = _lab(session, secure, "carol", str(cert))
    finally:
        stop(process)
        clean_up(secure.state, secure.prefix, secure.port)
    assert lab.url.startswith(f"https://carol.{HOST}:{secure.port}/user/carol/lab"), lab.url
    assert cookies and all("; Secure" in c and "SameSite=Lax" in c for c in cookies), cookies
    # Every cookie is Secure but the XSRF cookie of Carol's server, which JupyterHub's
    # single-user server sets with Jupyter's own options; it is no credential.
    assert all(c.secure for c in session.cookies if c.name != "_xsrf" or c.domain == HOST), \
        [(c.name, c.domain, c.secure) for c in session.cookies]
    logins = {c.name: c.domain for c in session.cookies if "jupyterhub-" in c.name
              and c.name != "jupyterhub-session-id"}
    assert logins == {"__Host-jupyterhub-hub-login": HOST,
                      "__Host-jupyterhub-user-carol": f"carol.{HOST}"}, logins
    _, plain = _log_in(hub, "carol")
    assert all("Secure" not in c and "SameSite=Lax" in c for c in plain), plain


def _answers(url: str, verify: str) -> bool:
    try:
        return requests.get(url, verify=verify, timeout=2).status_code == 200
    except requests.RequestException:
        return False


def test_an_idle_server_is_culled_with_all_it_started(hub, tmp_path):
    """A hub whose culler stops servers idle for 10 s: Dave's goes, with its processes and
    its mounted home (he logs in and never comes back)."""
    culling = _another_hub(hub, tmp_path, MINITORCH_HUB_CULL_IDLE="10")
    process = start(culling.env, culling.log)
    try:
        wait_until_up(f"{culling.url}/hub/api", process, "jupyterhub", timeout=90)
        session = requests.Session()
        session.get(f"{culling.url}/hub/login")
        session.post(f"{culling.url}/hub/login?next=/hub/spawn/dave", data={
            "username": "dave", "password": culling.password("dave"),
            "_xsrf": session.cookies.get("_xsrf", path="/hub/")})
        home, deadline = culling.state / "homes" / "dave", time.monotonic() + 150
        while "Culling server dave" not in culling.log.read_text():
            assert time.monotonic() < deadline, culling.log.read_text()[-3000:]
            time.sleep(1)
        uid = pwd.getpwnam(f"{culling.prefix}dave").pw_uid
        while (processes_of(uid) or os.path.ismount(home)) and time.monotonic() < deadline + 30:
            time.sleep(0.5)
        assert processes_of(uid) == [] and not os.path.ismount(home)
    finally:
        stop(process)
        clean_up(culling.state, culling.prefix, culling.port)
