"""JupyterHub's spawner for the course hub: every user's server in a sandbox of its own.

A student's server starts as follows (``SandboxSpawner.start``): their Unix account is made
on first use (``accounts``), their home image mounted (``homes``; their exchange inbound's,
which stays mounted, ``exchange``), their control groups made
with the limits, emptied of anything a previous hub left (``cgroups``), and the server runs in
``bwrap`` as their account (``sandbox``), its process placed in the groups before it runs
(``make_preexec_fn``), so that everything it starts is counted and limited there. Her sandbox
has a network namespace of its own: her server listens on a Unix socket in the folder
``<state>/sandboxes/<user>/run`` (root's, mode 1777, shown in her sandbox only, at
``sandbox.RUN``), which the proxy routes to (``http+unix://``) through a pin of root's
(``server_socket``), and reaches the hub's API through the hub's socket there (``relay``;
both bound and reached through a short link, ``short_sandboxes``: a socket's path is short),
from her server's start to its stop. When the
server stops (JupyterHub's stop, the idle culler, a hub that shuts down), every process left
in the groups is killed and the home unmounted.

The instructor's server runs in the same sandbox as the instructor's account
(``accounts.INSTRUCTOR``, which owns the course: ``autograder.hub.instructor``), from the
hub's environment, with the course, the exchange and the hub's code at their own paths and a
home of its own (``<state>/homes/<instructor>``, a folder): no capability, no-new-privs,
nothing of ``<state>`` but that home. It has no limits: grading is the instructor's to run.
"""
from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import signal
import stat
import time
from pathlib import Path
from urllib.parse import quote, urlsplit

from jupyter_server import DEFAULT_JUPYTER_SERVER_PORT
from jupyterhub.spawner import SimpleLocalProcessSpawner
from traitlets import Any, Unicode

from autograder.hub import accounts, exchange, homes, relay, sandbox, server_socket
from autograder.pipeline.sandbox.cgroups import Cgroup, group
from autograder.pipeline.sandbox.limits import Limits
from autograder.hub.student_env import interpreter

KEPT = ("LANG", "LC_ALL", "JPY_API_TOKEN")
SERVER_SOCKET, HUB_SOCKET = "server.sock", "hub.sock"     # in a student's sandbox.RUN
# JupyterHub's single-user server, as its ``jupyterhub-singleuser`` script starts it, without
# jsonschema's optional IRI checker: importing it builds dozens of parsers, 1.6 s of CPU of the
# 3.5 s a server takes to start (autograder/__init__.py says why no Jupyter schema needs it).
# ``-P``: the server's folder (a student's home, the course) is not put on its import path.
SINGLEUSER = ("import sys; sys.modules['rfc3987_syntax'] = None; "
              "from jupyterhub.singleuser import main; sys.exit(main())")


SANDBOXES = "sandboxes"   # in the hub's state: a folder of root's per user
RUN_FOLDER = "run"        # in a user's: her server's socket and the hub's (``sandbox.RUN``)
SHORT_ROOT = Path("/run/minitorch-hub")   # root's, 0700: short names of the hubs' sandboxes/


def short_sandboxes(state: Path) -> Path:
    """A short name of ``<state>/sandboxes``, through which the hub binds and the proxy reaches
    the students' sockets: a Unix socket's path may not be longer than 107 bytes, which a
    deep state folder alone exceeds. A link of root's, in a folder only root may open."""
    SHORT_ROOT.mkdir(mode=0o700, parents=True, exist_ok=True)
    held = SHORT_ROOT.lstat()
    if not stat.S_ISDIR(held.st_mode) or held.st_uid != 0 or held.st_mode & 0o077:
        raise RuntimeError(f"{SHORT_ROOT} must be a folder of root's that only root opens")
    target = (state / SANDBOXES).resolve()
    link = SHORT_ROOT / hashlib.sha256(str(target).encode()).hexdigest()[:12]
    if not link.is_symlink() or Path(os.readlink(link)) != target:
        made = link.with_name(link.name + f".{os.getpid()}")
        made.unlink(missing_ok=True)
        made.symlink_to(target)
        made.replace(link)
    return link


def unix_url(path: str | Path) -> str:
    """The ``http+unix://`` address of the HTTP server on the Unix socket ``path``."""
    return f"http+unix://{quote(str(path), safe='')}"


def server_command(python: Path) -> list[str]:
    """The single-user server's command, run by the interpreter ``python``."""
    return [str(python), "-P", "-c", SINGLEUSER]


class SandboxSpawner(SimpleLocalProcessSpawner):
    """Every user's server in a sandbox of its own (see the module)."""

    instructor = Unicode(help="The hub user whose server opens the course.").tag(config=True)
    course = Unicode(help="The course folder, the instructor's server's root.").tag(config=True)
    instructor_environment = Unicode(help="The instructor's virtual environment (the hub's).").tag(config=True)
    instructor_config = Unicode(help="The instructor's Jupyter configuration (hub/instructor).").tag(config=True)
    code = Unicode(help="The hub's code (this repository), read-only in the instructor's server.").tag(config=True)
    state = Unicode(help="The folder of disks/, homes/ and sandboxes/ (root's, 0700).").tag(config=True)
    student_environment = Unicode(help="The student virtual environment.").tag(config=True)
    student_config = Unicode(help="The students' Jupyter configuration (hub/student).").tag(config=True)
    account_prefix = Unicode("jupyter-", help="Unix account names: prefix + user.").tag(config=True)
    cgroup_parent = Unicode("minitorch-hub", help="Students' groups: <parent>/<user>.").tag(config=True)
    limits = Any(Limits(), help="An autograder.pipeline.sandbox.limits.Limits for every student.").tag(config=True)
    exchange_root = Unicode(help="The nbgrader exchange (outside the sandboxes).").tag(config=True)
    course_id = Unicode("minitorch", help="The nbgrader course id.").tag(config=True)
    hub_relay = Any(None, help="A student's server's way to the hub's API (relay.Relay), while it runs.")

    @property
    def is_student(self) -> bool:
        """A student's server: limited, in a home image; else the instructor's."""
        return self.user.name != self.instructor

    @property
    def instructor_account(self) -> accounts.Account:
        return accounts.ensure(self.account_prefix, self.instructor, accounts.INSTRUCTOR)

    @property
    def cgroup(self) -> Cgroup:
        return group(f"{self.cgroup_parent}/{self.user.name}")

    def student_view(self, account: accounts.Account) -> sandbox.View:
        """What the student's sandbox shows, their exchange folders made on the way."""
        env = Path(self.student_environment)
        binds = exchange.prepare(Path(self.exchange_root), self.course_id, account,
                                 self.instructor_account, Path(self.state) / "disks",
                                 self.limits.inbound)
        binds.append((self.run_folder, sandbox.RUN, True))
        return sandbox.View(account, self.home, env, interpreter(env),
                            Path(self.student_config), self.sandbox_folder,
                            tuple(binds), (exchange.INSIDE,), shm_bytes=self.limits.memory // 4,
                            own_network=True)

    def instructor_view(self, account: accounts.Account) -> sandbox.View:
        """What the instructor's sandbox shows: the course and the exchange, read-write, and
        the hub's code read-only, each at its own path."""
        env, course, code = Path(self.instructor_environment), Path(self.course), Path(self.code)
        shared = [] if course == code else [(code, self.code, False)]
        shared += [(course, self.course, True), (Path(self.exchange_root), self.exchange_root, True)]
        return sandbox.View(account, self.home, env, interpreter(env), Path(self.instructor_config),
                            self.sandbox_folder, tuple(shared))

    @property
    def sandbox_folder(self) -> Path:
        """Outside, the user's folder of root's for her sandbox (``<state>/sandboxes/<user>``),
        by its real path: what is mounted and made there."""
        return Path(self.state) / SANDBOXES / self.user.name

    @property
    def short_sandbox_folder(self) -> Path:
        """The same folder through the short link of ``short_sandboxes`` (made if missing): where
        the sockets are bound and reached, as a socket's path is short."""
        return short_sandboxes(Path(self.state)) / self.sandbox_folder.name

    @property
    def run_folder(self) -> Path:
        """Outside, the folder of a student's server's socket and the hub's (``sandbox.RUN``)."""
        return self.sandbox_folder / RUN_FOLDER

    async def start(self):
        view = await asyncio.to_thread(self._prepare if self.is_student else self._prepare_instructor)
        self.cmd = sandbox.command(view) + server_command(view.environment / "bin" / "python")
        self.notebook_dir = view.inside_home if self.is_student else self.course
        return await (self._start_student(view) if self.is_student else super().start())

    async def _start_student(self, view: sandbox.View) -> str:
        """Her relay to the hub's API, her server, then the pin of its socket: its address."""
        # Jupyter Server takes a socket only with its default port, which has no use in her
        # network namespace: the address the hub gives the server (JUPYTERHUB_SERVICE_URL).
        self.port = DEFAULT_JUPYTER_SERVER_PORT
        short = self.short_sandbox_folder
        self.hub_relay = relay.Relay(short / RUN_FOLDER / HUB_SOCKET, self.user.name,
                                     self.hub.api_url)
        await self.hub_relay.start()
        await super().start()
        await self._pin_server_socket(view.account.uid)
        # JupyterHub keeps a port with every server's address, which the proxy would take for
        # part of the socket's path: the address the hub and the proxy connect to has none.
        self.server.connect_url = unix_url(short / SERVER_SOCKET)
        return self.server.connect_url

    @property
    def pinned_socket(self) -> Path:
        """Root's file beside her run folder, where her server's socket is pinned."""
        return self.sandbox_folder / SERVER_SOCKET

    async def _pin_server_socket(self, uid: int) -> None:
        """Wait for her server's socket, then pin it (``server_socket``): the proxy's way in."""
        made, deadline = self.run_folder / SERVER_SOCKET, time.monotonic() + self.http_timeout
        while not server_socket.made(made):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{self.user.name}'s server made no socket at {made}")
            await asyncio.sleep(0.2)
        await asyncio.to_thread(server_socket.pin, made, self.pinned_socket, uid)

    def get_args(self) -> list[str]:
        """A student's server listens on its socket in ``sandbox.RUN``, not on a port."""
        args = super().get_args()
        return args + [f"--ServerApp.sock={sandbox.RUN}/{SERVER_SOCKET}"] if self.is_student else args

    def _prepare_instructor(self) -> sandbox.View:
        """The instructor's account, home and identity files."""
        view = self.instructor_view(self.instructor_account)
        self.home.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chown(self.home, view.account.uid, view.account.gid)
        sandbox.identity_files(view)
        return view

    def _prepare(self) -> sandbox.View:
        """Account, home, identity files and limits, for a server about to start."""
        account = accounts.ensure(self.account_prefix, self.user.name)
        view = self.student_view(account)
        self._clean_up()
        homes.mount(Path(self.state) / "disks" / f"{self.user.name}.ext4", view.home,
                    self.limits.disk, account)
        sandbox.identity_files(view)
        shutil.rmtree(self.run_folder, ignore_errors=True)     # nothing of hers left in it
        self.run_folder.mkdir(mode=0o700)
        os.chmod(self.run_folder, 0o1777)
        self.cgroup.create(self.limits)
        return view

    @property
    def home(self) -> Path:
        """The user's home outside the sandbox: where a student's image is mounted."""
        return Path(self.state) / "homes" / self.user.name

    def make_preexec_fn(self, name):
        """Before the server runs: into the student's groups, and SIGINT, which JupyterHub
        stops servers with, restored (a hub started in the background ignores it)."""
        def preexec() -> None:
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            if self.is_student:
                self.cgroup.join_self()
        return preexec

    def get_env(self) -> dict[str, str]:
        """A server gets the hub's variables for it and the course's (``environment``),
        nothing of the hub's own environment (``env_keep``: PATH, PYTHONPATH, ...)."""
        env = super().get_env()
        environment = self.student_environment if self.is_student else self.instructor_environment
        env = {k: v for k, v in env.items() if k.startswith("JUPYTERHUB_") or k in KEPT}
        if self.is_student:     # the hub's API through its socket in her sandbox
            api = unix_url(f"{sandbox.RUN}/{HUB_SOCKET}") + urlsplit(self.hub.api_url).path
            env.update(JUPYTERHUB_API_URL=api,
                       JUPYTERHUB_ACTIVITY_URL=f"{api}/users/{quote(self.user.name)}/activity")
        return {**env, "HOME": f"/home/{self.user.name}", "USER": self.user.name,
                "SHELL": "/bin/bash", "TMPDIR": "/tmp", "JUPYTER_CONFIG_PATH": sandbox.CONFIG,
                "PATH": f"{Path(environment) / 'bin'}:/usr/bin:/bin", **self.environment}

    async def stop(self, now: bool = False) -> None:
        await super().stop(now=now)
        if self.is_student:
            await self._close_relay()
            await asyncio.to_thread(self._clean_up)

    async def poll(self):
        status = await super().poll()
        if status is not None and self.is_student:
            await self._close_relay()
            if self.cgroup.processes() or os.path.ismount(self.home):
                await asyncio.to_thread(self._clean_up)
        return status

    async def _close_relay(self) -> None:
        if self.hub_relay is not None:
            await self.hub_relay.close()
            self.hub_relay = None

    def _clean_up(self) -> None:
        """Kill what is left in the student's groups, then unmount the home."""
        left = self.cgroup.kill()
        if left:
            self.log.error("Processes %s of %s would not die", sorted(left), self.user.name)
        self.cgroup.remove()
        homes.unmount(self.pinned_socket)
        homes.unmount(self.home)
