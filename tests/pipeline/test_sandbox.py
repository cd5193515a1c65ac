"""The OS sandbox's parts on their own: the bubblewrap command, Landlock, and the refusal to
grade unconfined unless the instructor says so (the whole sandbox under attack: test_hostile)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.__main__ import main
from autograder.pipeline.sandbox import bwrap, landlock, seccomp
from autograder.hub import homes, sandbox as hub_sandbox
from autograder.hub.accounts import Account
from autograder.pipeline.ledger.grade import GradingError, grade
from autograder.pipeline.term.report import render, ClassData

needs_bwrap = pytest.mark.skipif(os.environ.get("CI") != "true" and bwrap.unavailable() is not None,
                                 reason="bubblewrap cannot run here (CI installs it)")


def _profile(tmp_path: Path, **changes) -> bwrap.Profile:
    (tmp_path / "shared").mkdir(exist_ok=True)
    values = dict(read_only=(sys.base_prefix, sys.prefix), writable=(str(tmp_path / "shared"),),
                  scratch=(("/scratch", 8 << 20),), env={"SEEN": "yes"}, cwd="/scratch")
    return bwrap.Profile(**{**values, **changes})


def _run_inside(profile: bwrap.Profile, code: str) -> subprocess.CompletedProcess:
    return subprocess.run(bwrap.command(profile, [sys.executable, "-c", code]),
                          capture_output=True, text=True, timeout=60, check=False)


def test_the_command_states_every_confinement(tmp_path):
    args = bwrap.command(bwrap.Profile((str(tmp_path / "absent"),), (str(tmp_path),),
                                       (("/scratch", 1024),), {"A": "1"}, "/scratch",
                                       (("/out", "/in"),)), ["python"])
    for flag in ("--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent",
                 "--new-session", "--clearenv"):
        assert flag in args
    joined = " ".join(args)
    assert "--cap-drop ALL" in joined and "--size 1024 --tmpfs /scratch" in joined
    assert f"--bind {tmp_path} {tmp_path}" in joined
    assert "absent" not in joined                   # a path the machine lacks is left out
    assert "--ro-bind /out /in" in joined and "--setenv A 1" in joined
    assert args[-3:] == ["/scratch", "--", "python"]


@needs_bwrap
def test_inside_there_is_no_network_no_secret_and_no_course(tmp_path):
    os.environ["MINITORCH_TEST_TOKEN"] = "token"
    try:
        done = _run_inside(_profile(tmp_path), (
            "import os, socket\n"
            "print(sorted(k for k in os.environ if k not in ('PWD', 'LC_CTYPE')))\n"
            "print(os.path.exists(os.path.expanduser('~/.ssh')), os.path.exists(" + repr(str(Path.cwd() / "pyproject.toml")) + "))\n"
            "print(sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))\n"
            "try:\n    socket.create_connection(('127.0.0.1', 22), timeout=2)\n"
            "except OSError as e:\n    print('no network', e.errno)\n"))
    finally:
        del os.environ["MINITORCH_TEST_TOKEN"]
    lines = done.stdout.splitlines()
    assert done.returncode == 0, done.stderr
    assert lines[0] == "['SEEN']" and lines[1] == "False False"
    assert len(lines[2].split(",")) <= 2            # bwrap's init and itself
    assert lines[3].startswith("no network")


@needs_bwrap
def test_the_scratch_folder_has_a_quota(tmp_path):
    done = _run_inside(_profile(tmp_path), (
        "n = 0\ntry:\n    f = open('big', 'wb')\n    while True:\n        f.write(b'x' * 65536); f.flush(); n += 65536\n"
        "except OSError as e:\n    print(n, e.errno)\n"))
    written, errno = map(int, done.stdout.split())
    assert written <= 8 << 20 and errno == 28   # ENOSPC


@needs_bwrap
def test_landlock_leaves_only_the_scratch_writable(tmp_path):
    if landlock.abi_version() == 0:
        pytest.skip("this Linux has no Landlock")
    shared = tmp_path / "shared"
    done = _run_inside(_profile(tmp_path, read_only=(sys.base_prefix, sys.prefix, str(Path(landlock.__file__).parent))), (
        f"import sys; sys.path.insert(0, {str(Path(landlock.__file__).parent)!r})\n"
        "import landlock\nlandlock.restrict(['/scratch'])\n"
        f"for d in ('/scratch', {str(shared)!r}):\n"
        "    try:\n        open(d + '/f', 'w').write('x'); print('wrote', d)\n"
        "    except OSError as e:\n        print('refused', d)\n"
        "import subprocess\nprint(subprocess.run(['sh', '-c', 'echo x > " + str(shared) + "/g'], capture_output=True).returncode)\n"))
    assert done.stdout.split("\n")[:3] == ["wrote /scratch", f"refused {shared}", "2"], done.stderr
    assert not list(shared.iterdir())


def test_grading_refuses_to_run_unconfined_without_being_told(tmp_path, monkeypatch, capsys):
    (tmp_path / "gradebook.db").write_text("")
    monkeypatch.setattr(bwrap, "unavailable", lambda: bwrap.UNAVAILABLE.format(reason="test"))
    with pytest.raises(GradingError, match="--no-sandbox"):
        grade(tmp_path, progress=False)
    assert main(["--course", str(tmp_path), "grade"]) == 2
    assert "apt-get install bubblewrap" in capsys.readouterr().err


def test_bubblewrap_missing_is_named(monkeypatch):
    monkeypatch.setattr(bwrap.shutil, "which", lambda name: None)
    assert "bwrap program is not installed" in bwrap.unavailable()


def test_the_class_report_warns_of_unsandboxed_grades():
    data = ClassData(units=[], unsandboxed=[("alice", "01_setup")])
    assert "1 submission(s) were graded with --no-sandbox" in render(data)
    assert "--no-sandbox" not in render(ClassData(units=[]))


@pytest.mark.pipeline
def test_no_sandbox_grades_the_same_and_says_so(tmp_path, isolated_jupyter, new_course):
    from autograder.pipeline.demo.scenario import make_class, submit
    from autograder.pipeline.job.job import Limits
    from autograder.pipeline.term.report import collect
    root, unit = tmp_path / "course", "01_setup"
    new_course(root, [unit])
    submit(root, [s for s in make_class(root, [unit], with_bad=False, mutations=())
                  if s.name == "reference"])
    summary = grade(root, workers=1, limits=Limits(cell_timeout=30), progress=False, sandbox=False)
    assert [r.status for r in summary.results] == ["graded"]
    assert sum(summary.results[0].outcome.scores[unit].values()) == 10
    assert "UNSANDBOXED" in str(summary) and collect(root).unsandboxed == [("reference", unit)]


UNSHARE = ("import ctypes, os, subprocess\nlibc = ctypes.CDLL(None, use_errno=True)\n"
           "print(libc.unshare(0x10000000 | 0x20000000), ctypes.get_errno())\n"   # user + pid
           "print(libc.unshare(0x400), subprocess.run(['true']).returncode)\n")    # CLONE_FILES


@needs_bwrap
@pytest.mark.parametrize("launched", ["grading", "hub"])
def test_no_process_in_a_sandbox_makes_a_namespace(tmp_path, launched):
    """The grading sandbox (bwrap's --disable-userns, and the filter) and the hub's (the filter,
    loaded by the launcher its command starts with) refuse a nested user and PID namespace,
    which a process in either made before; other uses of unshare and processes still work."""
    code = [sys.executable, "-c", UNSHARE]
    if launched == "grading":
        program = seccomp.descriptor()
        try:
            done = subprocess.run(seccomp.with_filter(bwrap.command(_profile(tmp_path), code), program),
                                  pass_fds=(program,), capture_output=True, text=True, timeout=60)
        finally:
            os.close(program)
    else:
        launcher = hub_sandbox.command(_hub_view(tmp_path))[:3]
        done = subprocess.run([*launcher, "bwrap", "--unshare-pid", "--die-with-parent",
                               "--ro-bind", "/", "/", "--proc", "/proc", "--", *code],
                              capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["-1", "1", "0", "0"]       # EPERM; the rest as before


def _hub_view(tmp_path: Path) -> hub_sandbox.View:
    return hub_sandbox.View(Account("jupyter-ada", "ada", 1234, 1234), tmp_path, Path(sys.prefix),
                            Path(sys.base_prefix), tmp_path, tmp_path)


def test_the_filter_is_built_for_this_machine_or_refused_by_name():
    code = seccomp.program()
    assert len(code) % 8 == 0 and code[:8] == bytes.fromhex("2000000004000000")   # loads the arch
    with pytest.raises(OSError, match="no seccomp filter for the mips architecture"):
        seccomp.program("mips")


@needs_bwrap
@pytest.mark.skipif(os.geteuid() != 0, reason="mounting needs root, as the hub has")
def test_an_inbound_mounted_later_shows_in_a_sandbox_started_before(tmp_path):
    """The instructor's server binds the exchange when it starts; a student's inbound image
    is mounted at her first server, later. ``homes.share`` (at the hub's start, twice after a
    restart) has the students' folder pass that mount on: without it, collect found nobody."""
    exchange, view = tmp_path / "exchange", tmp_path / "view"
    students, inbound = exchange / "students", exchange / "students" / "alice" / "inbound"
    inbound.mkdir(parents=True)
    view.mkdir()
    homes.share(students)
    homes.share(students)
    try:
        inside = subprocess.Popen(
            ["bwrap", "--dev-bind", "/", "/", "--bind", str(exchange), str(view), "--unshare-pid",
             "--die-with-parent", "sh", "-c", f"echo ready; read go; ls {view}/students/alice/inbound"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert inside.stdout.readline() == "ready\n"
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(inbound)], check=True)
        (inbound / "handed-in.ipynb").write_text("{}")
        seen, _ = inside.communicate("go\n", timeout=30)
    finally:
        homes.unmount(inbound)
        homes.unmount(students)
    assert seen.split() == ["handed-in.ipynb"], seen
    assert not homes.mounted(students)
