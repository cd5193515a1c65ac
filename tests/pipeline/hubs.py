"""One course hub (``make hub``) for the hub tests, and a student's way into it from code.

``hub`` (session-scoped, shared through ``conftest.py`` by the term test and the attack test)
starts ``hub/jupyterhub_config.py`` on a scratch course with students alice, bob, carol and
dave, the student environment built from the bundle (kept between runs in
``~/.cache/minitorch-course/hub-student-env``) and Unix accounts named ``t<port>-<student>``,
removed afterwards with their homes' mounts and control groups. Users open it at
``http://hub.localhost:<port>``, each server on its own host (``alice.hub.localhost``): as
under a real domain, the users' hosts are one site with the hub's, so nothing the tests see
rests on the browser keeping sites apart, only origins. ``Visit`` logs a user in with
requests and runs code in their kernel or commands in their terminal, through the hub's
proxy as their browser would; ``login`` does so in Chromium.

Skips (printing why) without Chromium, playwright, the hub's proxy (``make test`` installs
it with npm), bubblewrap, root or control groups, except under CI=true, where that is a failure.
"""
from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import requests
import websocket
from browser import free_port, launch, missing_browser, require, wait_until_up

from autograder.hub import accounts, homes, origins, student_env
from autograder.pipeline.sandbox import cgroups
from autograder.pipeline.course import REPO, tool_env
from autograder.pipeline.demo.scenario import make_course

HUB_CONFIG = REPO / "hub" / "jupyterhub_config.py"
PROXY = REPO / "hub" / "node_modules" / ".bin" / "configurable-http-proxy"
UNIT, CAPSTONE = "01_setup", "11_capstone"
STUDENTS = ("alice", "bob", "carol", "dave")
LIMITS = "memory=768M,processes=192,cpus=1,disk=256M,inbound=64M"
INSTRUCTOR_PASSWORD = "plural-wombat-harbour-tangerine-47"
HOST = "hub.localhost"
MINUTE = 60_000


@dataclass
class Hub:
    url: str
    course: Path
    state: Path
    env: dict[str, str]
    log: Path
    prefix: str

    def password(self, user: str) -> str:
        with open(self.state / "logins.csv", newline="") as file:
            return {row["user"]: row["password"] for row in csv.DictReader(file)}[user]

    @property
    def port(self) -> int:
        return urlsplit(self.url).port

    @property
    def origins(self) -> origins.Origins:
        """As the hub reads them from its environment."""
        return origins.plan(self.url, self.env.get(origins.SUBDOMAINS_VARIABLE), 0,
                            self.url.startswith("https:"))

    def server(self, user: str) -> str:
        """The address of ``user``'s server, without the final ``/``."""
        return self.origins.server(user).rstrip("/")


def missing_hub() -> str | None:
    """Why the course hub cannot run here, or None."""
    if not PROXY.exists():
        return f"{PROXY} is missing (make test installs it with npm)"
    if os.geteuid() != 0:
        return "the hub makes Unix accounts and sandboxes: the tests must run as root"
    if not shutil.which("bwrap"):
        return "bubblewrap is missing (apt-get install bubblewrap)"
    return cgroups.unavailable()


def hub_env(base: Path, course: Path, port: int, environment: Path) -> dict[str, str]:
    return tool_env({"MINITORCH_COURSE": str(course), "MINITORCH_HUB_STATE": str(base / "state"),
                     "MINITORCH_HUB_PORT": str(port), "MINITORCH_EXCHANGE": str(base / "exchange"),
                     origins.URL_VARIABLE: f"http://{HOST}:{port}",
                     "MINITORCH_HUB_STUDENTS": ",".join(STUDENTS), "MINITORCH_HUB_LIMITS": LIMITS,
                     "MINITORCH_HUB_STUDENT_ENV": str(environment),
                     "MINITORCH_HUB_ACCOUNT_PREFIX": f"t{port}-",
                     "MINITORCH_HUB_INSTRUCTOR_PASSWORD": INSTRUCTOR_PASSWORD})


def start(env: dict[str, str], log: Path) -> subprocess.Popen:
    with open(log, "ab") as out:
        return subprocess.Popen([sys.executable, "-m", "autograder.hub", "-f", str(HUB_CONFIG)],
                                cwd=REPO, env=env, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)


def refusals(environments: list[dict[str, str]]) -> list[dict]:
    """What the hub's config exits with and says under each of ``environments``, loaded as
    ``jupyterhub -f`` loads it, all in one process (tests/pipeline/load_hub_config.py)."""
    done = subprocess.run([sys.executable, str(Path(__file__).with_name("load_hub_config.py")),
                           str(HUB_CONFIG)], input=json.dumps(environments), cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"loading the hub's config crashed:\n{done.stderr[-3000:]}"
    return json.loads(done.stdout)


def stop(hub: subprocess.Popen) -> None:
    """SIGTERM: the hub stops the users' servers and its proxy, then exits."""
    hub.send_signal(signal.SIGTERM)
    try:
        hub.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(hub.pid, signal.SIGKILL)
        hub.wait()


def student_environment() -> Path:
    cache = os.environ.get("MINITORCH_COURSE_CACHE") or Path.home() / ".cache" / "minitorch-course"
    return student_env.build(Path(cache) / "hub-student-env")


def clean_up(state: Path, prefix: str, port: int) -> None:
    """What a hub's students leave on the machine: mounts, control groups, accounts."""
    exchange = state.parent / "exchange"
    for home in [*(state / "homes").glob("*"), *exchange.glob("*/*/*/inbound"),
                 *exchange.glob("*/students")]:
        homes.unmount(home)
    for student in STUDENTS:
        group = cgroups.group(f"minitorch-hub-{port}/{student}")
        group.kill()
        group.remove()
    cgroups.group(f"minitorch-hub-{port}").remove()
    accounts.remove(prefix)


def loopback_names(resolve):
    """``socket.getaddrinfo`` that resolves every ``*.localhost`` name to 127.0.0.1, as
    Chromium does (RFC 6761); glibc here knows ``localhost`` alone."""
    def getaddrinfo(host, *args, **kwargs):
        name = host.decode() if isinstance(host, bytes) else host
        if isinstance(name, str) and name.lower().rstrip(".").endswith(".localhost"):
            host = "127.0.0.1"
        return resolve(host, *args, **kwargs)
    return getaddrinfo


@pytest.fixture(scope="session")
def hub(tmp_path_factory):
    require(missing_browser() or missing_hub(), "JupyterHub test")
    base = tmp_path_factory.mktemp("hub")
    course = base / "course"
    make_course(course, [UNIT, CAPSTONE])
    port = free_port(span=3)
    env, log = hub_env(base, course, port, student_environment()), base / "hub.log"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(socket, "getaddrinfo", loopback_names(socket.getaddrinfo))
        process = start(env, log)
        try:
            url = env[origins.URL_VARIABLE]
            wait_until_up(f"{url}/hub/api", process, "jupyterhub", timeout=90)
            yield Hub(url, course, base / "state", env, log, f"t{port}-")
        finally:
            stop(process)
            clean_up(base / "state", f"t{port}-", port)


@pytest.fixture(scope="module")
def chromium():
    """Chromium for one module's tests: playwright's sync API allows one running instance per
    thread, and test_inert_pages.py starts its own after test_hub.py."""
    from playwright.sync_api import sync_playwright
    with sync_playwright() as playwright:
        browser = launch(playwright)
        yield browser
        browser.close()


def login(chromium, hub: Hub, name: str):
    """A page of ``name``'s own browser session, logged in, on their JupyterLab."""
    page = chromium.new_context(viewport={"width": 1400, "height": 900}).new_page()
    page.set_default_timeout(MINUTE)
    page.goto(f"{hub.url}/hub/login")
    page.fill("#username_input", name)
    page.fill("#password_input", hub.password(name))
    page.click("#login_submit")
    page.wait_for_url(f"{hub.server(name)}/lab**", timeout=2 * MINUTE)
    page.wait_for_selector(".jp-LabShell")
    return page


def processes_of(uid: int) -> list[int]:
    """The processes of the machine that run as ``uid``."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.stat(f"/proc/{pid}").st_uid == uid:
                found.append(int(pid))
        except FileNotFoundError:
            pass
    return found


class Visit:
    """``user`` logged in to ``hub`` with requests, their server started: run code in their
    kernel (``run``) or a command in their terminal (``shell``)."""

    def __init__(self, hub: Hub, user: str, timeout: float = 120) -> None:
        self.hub, self.user, self.http = hub, user, requests.Session()
        self.http.get(f"{hub.url}/hub/login")
        self.http.post(f"{hub.url}/hub/login?next=/hub/spawn/{user}",
                       data={"username": user, "password": hub.password(user),
                             "_xsrf": self.http.cookies.get("_xsrf", path="/hub/")})
        self.base = hub.server(user)
        deadline = time.monotonic() + timeout
        while not self._lab_opens():           # through the OAuth round trip, as a browser
            assert time.monotonic() < deadline, f"{user}'s server did not start"
            time.sleep(0.5)
        self.kernel: str | None = None

    def stop(self, timeout: float = 30) -> None:
        """The user stops their own server through the hub; wait until nothing of theirs runs
        and their home is unmounted."""
        xsrf = self.http.cookies.get("_xsrf", path="/hub/")
        stopped = self.http.delete(f"{self.hub.url}/hub/api/users/{self.user}/server",
                                   headers={"X-XSRFToken": xsrf})
        assert stopped.status_code in (202, 204), stopped.text
        home = self.hub.state / "homes" / self.user
        uid, deadline = home.stat().st_uid, time.monotonic() + timeout
        while (processes_of(uid) or os.path.ismount(home)) and time.monotonic() < deadline:
            time.sleep(0.2)

    def _lab_opens(self) -> bool:
        answer = self.http.get(f"{self.base}/lab")
        return answer.status_code == 200 and answer.url.startswith(self.base)

    def api(self, method: str, path: str, **kwargs) -> requests.Response:
        xsrf = self.http.cookies.get("_xsrf", path=f"/user/{self.user}/") or ""
        return self.http.request(method, f"{self.base}/api/{path}", headers={"X-XSRFToken": xsrf},
                                 **kwargs)

    def _socket(self, path: str) -> websocket.WebSocket:
        cookies = "; ".join(f"{c.name}={c.value}" for c in self.http.cookies)
        return websocket.create_connection(f"{self.base.replace('http', 'ws', 1)}/{path}",
                                           cookie=cookies, timeout=5)

    def run(self, code: str, timeout: float = 60) -> str:
        """What ``code`` prints in the user's kernel (stdout, stderr and the error)."""
        if self.kernel is None:
            self.kernel = self.api("POST", "kernels", json={"name": "python3"}).json()["id"]
        sock, msg_id = self._socket(f"api/kernels/{self.kernel}/channels"), uuid.uuid4().hex
        sock.send(json.dumps({"header": {"msg_id": msg_id, "msg_type": "execute_request",
                                         "username": self.user, "session": msg_id,
                                         "version": "5.3"},
                              "parent_header": {}, "metadata": {}, "channel": "shell",
                              "content": {"code": code, "silent": False, "allow_stdin": False}}))
        return _gather(sock, msg_id, timeout)

    def probe(self, code: str, timeout: float = 60) -> dict | list:
        """Run ``code``, which sets ``result``, in the user's kernel: ``result``, through JSON."""
        out = self.run(code + "\nimport json; print('RESULT' + json.dumps(result))", timeout)
        assert "RESULT" in out, out
        return json.loads(out.split("RESULT", 1)[1])

    def shell(self, command: str, timeout: float = 30) -> str:
        """What ``command`` prints in a new terminal of the user's (until it prints END)."""
        name = self.api("POST", "terminals").json()["name"]
        sock, seen = self._socket(f"terminals/websocket/{name}"), ""
        sock.send(json.dumps(["stdin", f"{command}; echo EN''D\r"]))
        deadline = time.monotonic() + timeout
        while "END" not in seen and time.monotonic() < deadline:
            try:
                kind, *content = json.loads(sock.recv())
            except websocket.WebSocketTimeoutException:
                continue
            seen += content[0] if kind == "stdout" else ""
        sock.close()
        self.api("DELETE", f"terminals/{name}")
        return seen


def _gather(sock: websocket.WebSocket, msg_id: str, timeout: float) -> str:
    out, deadline = [], time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            message = json.loads(sock.recv())
        except websocket.WebSocketTimeoutException:
            continue
        kind, content = message["msg_type"], message["content"]
        if kind == "status" and content["execution_state"] in ("restarting", "dead"):
            out.append(f"kernel {content['execution_state']}")    # killed, e.g. out of memory
            break
        if message.get("parent_header", {}).get("msg_id") != msg_id:
            continue
        if kind == "stream":
            out.append(content["text"])
        elif kind == "error":
            out.append(f"{content['ename']}: {content['evalue']}")
        elif kind == "status" and content["execution_state"] == "idle":
            break
    sock.close()
    return "".join(out)
