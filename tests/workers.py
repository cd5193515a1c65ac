"""How the suite shares two cores: pytest-xdist workers, each handed whole files of tests.

``make test`` runs ``pytest -n 3 --dist loadfile``: three workers on two cores. With two,
the cores stood idle for 125 of a run's 1,246 core-seconds while tests waited (a job's time
budget, a server being culled, a page loading); a third worker's tests use them meanwhile
(idle 28 s, the run 9:57 instead of 10:23). A worker builds its own session and module
fixtures, so a file's tests go to one worker together (a module's kernel, Dask cluster or term
through the exchange is built once), and so do the files that share an expensive session
fixture (``SHARED``): the graded course, the course hub, the student bundle's environment and
the mutation audit's in-process verdicts, each built by one worker only. They take longest,
so the workers start with them and none waits alone for one of them at the end. What a
worker's tests want printed after the run (``print_at_end``) the controller prints. Without xdist nothing changes: the order is the files'.
(Loaded as a plugin by tests/conftest.py: pytest puts tests/ on ``sys.path``.)

The controller sees only the tests' names, so ``SHARED`` lists the files by name; a worker
refuses to run (a usage error naming the file) when a test uses one of the session fixtures
from a file that is not listed with it.
"""
from __future__ import annotations

import pytest
from xdist.scheduler import LoadScopeScheduling

# The session fixtures worth one build per run, and the files whose tests use them, in the
# order the workers take them (longest first).
SHARED = {
    "graded course": (("scratch_course", "graded_units", "graded"), (
        "tests/notebooks/test_autograde.py", "tests/notebooks/test_execution.py",
        "tests/notebooks/test_release.py", "tests/pipeline/test_feedback_report.py",
        "tests/pipeline/test_gradebook.py", "tests/pipeline/test_grading.py",
        "tests/pipeline/test_mutants.py")),
    "course hub": (("hub",), ("tests/pipeline/test_hub.py", "tests/pipeline/test_hub_attacks.py",
                              "tests/pipeline/test_hub_across_origins.py",
                              "tests/pipeline/test_hub_as_instructor.py")),
    "student bundle": (("student_bundle", "student_env", "release_runs"), (
        "tests/pipeline/test_bundle.py", "tests/notebooks/test_validation.py")),
    "in-process audit": (("in_process_verdict",), (
        "tests/autograder/test_testimony.py", "tests/autograder/test_remote_audit.py",
        "tests/autograder/test_mutation_audit.py")),
}
GROUP_OF_FILE = {file: group for group, (_, files) in SHARED.items() for file in files}
AT_END = "print at the end"     # a worker's output to the controller: {title: text}
SECTIONS = pytest.StashKey[dict]()


class FilesAndSharedFixtures(LoadScopeScheduling):
    """xdist's ``loadfile``, except that the files of one ``SHARED`` group go together."""

    def _split_scope(self, nodeid: str) -> str:
        file = nodeid.split("::", 1)[0]
        return GROUP_OF_FILE.get(file, file)


def pytest_xdist_make_scheduler(config: pytest.Config, log) -> LoadScopeScheduling | None:
    if config.getoption("dist") == "loadfile":
        return FilesAndSharedFixtures(config, log)
    return None


def file_of(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]


def rank(item: pytest.Item) -> int:
    """Where ``item`` comes in a worker's order: the shared groups' files first."""
    group = GROUP_OF_FILE.get(file_of(item))
    return list(SHARED).index(group) if group else len(SHARED)


def check_listed(item: pytest.Item) -> None:
    """A test that uses a shared session fixture must be in a file listed with it."""
    file = file_of(item)
    for group, (fixtures, files) in SHARED.items():
        used = sorted(set(fixtures) & set(item.fixturenames))
        if used and file not in files:
            raise pytest.UsageError(f"{file} uses {', '.join(used)}: list it in "
                                    f"tests/workers.py's SHARED[{group!r}], or two workers "
                                    "would each build the " + group)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        check_listed(item)
    if hasattr(config, "workerinput"):      # an xdist worker: its order is the schedule's
        items.sort(key=rank)                # stable: within a rank, the files' order


def print_at_end(config: pytest.Config, title: str, text: str) -> None:
    """Print ``text`` under ``title`` after the run (call it by ``pytest_sessionfinish``)."""
    if hasattr(config, "workeroutput"):
        config.workeroutput.setdefault(AT_END, {})[title] = text
    else:
        config.stash.setdefault(SECTIONS, {})[title] = text


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:
    """A worker finished: keep what it wants printed."""
    for title, text in getattr(node, "workeroutput", {}).get(AT_END, {}).items():
        print_at_end(node.config, title, text)


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    for title, text in config.stash.get(SECTIONS, {}).items():
        terminalreporter.section(title)
        terminalreporter.write_line(text)
