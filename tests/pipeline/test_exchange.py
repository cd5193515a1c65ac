"""A term through nbgrader's exchange, with our grader in the middle: release, fetch, submit
(twice for one student), collect --update, ``python -m autograder grade``, feedback,
release_feedback, fetch_feedback; four students, each graded as themselves, one of whom
swaps a link to the instructor's solution into the exchange. Then what collect refuses
(autograder/pipeline/term/exchange/): forged names, owners and times, links, hard links, FIFOs,
devices, unsafe names."""
from __future__ import annotations

import json
import os
import pwd
import shutil
import stat
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from classroom import nbgrader

from autograder.pipeline.term import feedback
from autograder.pipeline.term.exchange import exchange as exchange_root
from autograder.pipeline.course import tool_env
from autograder.pipeline.ledger.grade import grade
from autograder.pipeline.job.job import Limits

pytestmark = pytest.mark.pipeline
UNIT = "01_setup"


@pytest.fixture(scope="module")
def term(tmp_path_factory, isolated_jupyter, new_course):
    base = tmp_path_factory.mktemp("term")
    root, exchange = base / "course", base / "exchange"
    new_course(root, [UNIT])
    exchange.mkdir(mode=0o777)
    as_student = [f"--Exchange.root={exchange}", "--CourseDirectory.course_id=minitorch"]
    nbgrader(root, "release_assignment", UNIT, f"--Exchange.root={exchange}")
    homes = {name: base / "home" / name for name in ("alice", "bob", "carol", "dave")}
    solution = root / "source" / UNIT / f"{UNIT}.ipynb"
    for name, home in homes.items():
        home.mkdir(parents=True)
        nbgrader(home, "fetch_assignment", UNIT, *as_student, home=home)
        if name == "carol":      # hands in the untouched notebook first, then her solution
            nbgrader(home, "submit", UNIT, f"--student={name}", *as_student, home=home)
            time.sleep(1.1)      # nbgrader's timestamps have a second's resolution in names
        if name in ("alice", "carol"):
            shutil.copy(solution, home / UNIT / f"{UNIT}.ipynb")
        nbgrader(home, "submit", UNIT, f"--student={name}", *as_student, home=home)
    _link_solution(root, exchange, homes["dave"], as_student)
    collected = nbgrader(root, "collect", UNIT, "--update", f"--Exchange.root={exchange}")
    for name in ("alice", "bob", "dave"):      # the class list, where carol is missing
        nbgrader(root, "db", "student", "add", name)
    summary = grade(root, [UNIT], workers=2, limits=Limits(cell_timeout=30), progress=False)
    feedback.generate(root, [UNIT], workers=2)
    nbgrader(root, "release_feedback", UNIT, f"--Exchange.root={exchange}")
    for name, home in homes.items():
        nbgrader(home, "fetch_feedback", UNIT, f"--student={name}", *as_student, home=home)
    return root, exchange, homes, summary, collected.output


def _link_solution(root: Path, exchange: Path, home: Path, as_student: list[str]) -> None:
    """Dave hands in the release, then again, and swaps the second copy's notebook in the
    exchange (his folder there is world-writable) for a link to the instructor's solution."""
    time.sleep(1.1)
    before = set(_inbound(exchange).iterdir())
    nbgrader(home, "submit", UNIT, "--student=dave", *as_student, home=home)
    (folder,) = set(_inbound(exchange).iterdir()) - before
    (folder / f"{UNIT}.ipynb").unlink()
    (folder / f"{UNIT}.ipynb").symlink_to(root / "source" / UNIT / f"{UNIT}.ipynb")


def _inbound(exchange: Path) -> Path:
    return exchange / "minitorch" / "inbound"


def _fetched(home: Path) -> str:
    """The one feedback page a student finds: for the submission collected (carol's newer)."""
    pages = list((home / UNIT / "feedback").glob(f"*/{UNIT}.html"))
    assert len(pages) == 1, pages
    return pages[0].read_text(encoding="utf-8")


def test_every_student_is_graded_as_themselves(term):
    root, _, homes, summary, _ = term
    assert sorted(r.outcome.student for r in summary.results) == sorted(homes)
    assert all(r.status == "graded" for r in summary.results)
    assert all((root / "autograded" / name / UNIT / "submission_secret.txt").exists()
               for name in homes)


@pytest.mark.parametrize("name, score", [("alice", "10.0 / 10.0"), ("bob", "0.0 / 10.0"),
                                         ("carol", "10.0 / 10.0"), ("dave", "0.0 / 10.0")])
def test_students_fetch_their_score_and_messages_but_no_hidden_code(term, name, score):
    page = _fetched(term[2][name])
    assert score in page
    assert "BEGIN HIDDEN TESTS" not in page and "check.affine_values" not in page
    if name in ("bob", "dave"):
        assert "CheckFailure" in page and "not implemented yet" in page


def test_a_link_to_the_solution_is_refused_and_the_honest_submission_collected(term):
    root, summary, output = term[0], term[3], term[4]
    (dave,) = [r.outcome for r in summary.results if r.outcome.student == "dave"]
    assert sum(sum(s or 0 for s in grades.values()) for grades in dave.scores.values()) == 0
    assert "BEGIN SOLUTION" not in _fetched(term[2]["dave"])
    for folder in ("submitted", "autograded", "feedback"):
        texts = [p.read_text(errors="replace") for p in (root / folder / "dave").rglob("*.*")]
        assert texts and not any("BEGIN SOLUTION" in text for text in texts)
    assert "refused 'dave+01_setup+" in output and f"'{UNIT}.ipynb' is a symbolic link" in output


def test_honest_submissions_say_once_that_owners_were_not_checked(term):
    output = term[4]
    assert "cheating attempt?" not in output
    assert output.count("Owners not checked") == 1
    assert "4 student(s) (alice, bob, carol, dave)" in output


def test_a_student_missing_from_the_class_list_is_graded_and_named(term):
    summary = term[3]
    assert summary.newcomers == ["carol"]
    assert "not on its student list before: carol" in str(summary)


def test_releasing_a_unit_never_generated_says_so(term):
    root, exchange = term[0], term[1]
    done = nbgrader(root, "release_assignment", "99_nope", f"--Exchange.root={exchange}",
                    check=False)
    assert done.code != 0 and "99_nope" in done.output


# What collect refuses: each test hands in through a fresh exchange of its own (a copy of one
# generated course), forges what a student could, collects, and looks at submitted/.

FORGED = "2099-01-01 00:00:00.000000 UTC"


@pytest.fixture(scope="module")
def generated(tmp_path_factory, isolated_jupyter, new_course):
    root = tmp_path_factory.mktemp("generated") / "course"
    new_course(root, [UNIT])
    return root


@dataclass
class Exchange:
    """A course with the unit released into an exchange of its own, and its students' homes."""

    root: Path
    exchange: Path

    @property
    def inbound(self) -> Path:
        return _inbound(self.exchange)

    def hand_in(self, student: str, notebook: Path | None = None) -> Path:
        """``nbgrader submit --student=STUDENT`` (the release, or ``notebook``): its folder."""
        home, options = self.exchange.parent / "home" / student, self._as_student()
        if not home.exists():
            home.mkdir(parents=True)
            nbgrader(home, "fetch_assignment", UNIT, *options, home=home)
        shutil.copy(notebook or self.root / "release" / UNIT / f"{UNIT}.ipynb",
                    home / UNIT / f"{UNIT}.ipynb")
        before = set(self.inbound.iterdir())
        nbgrader(home, "submit", UNIT, f"--student={student}", *options, home=home)
        (folder,) = set(self.inbound.iterdir()) - before
        return folder

    def collect(self, *options: str) -> str:
        return nbgrader(self.root, "collect", UNIT, "--update", *options,
                        f"--Exchange.root={self.exchange}").output

    def submitted(self, student: str) -> Path:
        return self.root / "submitted" / student / UNIT

    def _as_student(self) -> list[str]:
        return [f"--Exchange.root={self.exchange}", "--CourseDirectory.course_id=minitorch"]


@pytest.fixture
def course(generated, tmp_path):
    root, exchange = tmp_path / "course", tmp_path / "exchange"
    shutil.copytree(generated, root)
    exchange.mkdir(mode=0o777)
    nbgrader(root, "release_assignment", UNIT, f"--Exchange.root={exchange}")
    return Exchange(root, exchange)


def _solution(course: Exchange) -> Path:
    return course.root / "source" / UNIT / f"{UNIT}.ipynb"


def _refusal(output: str, folder: Path) -> str:
    """The summary's line that refuses ``folder`` ('' if none does)."""
    start = f"refused {folder.name!r}: "
    return next((line.split(start, 1)[1] for line in output.splitlines() if start in line), "")


def _holds_solution(folder: Path) -> bool:
    return any("BEGIN SOLUTION" in path.read_text(errors="replace")
               for path in folder.rglob("*") if path.is_file())


def _restamp(folder: Path, stamp: str, name_too: bool = True) -> Path:
    """A student's folder in the exchange made to claim ``stamp`` (its timestamp.txt, and its
    name unless ``name_too`` is False)."""
    (folder / "timestamp.txt").write_text(stamp)
    if not name_too:
        return folder
    student, assignment, _, tail = folder.name.split("+")
    return folder.rename(folder.with_name("+".join([student, assignment, stamp, tail])))


def test_a_folder_that_is_a_link_to_the_solution_is_refused(course):
    course.hand_in("alice")
    planted = course.inbound / f"mallory+{UNIT}+2024-01-01 10:00:00.000000 UTC+x"
    planted.symlink_to(_solution(course).parent)
    output = course.collect()
    assert not course.submitted("mallory").exists()
    assert not _holds_solution(course.root / "submitted")
    assert "without following a link" in _refusal(output, planted)
    assert (course.submitted("alice") / f"{UNIT}.ipynb").exists()


@pytest.mark.parametrize("make, why", [
    (lambda path, solution: os.link(solution, path), "is a hard link (2 names)"),
    (lambda path, solution: os.mkfifo(path), "is a FIFO"),
    (lambda path, solution: os.mknod(path, 0o600 | stat.S_IFCHR, os.makedev(1, 3)),
     "is a character device"),
], ids=["hard link", "FIFO", "device"])
def test_hard_links_fifos_and_devices_are_refused_and_the_others_collected(course, make, why):
    honest = course.hand_in("mallory")
    later = course.hand_in("mallory")
    course.hand_in("alice", _solution(course))
    (later / f"{UNIT}.ipynb").unlink()
    make(later / f"{UNIT}.ipynb", _solution(course))
    output = course.collect()
    assert _refusal(output, later).startswith(f"'{UNIT}.ipynb' {why}")
    assert (course.submitted("mallory") / "timestamp.txt").read_text() == \
        (honest / "timestamp.txt").read_text()
    assert not _holds_solution(course.submitted("mallory"))
    assert _holds_solution(course.submitted("alice"))


def _own(folder: Path, account: pwd.struct_passwd) -> None:
    for path in [folder, *folder.rglob("*")]:
        os.chown(path, account.pw_uid, account.pw_gid)


@pytest.mark.skipif(os.geteuid() != 0, reason="giving files to other users needs root")
def test_a_submission_under_another_students_name_is_refused(course):
    """Per-user accounts (daemon and bin, on every Debian): bin submits with
    --student=daemon, and a file owned by bin is slipped into daemon's own folder."""
    victim, forger = pwd.getpwnam("daemon"), pwd.getpwnam("bin")
    _own(course.hand_in("bin"), forger)
    honest = course.hand_in(victim.pw_name)
    _own(honest, victim)
    mixed = course.hand_in(victim.pw_name)
    _own(mixed, victim)
    os.chown(mixed / f"{UNIT}.ipynb", forger.pw_uid, forger.pw_gid)
    forged = course.hand_in(victim.pw_name, _solution(course))
    _own(forged, forger)
    output = course.collect()
    assert _refusal(output, forged).startswith(
        f"it names daemon (uid {victim.pw_uid}) but belongs to bin (uid {forger.pw_uid})")
    assert _refusal(output, mixed).startswith(f"'{UNIT}.ipynb' belongs to uid {forger.pw_uid}")
    assert (course.submitted("daemon") / "timestamp.txt").read_text() == \
        (honest / "timestamp.txt").read_text()
    assert course.submitted("bin").is_dir() and "cheating attempt?" not in output
    assert "Owners not checked" not in output


def test_a_time_in_the_future_is_refused_and_the_later_real_submission_collected(course):
    forged = _restamp(course.hand_in("bob", _solution(course)), FORGED)
    output = course.collect()
    assert _refusal(output, forged).startswith(
        "the time in its name, 2099-01-01 00:00:00 UTC, is in the future")
    assert not course.submitted("bob").exists()
    real = course.hand_in("bob")
    course.collect()
    assert (course.submitted("bob") / "timestamp.txt").read_text() == \
        (real / "timestamp.txt").read_text()


def test_a_future_submission_collected_before_is_replaced(course):
    """What nbgrader's own collect let through: a 2099 submission already in submitted/."""
    shutil.copytree(course.hand_in("bob", _solution(course)), course.submitted("bob"))
    (course.submitted("bob") / "timestamp.txt").write_text(FORGED)
    real = course.hand_in("bob")
    output = course.collect()
    assert "The collected submission of bob will be replaced" in output
    assert "Updating submission: bob" in output
    assert (course.submitted("bob") / "timestamp.txt").read_text() == \
        (real / "timestamp.txt").read_text()
    assert not _holds_solution(course.submitted("bob"))


@pytest.mark.parametrize("forge, why", [
    (lambda folder: _restamp(folder, "not-a-time"), "the time in its name, 'not-a-time', "
                                                    "cannot be read"),
    (lambda folder: _restamp(folder, "garbage", name_too=False),
     "the time in timestamp.txt, 'garbage', cannot be read"),
    (lambda folder: _restamp(folder, "2024-01-01 00:00:00.000000 UTC", name_too=False),
     "its timestamp.txt says 2024-01-01 00:00:00 but its name"),
    (lambda folder: (folder / "timestamp.txt").unlink() or folder, "it has no timestamp.txt"),
], ids=["name", "timestamp.txt", "disagree", "missing"])
def test_times_that_cannot_be_believed_are_refused(course, forge, why):
    honest = course.hand_in("bob")
    forged = forge(course.hand_in("bob", _solution(course)))
    course.hand_in("alice")
    output = course.collect()
    assert why in _refusal(output, forged)
    assert (course.submitted("bob") / "timestamp.txt").read_text() == \
        (honest / "timestamp.txt").read_text()
    assert course.submitted("alice").is_dir()


def test_a_backdated_submission_is_refused(course):
    """Bob hands in late and makes his folder claim two hours ago, before the due date: the
    files changed (``st_ctime``, which no student sets back) long after the time claimed."""
    two_hours_ago = datetime.now(timezone.utc) - timedelta(hours=2)
    forged = _restamp(course.hand_in("bob"), two_hours_ago.strftime("%Y-%m-%d %H:%M:%S.%f %Z"))
    course.hand_in("alice")
    output = course.collect()
    assert "2 h 0 min after the time it claims" in _refusal(output, forged)
    assert "edited after it was handed in, or backdated" in _refusal(output, forged)
    assert not course.submitted("bob").exists() and course.submitted("alice").is_dir()


@pytest.mark.parametrize("student, why", [
    ("..", "the student id '..' starts with a dot (hidden, or a path like '..')"),
    (".hidden", "the student id '.hidden' starts with a dot (hidden, or a path like '..')"),
    ("<img src=x onerror=alert(1)>", "the student id '<img src=x onerror=alert(1)>' holds "
     "characters other than letters, digits, '.', '_' and '-': ' ', '(', ')', '<', '=', '>'"),
])
def test_unsafe_student_ids_are_refused(course, student, why):
    folder = course.hand_in("alice")
    course.hand_in("carol")
    planted = folder.rename(course.inbound / folder.name.replace("alice", student, 1))
    output = course.collect()
    assert _refusal(output, planted) == why
    assert sorted(p.name for p in (course.root / "submitted").iterdir()) == ["carol"]
    assert not (course.root / UNIT).exists()


def test_collecting_one_student_weighs_only_their_folders(course):
    course.hand_in("alice")
    _restamp(course.hand_in("bob"), FORGED)
    output = course.collect("--student=alice")
    assert course.submitted("alice").is_dir() and not course.submitted("bob").exists()
    assert "refused" not in output.lower()


def test_unsafe_file_names_are_left_out_and_the_rest_collected(course):
    folder = course.hand_in("alice", _solution(course))
    for name in (".bashrc", "<img src=x onerror=alert(1)>.txt", "my notes.txt"):
        (folder / name).write_text("hello")
    output = course.collect()
    assert sorted(p.name for p in course.submitted("alice").iterdir()) == \
        [f"{UNIT}.ipynb", "submission_secret.txt", "timestamp.txt"]
    assert "Collecting submission: alice 01_setup; left out '.bashrc': the file name " \
           "'.bashrc' starts with a dot" in output
    assert "left out 'my notes.txt'" in output and "left out '<img src=x" in output


def test_only_the_files_the_unit_released_are_collected(course):
    """A script handed in with the notebook was served from submitted/ as a script of the
    instructor's origin (issue 46); a file the instructor declares is collected."""
    folder = course.hand_in("alice", _solution(course))
    for name in ("helper.js", "plot.png"):
        (folder / name).write_text("hello")
    (folder / "lib").mkdir()
    (folder / "lib" / "more.js").write_text("hello")
    output = course.collect("--SafeCollect.also_collect=plot.png")
    assert sorted(p.name for p in course.submitted("alice").iterdir()) == \
        [f"{UNIT}.ipynb", "plot.png", "submission_secret.txt", "timestamp.txt"]
    assert "left out 'helper.js': the unit released no such file" in output
    assert "left out 'lib': the unit released no such file" in output


def test_formgraders_collect_button_refuses_too(course):
    """What Formgrader's Collect button runs: NbGraderAPI.collect, with the course's config."""
    course.hand_in("alice")
    forged = _restamp(course.hand_in("bob", _solution(course)), FORGED)
    script = ("import json; from nbgrader.apps import NbGrader, NbGraderAPI\n"
              "app = NbGrader(); app.load_config_file()\n"
              f"print(json.dumps(NbGraderAPI(parent=app).collect({UNIT!r})))")
    done = subprocess.run([sys.executable, "-c", script], cwd=course.root,
                          env=tool_env({"MINITORCH_EXCHANGE": str(course.exchange)}),
                          capture_output=True, text=True, timeout=120, check=True)
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["success"] and "is in the future" in _refusal(result["log"], forged)
    assert course.submitted("alice").is_dir() and not course.submitted("bob").exists()


def test_times_that_slipped_past_collect_are_not_believed_at_grade_time(generated, tmp_path):
    """Submissions collected before collect checked times: nbgrader's autograde failed on an
    unreadable timestamp.txt (the solution scored 0, flagged) and recorded 2099 as it stood.
    Feedback is still released (release_feedback needs each submission's timestamp.txt)."""
    root = tmp_path / "course"
    shutil.copytree(generated, root)
    for student, stamp in (("garbage", "garbage"), ("forged", FORGED)):
        folder = root / "submitted" / student / UNIT
        folder.mkdir(parents=True)
        shutil.copy(root / "source" / UNIT / f"{UNIT}.ipynb", folder)
        (folder / "timestamp.txt").write_text(stamp)
        (folder / "submission_secret.txt").write_text(f"{student}-secret")
    summary = grade(root, [UNIT], workers=1, limits=Limits(cell_timeout=30), progress=False)
    results = {r.outcome.student: r for r in summary.results}
    assert all(r.status == "graded" and r.outcome.timestamp is None for r in results.values())
    assert all(sum(results[s].outcome.scores[UNIT].values()) == 10 for s in results)
    assert "Graded without a hand-in time: the time in timestamp.txt, 'garbage', cannot be " \
           "read." in results["garbage"].notes
    assert any("2099-01-01 00:00:00 UTC, is in the future" in note
               for note in results["forged"].notes)
    feedback.generate(root, [UNIT], workers=1)
    exchange = tmp_path / "exchange"
    exchange.mkdir(mode=0o777)
    nbgrader(root, "release_feedback", UNIT, f"--Exchange.root={exchange}")


def test_the_exchange_lies_beside_the_course_by_default(tmp_path, monkeypatch):
    """Inside the course, the instructor's server served what a student wrote into her
    inbound from the instructor's origin (issue 46)."""
    monkeypatch.delenv(exchange_root.VARIABLE, raising=False)
    course = tmp_path / "course"
    course.mkdir()
    made = exchange_root.root(course)
    assert made == tmp_path / "course-exchange" and made.is_dir()
    assert not made.is_relative_to(course)
    assert stat.S_IMODE(made.stat().st_mode) == exchange_root.MODE
