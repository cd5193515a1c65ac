"""The instructor's server on the course hub holds the course and nothing more (issue 46).

Whatever runs in the instructor's server (a cell, a terminal, a script that found its way
into the instructor's pages) has the rights of the instructor's account: not root, no
capability, no setuid program that helps, nothing of the hub's state; the course's files,
yes, but not the hub's code or configuration, which root runs. Collecting from the students'
own inbound folders works through the account's group. Runs on the hub of ``hubs.py``, named
to run before ``test_hub_attacks.py``, whose last test keeps the instructor from logging in.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hubs import Visit

from autograder.pipeline.course import REPO

pytestmark = pytest.mark.pipeline


@pytest.fixture(scope="module")
def instructor(hub):
    return Visit(hub, "instructor")


def test_her_kernel_and_terminal_run_as_her_account_without_privileges(hub, instructor):
    owner = (hub.course / "source").stat().st_uid
    kernel = instructor.probe("import os, pwd\nstatus = open('/proc/self/status').read()\n"
                                "result = [os.getuid(), os.geteuid(), os.getgroups(), "
                                "pwd.getpwuid(os.getuid()).pw_name, "
                                "[l for l in status.splitlines() if l.startswith(('CapEff', 'CapBnd', 'NoNewPrivs'))]]")
    terminal = instructor.shell("id -u; grep -E '^(CapEff|NoNewPrivs)' /proc/self/status")
    printed = terminal.split("EN''D", 1)[1]       # after the command line the terminal echoes
    assert kernel[:4] == [owner, owner, [], "instructor"] and owner != 0, kernel
    assert kernel[4] == ["CapEff:\t0000000000000000", "CapBnd:\t0000000000000000", "NoNewPrivs:\t1"]
    assert f"{owner}\r\nCapEff:\t0000000000000000\r\nNoNewPrivs:\t1" in printed, terminal


def test_a_setuid_root_program_gives_her_nothing(hub, instructor):
    """A copy of ``id`` made setuid root (by root) in the course, run from her terminal."""
    program = hub.course / "setuid-id"
    shutil.copy("/usr/bin/id", program)
    program.chmod(0o4755)
    try:
        said = instructor.shell(f"{program}")
    finally:
        program.unlink()
    owner = (hub.course / "source").stat().st_uid
    assert f"uid={owner}(instructor)" in said and "euid=0" not in said, said


def test_she_reads_nothing_of_the_hubs_state(hub, instructor):
    paths = [str(hub.state / name) for name in (
        "logins.csv", "hub/cookie_secret", "hub/proxy_token", "hub/jupyterhub.sqlite", "homes")]
    result = instructor.probe(f"import os\nresult = {{}}\nfor path in {paths!r}:\n"
                              "    try:\n        os.listdir(path) if os.path.isdir(path) else open(path, 'rb').read()\n"
                              "        result[path] = 'read'\n"
                              "    except OSError as error:\n        result[path] = type(error).__name__\n")
    assert set(result.values()) <= {"FileNotFoundError", "PermissionError"}, result


def test_she_writes_the_course_but_not_the_code_root_runs(hub, instructor):
    """The course's data are hers; its folder lets her add files but rename nothing of
    root's (``nbgrader_config.py``), and the hub's code is read-only."""
    config, moved = hub.course / "nbgrader_config.py", hub.course / "nbgrader_config.moved"
    code = REPO / "autograder" / "hub" / "spawner.py"
    result = instructor.probe(f"""import os
result = {{}}
def attempt(name, action):
    try:
        action()
        result[name] = 'done'
    except OSError as error:
        result[name] = type(error).__name__
attempt('source', lambda: open({str(hub.course / 'source' / 'notes-of-the-instructor.txt')!r}, 'w').write('mine'))
attempt('new file', lambda: open({str(hub.course / 'export-of-the-instructor.csv')!r}, 'w').write('a,b'))
attempt('gradebook', lambda: open({str(hub.course / 'gradebook.db')!r}, 'r+b').close())
attempt('rename config', lambda: os.rename({str(config)!r}, {str(moved)!r}))
attempt('code', lambda: open({str(code)!r}, 'a').close())
""")
    if moved.exists():
        moved.rename(config)
    assert result.pop("code") in ("OSError", "PermissionError"), result    # read-only, or root's
    assert result == {"source": "done", "new file": "done", "gradebook": "done",
                      "rename config": "PermissionError"}, result


def test_she_collects_from_the_students_own_folders_through_her_group(hub, instructor):
    """From her terminal: Bob's submission is collected; Alice, who made her inbound folder
    unreadable (mode 0700), is told apart and stops nobody else's collection."""
    alice, bob = Visit(hub, "alice"), Visit(hub, "bob")
    released = instructor.shell(f"cd {hub.course} && nbgrader release_assignment 01_setup --force",
                                timeout=90)
    assert "Released as: minitorch 01_setup" in released, released
    exchange = "/srv/nbgrader/exchange/minitorch"
    for student in (alice, bob):
        student.shell(f"rm -rf ~/collected && mkdir ~/collected && cd ~/collected && "
                      f"cp -r {exchange}/outbound/01_setup . && nbgrader submit 01_setup", timeout=90)
    alice.shell(f"chmod 0700 {exchange}/inbound")
    try:
        said = instructor.shell(f"cd {hub.course} && nbgrader collect 01_setup --update 2>&1",
                                timeout=120)
    finally:
        alice.shell(f"chmod 2750 {exchange}/inbound")
    print(f"\ncollect, as the instructor: {said[-1500:]}")
    assert "alice made it unreadable to the instructor" in said, said
    assert "Traceback" not in said, said
    collected = Path(hub.course / "submitted" / "bob" / "01_setup" / "timestamp.txt")
    assert collected.stat().st_uid == (hub.course / "source").stat().st_uid
