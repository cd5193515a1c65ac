"""A student attacks the course hub from her own kernel and terminal (issue 33's list).

Alice logs in with her own password and, from code in her kernel and commands in her
terminal, tries what a student on the old hub could: read the course, the hub's secrets and
other homes; write where others read; find a password or token in another process; use her
own token beyond her server; log in or hand in as someone else; import the reference; starve the others
with a memory bomb, a fork bomb or a full disk; leave a process behind her server; guess the
instructor's and Bob's passwords while they log in. Each attempt must fail, and Bob's server and the hub must keep
answering meanwhile. Runs on the hub of ``hubs.py`` (shared with the term test).
"""
from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import psutil
import pytest
import requests
from hubs import Visit, processes_of

from autograder.hub import logins
from autograder.hub.spawner import server_command

pytestmark = pytest.mark.pipeline


@pytest.fixture(scope="module")
def alice(hub):
    return Visit(hub, "alice")


@pytest.fixture(scope="module")
def bob(hub):
    return Visit(hub, "bob")


@pytest.fixture(scope="module")
def instructor(hub):
    return Visit(hub, "instructor")


def _secrets(hub) -> dict[str, str]:
    state = hub.state / "hub"
    found = {name: (state / name).read_text().strip() for name in ("proxy_token", "cookie_secret")}
    found.update({f"{user}'s password": hub.password(user)
                  for user in ("instructor", "bob", "carol", "dave")})
    return found


def test_her_server_runs_as_her_own_account_without_capabilities(hub, alice):
    result = alice.probe("import os, pwd\nstatus = open('/proc/self/status').read()\n"
                           "result = [os.getuid(), os.geteuid(), os.getgroups(), "
                           "pwd.getpwuid(os.getuid()).pw_name, "
                           "[l for l in status.splitlines() if l.startswith(('CapEff', 'CapBnd', 'NoNewPrivs'))]]")
    account = Path(hub.state / "homes" / "alice").stat()
    assert result[:4] == [account.st_uid, account.st_uid, [], "alice"] and account.st_uid != 0
    assert result[4] == ["CapEff:\t0000000000000000", "CapBnd:\t0000000000000000", "NoNewPrivs:\t1"]


def test_she_makes_no_namespace_of_her_own(alice):
    """A user and PID namespace of her own held processes her server's limits could not see;
    the filter her sandbox starts under refuses every new namespace (EPERM)."""
    result = alice.probe("import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
                           "result = [libc.unshare(0x10000000 | 0x20000000), ctypes.get_errno()]")
    assert result == [-1, 1]


def _readable(visit: Visit, paths: list[str]) -> dict:
    return visit.probe(f"result = {{}}\nfor path in {paths!r}:\n"
                         "    try:\n        result[path] = open(path, 'rb').read(64).hex()\n"
                         "    except OSError as error:\n        result[path] = type(error).__name__\n")


def test_she_reads_nothing_of_the_course_the_hub_or_other_homes(hub, alice, bob):
    bob.run("open('/home/bob/diary.txt', 'w').write('mine')")
    paths = [hub.course / "source" / "01_setup" / "01_setup.ipynb", hub.course / "gradebook.db",
             hub.course / "nbgrader_config.py", hub.state / "hub" / "cookie_secret",
             hub.state / "hub" / "jupyterhub.sqlite", hub.state / "hub" / "proxy_token",
             hub.state / "logins.csv", hub.state / "homes" / "bob" / "diary.txt",
             "/home/bob/diary.txt", "/etc/shadow"]
    result = _readable(alice, [str(path) for path in paths])
    assert set(result.values()) <= {"FileNotFoundError", "PermissionError"}, result


def test_she_cannot_write_where_other_servers_read(hub, alice):
    result = alice.probe("result = {}\nfor path in ['/srv/minitorch/config/nbgrader_config.py', "
                           f"{str(hub.course / 'source' / 'evil.py')!r}, '/usr/lib/evil.py', "
                           f"{str(Path(hub.env['MINITORCH_HUB_STUDENT_ENV']) / 'evil.pth')!r}]:\n"
                           "    try:\n        open(path, 'a').write('x'); result[path] = 'written'\n"
                           "    except OSError as error:\n        result[path] = type(error).__name__\n")
    assert "written" not in result.values(), result


def test_no_process_she_can_see_holds_a_secret(hub, alice):
    result = alice.probe("import os\nresult = {}\nfor pid in filter(str.isdigit, os.listdir('/proc')):\n"
                           "    text = ''\n    for part in ('environ', 'cmdline'):\n"
                           "        try:\n            text += open(f'/proc/{pid}/{part}', 'rb').read().decode('latin-1')\n"
                           "        except OSError:\n            pass\n"
                           "    result[pid] = [open(f'/proc/{pid}/status').read().split('Uid:')[1].split()[0], text]\n")
    own = str(Path(hub.state / "homes" / "alice").stat().st_uid)
    assert {uid for uid, _ in result.values()} <= {own, "0"}, result.keys()
    assert len(result) < 20, f"she sees {len(result)} processes"
    leaked = [name for name, secret in _secrets(hub).items()
              if any(secret in text for _, text in result.values())]
    assert leaked == [], leaked


def _via_proxy(hub, user: str, path: str) -> tuple[str, str]:
    """The proxy's address on loopback for ``path`` on ``user``'s server, and the Host header
    that routes it there (the sandbox resolves no ``*.localhost`` name)."""
    server = urlsplit(hub.server(user))
    return f"http://127.0.0.1:{hub.port}{server.path}/{path}", server.netloc


def test_her_token_opens_only_her_own_server(hub, alice, bob, instructor):
    """Every target runs (a stopped server would only send her to the hub's spawn page)."""
    port = hub.port
    targets = [("proxy routes", f"http://127.0.0.1:{port + 2}/api/routes", ""),
               ("hub users", f"http://127.0.0.1:{port + 1}/hub/api/users", ""),
               ("bob tokens", f"http://127.0.0.1:{port + 1}/hub/api/users/bob/tokens", ""),
               ("instructor terminals", *_via_proxy(hub, "instructor", "api/terminals")),
               ("bob kernels", *_via_proxy(hub, "bob", "api/kernels")),
               ("own kernels", *_via_proxy(hub, "alice", "api/kernels"))]
    result = alice.probe(f"""import os, urllib.request, urllib.error
class Stay(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args):
        return None
opener = urllib.request.build_opener(Stay)
token = os.environ['JUPYTERHUB_API_TOKEN']
result = {{}}
for name, url, host in {targets!r}:
    headers = dict({{'Authorization': f'token {{token}}'}}, **({{'Host': host}} if host else {{}}))
    try:
        result[name] = [opener.open(urllib.request.Request(url, headers=headers), timeout=10).status, '']
    except urllib.error.HTTPError as error:
        result[name] = [error.code, error.headers.get('Location', '')]
""")
    assert result.pop("own kernels") == [200, ""]
    assert all(_refused(code, location) for code, location in result.values()), result


def _refused(code: int, location: str) -> bool:
    """A refusal: an error, or a redirect to the hub's login (the token was not taken as a
    login; with users on origins of their own, another user's server sends her there)."""
    return code in (401, 403, 404) or (code in (302, 303) and (
        "/hub/api/oauth2/authorize" in location or "/hub/login" in location))


def _logs_in(hub, user: str, password: str) -> bool:
    return _try(hub, user, password) == 302


def test_her_kernel_listens_on_no_port_another_student_could_reach(hub, alice):
    """The network namespace is shared (the proxy must reach her server): her kernels talk
    to her server over Unix sockets in her home (``hub/student``), never over TCP, where
    anyone on the machine could subscribe to their output. Her processes listen on two TCP
    ports: her server's, which asks every request for her token, and ipykernel's pipe for
    the output of forked processes, a receive-only socket that drops what lacks its random key."""
    kernels = alice.probe("import glob, json\nfrom jupyter_core.paths import jupyter_runtime_dir\n"
                            "result = [[json.load(open(f))['transport'] for f in "
                            "glob.glob(jupyter_runtime_dir() + '/kernel-*.json')], "
                            "get_ipython().kernel.iopub_socket.io_thread._pipe_port]")
    mine = set(processes_of((hub.state / "homes" / "alice").stat().st_uid))
    listening = {c.laddr.port: psutil.Process(c.pid).cmdline()[:4]
                 for c in psutil.net_connections("tcp")
                 if c.status == psutil.CONN_LISTEN and c.pid in mine}
    python = f"{hub.env['MINITORCH_HUB_STUDENT_ENV']}/bin/python"
    kernel, server = [python, "-m", "ipykernel_launcher", "-f"], server_command(Path(python))
    assert kernels[0] and set(kernels[0]) == {"ipc"}, kernels
    assert listening[kernels[1]] == kernel      # this kernel's pipe
    assert sorted(map(tuple, listening.values())) == \
        sorted([tuple(kernel)] * len(kernels[0]) + [tuple(server)]), listening


SUBSCRIBE_TO_EVERY_PORT = """import time, zmq
listening = []
for name, host in (('/proc/net/tcp', '127.0.0.1'), ('/proc/net/tcp6', '[::1]')):
    for line in open(name).read().splitlines()[1:]:
        fields = line.split()
        if fields[3] == '0A':
            listening.append(f'tcp://{host}:{int(fields[1].rsplit(":", 1)[1], 16)}')
context = zmq.Context()
sub = context.socket(zmq.SUB)
sub.setsockopt(zmq.IPV6, 1)
sub.setsockopt(zmq.SUBSCRIBE, b'')
for address in listening:
    sub.connect(address)
heard, deadline = [], time.monotonic() + SECONDS
while time.monotonic() < deadline:
    if sub.poll(200):
        heard.append(b' '.join(sub.recv_multipart()).decode('latin-1'))
result = [listening, heard]
"""


def _listeners(hub) -> dict[int, list[str]]:
    """Every TCP port the hub's processes listen on (the hub, its proxy, the users' servers,
    their kernels), and the command of the process that holds it."""
    hub_api = next(c.pid for c in psutil.net_connections("tcp")
                   if c.status == psutil.CONN_LISTEN and c.laddr.port == hub.port + 1)
    tree = {hub_api} | {child.pid for child in psutil.Process(hub_api).children(recursive=True)}
    return {c.laddr.port: psutil.Process(c.pid).cmdline()
            for c in psutil.net_connections("tcp")
            if c.status == psutil.CONN_LISTEN and c.pid in tree}


def test_her_kernel_hears_no_other_users_kernel(hub, alice, bob, instructor):
    """The network namespace is shared, so her kernel lists every socket listening on the
    machine (``/proc/net/tcp``) and subscribes to each with ZeroMQ while the instructor's
    kernel prints a solution: it hears nothing. The instructor's kernels speak over Unix sockets
    in her sandbox (``hub/instructor``), as the students' do; what listens on TCP is the hub,
    its proxy and each user's server (HTTP that asks for a token), and in each kernel
    ipykernel's pipe for forked output (receive-only, dropping what lacks its random key)."""
    bob.run("print('a kernel of bob')")
    instructor.run("print('a kernel of the instructor')")
    speaking = threading.Thread(target=instructor.run, args=(
        "import time\nfor _ in range(10):\n    print('SOLUTION-7f3a', flush=True); time.sleep(1)",))
    threading.Timer(3, speaking.start).start()
    listening, heard = alice.probe(SUBSCRIBE_TO_EVERY_PORT.replace("SECONDS", "14"))
    speaking.join()
    assert [said for said in heard if "SOLUTION-7f3a" in said] == []
    held = _listeners(hub)
    kernels = [command for command in held.values() if "ipykernel_launcher" in command]
    print(f"\nshe saw {len(listening)} TCP ports listening; the hub's processes hold "
          f"{sorted(held)}: {len(kernels)} of them kernels' pipes")
    assert {f"tcp://127.0.0.1:{port}" for port in held} <= set(listening)
    connection_files = {command[command.index("-f") + 1] for command in kernels}
    assert len(kernels) == len(connection_files) >= 3, held   # one port per kernel: its pipe


def test_her_password_is_hers_alone(hub):
    assert _logs_in(hub, "alice", hub.password("alice"))
    assert not _logs_in(hub, "bob", hub.password("alice"))
    assert not _logs_in(hub, "instructor", hub.password("alice"))
    assert len({hub.password(user) for user in ("alice", "bob", "carol", "dave", "instructor")}) == 5


def test_neither_the_reference_nor_the_autograder_imports(alice):
    result = alice.probe("import importlib.util, sys\nresult = [sys.prefix, "
                           "[m for m in ('minitorch_ref', 'autograder', 'numpy', 'nbgrader', 'course') "
                           "if importlib.util.find_spec(m)]]")
    assert result[1] == ["numpy", "nbgrader", "course"], result


def test_she_hands_in_only_as_herself(hub, alice, bob, instructor):
    """Her sandbox shows her own inbound and feedback only; a submission in her inbound that
    names Bob (``--student``, ``JUPYTERHUB_USER``) is refused at collect, Bob's own collected.
    The instructor releases and collects from her own terminal (the exchange's course folder
    and what is collected are her account's, as on a term's hub)."""
    released = instructor.shell(f"cd {hub.course} && nbgrader release_assignment 01_setup --force",
                                timeout=90)
    assert "Released as: minitorch 01_setup" in released, released
    exchange = "/srv/nbgrader/exchange/minitorch"
    fetch = f"rm -rf ~/hand-in && mkdir ~/hand-in && cd ~/hand-in && cp -r {exchange}/outbound/01_setup ."
    bob.shell(f"{fetch} && nbgrader submit 01_setup", timeout=90)
    seen = alice.shell(f"{fetch} && echo FORGED > 01_setup/forged.txt && "
                       "nbgrader submit 01_setup --student=bob; JUPYTERHUB_USER=bob nbgrader submit "
                       f"01_setup; echo LISTING; ls {exchange} {exchange}/inbound {exchange}/feedback; "
                       f"touch {exchange}/outbound/01_setup/x {exchange}/feedback/x", timeout=120)
    listing = seen.split("LISTING", 1)[1]
    inbound = listing.split("/inbound:", 1)[1].split("touch:", 1)[0]
    assert "students" not in listing and inbound.count("bob+01_setup+") == 2, listing
    assert listing.count("Read-only file system") == 2, listing
    said = instructor.shell(f"cd {hub.course} && nbgrader collect 01_setup --update 2>&1",
                            timeout=120)
    print(f"\ncollect: {said[-1500:]}")
    assert said.count("handed in by alice under another student's name") == 2, said
    assert (hub.course / "submitted" / "bob" / "01_setup" / "timestamp.txt").exists()
    assert not (hub.course / "submitted" / "bob" / "01_setup" / "forged.txt").exists()


def test_nothing_she_started_outlives_her_server(hub, alice):
    """Two daemons of hers (``setsid nohup``, a double fork), then JupyterHub stops her server."""
    alice.shell("(setsid nohup sleep 4242 > /dev/null 2>&1 &); (python3 -c 'import os, time; "
                "os.fork() and os._exit(0); os.setsid(); time.sleep(4343)' &)")
    uid = (hub.state / "homes" / "alice").stat().st_uid
    daemons = [pid for pid in processes_of(uid)
               if any(n in Path(f"/proc/{pid}/cmdline").read_bytes() for n in (b"4242", b"4343"))]
    assert len(daemons) == 2, processes_of(uid)
    alice.stop()
    assert processes_of(uid) == [] and not os.path.ismount(hub.state / "homes" / "alice")


class Pulse:
    """Bob's server and the hub, asked every 0.2 s from another thread: the slowest answer."""

    def __init__(self, hub, bob: Visit) -> None:
        self.urls = [f"{bob.base}/api/status", f"{hub.url}/hub/api"]
        self.http, self.slowest, self.failures = bob.http, 0.0, []
        self.running = threading.Event()

    def __enter__(self):
        self.running.set()
        self.thread = threading.Thread(target=self._beat, daemon=True)
        self.thread.start()
        return self

    def _beat(self) -> None:
        while self.running.is_set():
            for url in self.urls:
                started = time.monotonic()
                try:
                    code = self.http.get(url, timeout=10).status_code
                except requests.RequestException as error:
                    code = str(error)
                self.slowest = max(self.slowest, time.monotonic() - started)
                if code != 200:
                    self.failures.append((url, code))
            time.sleep(0.2)

    def __exit__(self, *exc) -> None:
        self.running.clear()
        self.thread.join()


def test_a_memory_bomb_fork_bomb_and_full_disk_leave_the_others_answering(hub, bob):
    """On a server of hers started anew (the previous test stopped the first)."""
    alice = Visit(hub, "alice")
    with Pulse(hub, bob) as pulse:
        memory = alice.run("chunks = []\nwhile True:\n    chunks.append(b'x' * (64 << 20))", timeout=120)
        disk = alice.shell("dd if=/dev/zero of=$HOME/fill bs=1M count=400 2>&1 | grep -o 'No space.*'; "
                           "rm $HOME/fill")
        fork = alice.shell("bomb() { bomb | bomb & }; bomb; sleep 5", timeout=15)
    print(f"\nmemory bomb: {memory[-200:]!r}\ndisk: {disk[-300:]!r}\nfork bomb: {fork[-300:]!r}\n"
          f"slowest answer of bob's server or the hub meanwhile: {pulse.slowest:.2f} s")
    assert pulse.failures == [] and pulse.slowest < 2.0, (pulse.failures, pulse.slowest)
    assert memory == "kernel restarting"          # the kernel, killed; her server lives on
    assert "No space left on device" in disk
    assert "Resource temporarily unavailable" in fork or "retry: No child processes" in fork
    alice.stop()          # the bomb goes on in her server (only there): the next test starts anew


FILL_INBOUND = """import os, shutil
inbound = f"{os.environ['MINITORCH_EXCHANGE']}/{os.environ['MINITORCH_COURSE_ID']}/inbound"
written, files, why = 0, 0, {}
try:
    with open(f"{inbound}/fill", "wb") as out:
        for _ in range(128):
            out.write(bytes(1 << 20))
            written += 1 << 20
except OSError as error:
    why["bytes"] = error.strerror
os.remove(f"{inbound}/fill")
os.mkdir(f"{inbound}/many")
try:
    for files in range(30_000):
        open(f"{inbound}/many/{files}", "w").close()
except OSError as error:
    why["files"] = error.strerror
shutil.rmtree(f"{inbound}/many")
result = [written, files, why]"""


def test_what_she_hands_in_counts_against_a_quota(hub):
    """Her inbound, where ``nbgrader submit`` writes, was a folder of the exchange's file
    system, unbounded; it is an image of her own (``inbound=64M`` here): 128 MiB and 30,000
    files stop at its end."""
    alice, exchange = Visit(hub, "alice"), hub.state.parent / "exchange"
    written, files, why = alice.probe(FILL_INBOUND, timeout=300)
    print(f"\nher inbound took {written >> 20} MiB and {files} files: {why}")
    assert written < 64 << 20 and files < 30_000
    assert why == {"bytes": "No space left on device", "files": "No space left on device"}
    assert os.path.ismount(next(exchange.glob("*/students/alice/inbound")))


class _From(requests.adapters.HTTPAdapter):
    """Connections from another loopback address: a stranger on another machine."""

    def __init__(self, address: str) -> None:
        self.address = address
        super().__init__()

    def init_poolmanager(self, *args, **kwargs) -> None:
        super().init_poolmanager(*args, source_address=(self.address, 0), **kwargs)


def _try(hub, user: str, password: str, address: str = "", **headers: str) -> int:
    """One login as a browser would (the form, then its post): the answer's status."""
    session = requests.Session()
    session.headers.update(headers)
    if address:
        session.mount("http://", _From(address))
        session.mount("https://", _From(address))
    session.get(f"{hub.url}/hub/login")
    return session.post(f"{hub.url}/hub/login", allow_redirects=False, data={
        "username": user, "password": password,
        "_xsrf": session.cookies.get("_xsrf", path="/hub/")}).status_code


def test_a_stranger_guessing_keeps_nobody_out_and_is_slowed_down(hub):
    """Last (the stranger's address stays refused a minute). From 127.0.0.2, claiming to be
    127.0.0.1 (``X-Real-Ip``, ``X-Forwarded-For``), a stranger guesses at Bob's and the
    instructor's names, 300 times, while both log in from 127.0.0.1 with their passwords:
    every login of theirs succeeds, the stranger gets ``FREE`` checked guesses per name."""
    forged = {"X-Real-Ip": "127.0.0.1", "X-Forwarded-For": "127.0.0.1"}
    guesses: dict[str, list[int]] = {"bob": [], "instructor": []}

    guessed = threading.Event()     # both names have failed FREE times

    def guess() -> None:
        for attempt in range(300):
            user = ("bob", "instructor")[attempt % 2]
            guesses[user].append(_try(hub, user, f"guess-{attempt}", "127.0.0.2", **forged))
            if attempt == 2 * logins.FREE:
                guessed.set()

    started, stranger = time.monotonic(), threading.Thread(target=guess)
    stranger.start()
    guessed.wait(timeout=120)
    logins_meanwhile = []
    while stranger.is_alive() or len(logins_meanwhile) < 4:
        logins_meanwhile += [_try(hub, user, hub.password(user)) for user in ("bob", "instructor")]
    stranger.join()
    print(f"\n300 guesses in {time.monotonic() - started:.1f} s: "
          + ", ".join(f"{u}: {a.count(403)} checked and wrong (403), {a.count(429)} refused "
                      "unchecked (429)" for u, a in guesses.items())
          + f"; meanwhile Bob and the instructor logged in {logins_meanwhile.count(302)} of "
            f"{len(logins_meanwhile)} times")
    assert set(logins_meanwhile) == {302}, logins_meanwhile
    for answers in guesses.values():
        assert answers == [403] * logins.FREE + [429] * (150 - logins.FREE)
    assert _try(hub, "bob", hub.password("bob"), "127.0.0.2") == 429
