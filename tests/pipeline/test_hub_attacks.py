"""A student attacks the course hub from her own kernel and terminal (issue 33's list).

Alice logs in with her own password and, from code in her kernel and commands in her
terminal, tries what a student on the old hub could: read the course, the hub's secrets and
other homes; write where others read; find a password or token in another process; use her
own token beyond her server; connect to anything else listening on the machine; log in or
hand in as someone else; import the reference; starve the others with a memory bomb, a fork
bomb, a full disk or a flood of connections; leave a process behind her server; guess the
instructor's and Bob's passwords while they log in. Each attempt must fail, and Bob's server and the hub must keep
answering meanwhile. Runs on the hub of ``hubs.py`` (shared with the term test).
"""
from __future__ import annotations

import os
import threading
import time
from collections import Counter
from pathlib import Path

import psutil
import pytest
import requests
import listening
from hubs import Visit, processes_of
from listening import Listener

from autograder.hub import logins, relay, sandbox
from autograder.hub.spawner import SERVER_SOCKET

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


def _logs_in(hub, user: str, password: str) -> bool:
    return _try(hub, user, password) == 302


# The hub's API through the socket of her sandbox (``autograder/hub/relay.py``), with the
# token her kernel inherits from her server; ``Connection: close``: one request per connection.
ASK_THE_HUB = """import http.client, json, os, socket
from urllib.parse import unquote, urlsplit
api = urlsplit(os.environ['JUPYTERHUB_API_URL'])
class Relayed(http.client.HTTPConnection):
    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(unquote(api.netloc))
result = {}
for method, path in ASKED:
    ask = Relayed('hub', timeout=10)
    ask.request(method, api.path + path, body=b'{}' if method == 'POST' else None, headers={
        'Authorization': 'token ' + os.environ['JUPYTERHUB_API_TOKEN']})
    answer = ask.getresponse()
    body = answer.read()
    result[f'{method} {path}'] = [answer.status, json.loads(body).get('name') if path == '/user' else '']
"""


def test_her_token_reaches_only_the_hub_routes_her_server_needs(hub, alice):
    """Her kernel holds her server's token and reaches the hub's API only through the relay in
    her sandbox: who she is, yes; anything else of hers or anyone's, refused before the hub."""
    asked = [("GET", "/user"), ("GET", "/users"), ("GET", "/users/bob/tokens"),
             ("GET", "/users/alice/tokens"), ("POST", "/users/bob/activity"),
             ("DELETE", "/users/bob/server"), ("POST", "/users/alice/tokens"),
             ("GET", "/proxy"), ("GET", "/services")]
    result = alice.probe(ASK_THE_HUB.replace("ASKED", repr(asked)))
    assert result.pop("GET /user") == [200, "alice"]
    assert result == {f"{method} {path}": [403, ""] for method, path in asked[1:]}


def test_her_sandbox_has_a_network_of_its_own_with_only_its_loopback(hub, alice):
    """Seen from the machine: every process of hers is in one network namespace, not the
    machine's, whose only interface is ``lo``; her server listens on its Unix socket and on no
    port; her kernels speak to it over Unix sockets (``hub/student``), and what listens on a
    port in her namespace is each kernel's pipe for the output of forked processes."""
    kernels = alice.probe("import glob, json\nfrom jupyter_core.paths import jupyter_runtime_dir\n"
                          "result = [json.load(open(f))['transport'] for f in "
                          "glob.glob(jupyter_runtime_dir() + '/kernel-*.json')]")
    mine = processes_of((hub.state / "homes" / "alice").stat().st_uid)
    nets = {listening.namespace(pid) for pid in mine}
    assert len(nets) == 1 and nets != {listening.namespace(os.getpid())}, nets
    interfaces = [line.split(":")[0].strip()
                  for line in open(f"/proc/{mine[0]}/net/dev").read().splitlines()[2:]]
    assert interfaces == ["lo"]
    held = listening.listeners(mine)
    assert kernels and set(kernels) == {"ipc"}, kernels
    assert Listener(nets.pop(), "unix", f"{sandbox.RUN}/{SERVER_SOCKET}") in held
    assert sum(found.family != "unix" for found in held) == len(kernels), held   # the pipes


REACH_EVERY_ONE = """import errno, socket
result = {}
for family, address, port in TARGETS:
    kind = {'inet': socket.AF_INET, 'inet6': socket.AF_INET6, 'unix': socket.AF_UNIX}[family]
    where = ('\\0' + address[1:] if address.startswith('@') else address) if family == 'unix' else (
        (address if address not in ('0.0.0.0', '::') else ('127.0.0.1', '::1')[family == 'inet6']), port)
    with socket.socket(kind) as probe:
        probe.settimeout(3)
        try:
            probe.connect(where)
            said = 'connected'
        except OSError as error:
            said = errno.errorcode.get(error.errno, str(error))
    result[f'{family} {address} {port}'] = said
"""


def test_from_her_kernel_nothing_of_anyone_else_listens(hub, alice, bob, instructor):
    """Every socket listening in the machine's network namespace (the hub's API, the proxy's
    port and API, the instructor's server and kernels, the relays of every sandbox) and in
    every other student's (Bob's server and kernels), listed from the machine's side, and the
    sockets of every user's server and relay at their paths on the machine: her kernel
    connects to none. A Unix socket's path that she reaches is one of her own sandbox's (Bob's
    server listens at the same path in his, where she cannot see)."""
    bob.run("print('a kernel of bob')")
    instructor.run("print('a kernel of the instructor')")
    hub_pid = next(c.pid for c in psutil.net_connections("tcp")
                   if c.status == psutil.CONN_LISTEN and c.laddr.port == hub.port + 1)
    held = listening.listeners(listening.tree(hub_pid))
    hers = listening.namespace(processes_of((hub.state / "homes" / "alice").stat().st_uid)[0])
    own_paths = {found.address for found in held if found.namespace == hers}
    others = {found for found in held if found.namespace != hers}
    others |= {Listener("machine", "unix", str(path)) for path in (hub.state / "sandboxes").glob("*/run/*.sock")}
    targets = sorted((found.family, found.address, found.port) for found in others)
    result = alice.probe(REACH_EVERY_ONE.replace("TARGETS", repr(targets)), timeout=120)
    reached = {target: said for target, said in result.items()
               if said == "connected" and target.split(" ")[1] not in own_paths}
    namespaces = {found.namespace for found in others} - {"machine"}
    print(f"\nshe tried {len(targets)} listening sockets of {len(namespaces)} other network "
          f"namespaces and the machine's paths: "
          + ", ".join(f"{n} {said}" for said, n in sorted(Counter(result.values()).items())))
    assert reached == {}, reached
    ports = {found.port for found in others if found.family == "inet"}
    assert {hub.port, hub.port + 1, hub.port + 2} <= ports, ports
    assert len(namespaces) >= 2            # the machine's and Bob's at least
    assert sum(found.address.endswith(f"/{SERVER_SOCKET}") for found in others) >= 3   # Bob's, the paths


def test_a_link_in_place_of_her_servers_socket_leads_the_proxy_nowhere_else(hub, alice, bob):
    """Her server's socket is in a folder she may write: she puts a symbolic link to the
    socket the proxy reaches Bob's server at in its place. The proxy connects to the pin of
    her server's own socket (``autograder/hub/server_socket.py``): it reaches her server still."""
    bobs = hub.state / "sandboxes" / "bob" / SERVER_SOCKET
    alice.probe(f"import os\npath = '{sandbox.RUN}/{SERVER_SOCKET}'\n"
                f"os.symlink('{bobs}', path + '.link')\nos.replace(path + '.link', path)\nresult = 0")
    assert os.readlink(hub.state / "sandboxes" / "alice" / "run" / SERVER_SOCKET) == str(bobs)
    me = alice.api("GET", "me")
    assert me.status_code == 200 and me.json()["identity"]["username"] == "alice", me.text[:300]


# Her kernel opens many connections and holds them: to the proxy's port (no such port in her
# network) and to the hub's API through her relay, which keeps at most relay.CONNECTIONS.
FLOOD = """import resource, socket, os
from urllib.parse import unquote, urlsplit
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
flood, said = [], {}
for kind, where in ((socket.AF_INET, ('127.0.0.1', PORT)),
                    (socket.AF_UNIX, unquote(urlsplit(os.environ['JUPYTERHUB_API_URL']).netloc))):
    for _ in range(COUNT):
        probe = socket.socket(kind)
        probe.settimeout(5)
        try:
            probe.connect(where)
            flood.append(probe)
            said['held'] = said.get('held', 0) + 1
        except OSError as error:
            said[error.strerror] = said.get(error.strerror, 0) + 1
            probe.close()
result = said
"""


def test_a_flood_of_connections_from_her_kernel_leaves_the_others_logging_in(hub, alice, bob):
    """Issue 46 (5c): 20,000 idle connections from one kernel took the proxy's open files and
    the login page failed 5 of 8 tries. Her kernel now tries 10,000 and holds what it gets,
    while Bob logs in and works: the proxy is not in her network (every try refused), and the
    hub's relay for her accepts at most ``relay.CONNECTIONS`` at once (a few more wait in its
    queue, the rest fail at connect); Bob's 8 logins all succeed."""
    hub_pid = next(c.pid for c in psutil.net_connections("tcp")
                   if c.status == psutil.CONN_LISTEN and c.laddr.port == hub.port + 1)
    proxy_pid = next(c.pid for c in psutil.net_connections("tcp")
                     if c.status == psutil.CONN_LISTEN and c.laddr.port == hub.port + 2)
    files_before = psutil.Process(hub_pid).num_fds(), psutil.Process(proxy_pid).num_fds()
    with Pulse(hub, bob) as pulse:
        said = alice.probe(FLOOD.replace("PORT", str(hub.port)).replace("COUNT", "5000"), timeout=300)
        files_during = psutil.Process(hub_pid).num_fds(), psutil.Process(proxy_pid).num_fds()
        logins = [_logs_in(hub, "bob", hub.password("bob")) for _ in range(8)]
    alice.run("for probe in flood:\n    probe.close()\nflood.clear()")
    print(f"\nher kernel's 10,000 tries: {said}; open files of the hub and the proxy "
          f"before {files_before}, during {files_during}; Bob's logins {logins.count(True)} of 8, "
          f"slowest answer of his server or the hub meanwhile {pulse.slowest:.2f} s")
    assert said.get("Connection refused") == 5000         # the proxy's port: not in her network
    assert logins == [True] * 8 and pulse.failures == [], (logins, pulse.failures)
    assert files_during[0] - files_before[0] <= relay.CONNECTIONS + 16, (files_before, files_during)
    assert files_during[1] - files_before[1] <= 16, (files_before, files_during)


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
    """Two daemons of hers (``setsid nohup``, a double fork), then JupyterHub stops her server.

    Both ignore the hang-up of her terminal closing, as daemons do; the terminal answers before
    they are through ``exec`` and ``fork``, so the test waits until both are seen (30 s at most).
    """
    alice.shell("(setsid nohup sleep 4242 > /dev/null 2>&1 &); (python3 -c 'import os, signal, "
                "time; signal.signal(signal.SIGHUP, signal.SIG_IGN); os.fork() and os._exit(0); "
                "os.setsid(); time.sleep(4343)' &)")
    uid = (hub.state / "homes" / "alice").stat().st_uid
    deadline = time.monotonic() + 30
    while len(daemons := daemons_of(uid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert len(daemons) == 2, processes_of(uid)
    alice.stop()
    assert processes_of(uid) == [] and not os.path.ismount(hub.state / "homes" / "alice")


def daemons_of(uid: int) -> list[int]:
    """Her processes whose command line names 4242 or 4343 (the two daemons' sleeps)."""
    found = []
    for pid in processes_of(uid):
        try:
            if any(n in Path(f"/proc/{pid}/cmdline").read_bytes() for n in (b"4242", b"4343")):
                found.append(pid)
        except (FileNotFoundError, ProcessLookupError):
            pass
    return found


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
