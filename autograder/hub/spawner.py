"""JupyterHub's spawner for the course hub: a sandbox per student server, the instructor's as is.

A student's server starts as follows (``SandboxSpawner.start``): their Unix account is made
on first use (``accounts``), their home image mounted (``homes``), their control groups made
with the limits, emptied of anything a previous hub left (``cgroups``), and the server runs in
``bwrap`` as their account (``sandbox``), its process placed in the groups before it runs
(``make_preexec_fn``), so that everything it starts is counted and limited there. When the
server stops (JupyterHub's stop, the idle culler, a hub that shuts down), every process left
in the groups is killed and the home unmounted. The instructors' servers run as the hub's own
user with the full environment, in the course directory.
"""
from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

from jupyterhub.spawner import SimpleLocalProcessSpawner
from traitlets import Any, Set, Unicode

from autograder.hub import accounts, exchange, homes, sandbox
from autograder.hub.cgroups import Cgroup, group
from autograder.hub.limits import Limits
from autograder.hub.student_env import interpreter

KEPT = ("LANG", "LC_ALL", "JPY_API_TOKEN")
# JupyterHub's single-user server, as its ``jupyterhub-singleuser`` script starts it, without
# jsonschema's optional IRI checker: importing it builds dozens of parsers, 1.6 s of CPU of the
# 3.5 s a server takes to start (autograder/__init__.py says why no Jupyter schema needs it).
# ``-P``: the server's folder (a student's home, the course) is not put on its import path.
SINGLEUSER = ("import sys; sys.modules['rfc3987_syntax'] = None; "
              "from jupyterhub.singleuser import main; sys.exit(main())")


def server_command(python: Path) -> list[str]:
    """The single-user server's command, run by the interpreter ``python``."""
    return [str(python), "-P", "-c", SINGLEUSER]


class SandboxSpawner(SimpleLocalProcessSpawner):
    """Students' servers each in a sandbox of their own (see the module)."""

    instructors = Set(help="Hub users whose servers run unsandboxed, as the hub's user.").tag(config=True)
    state = Unicode(help="The folder of disks/, homes/ and sandboxes/ (root's, 0700).").tag(config=True)
    student_environment = Unicode(help="The student virtual environment.").tag(config=True)
    student_config = Unicode(help="The students' Jupyter configuration (hub/student).").tag(config=True)
    account_prefix = Unicode("jupyter-", help="Unix account names: prefix + user.").tag(config=True)
    cgroup_parent = Unicode("minitorch-hub", help="Students' groups: <parent>/<user>.").tag(config=True)
    limits = Any(Limits(), help="An autograder.hub.limits.Limits for every student.").tag(config=True)
    exchange_root = Unicode(help="The nbgrader exchange (outside the sandboxes).").tag(config=True)
    course_id = Unicode("minitorch", help="The nbgrader course id.").tag(config=True)

    @property
    def sandboxed(self) -> bool:
        return self.user.name not in self.instructors

    @property
    def cgroup(self) -> Cgroup:
        return group(f"{self.cgroup_parent}/{self.user.name}")

    def view(self, account: accounts.Account) -> sandbox.View:
        """What the student's sandbox shows, their exchange folders made on the way."""
        env = Path(self.student_environment)
        binds = exchange.prepare(Path(self.exchange_root), self.course_id, account)
        return sandbox.View(account, self.student_home, env, interpreter(env),
                            Path(self.student_config), Path(self.state) / "sandboxes" / self.user.name,
                            tuple(binds), (exchange.INSIDE,), shm_bytes=self.limits.memory // 4)

    async def start(self):
        if self.sandboxed:
            view = await asyncio.to_thread(self._prepare)
            self.cmd = sandbox.command(view) + server_command(view.environment / "bin" / "python")
            self.notebook_dir = view.inside_home
        return await super().start()

    def _prepare(self) -> sandbox.View:
        """Account, home, identity files and limits, for a server about to start."""
        account = accounts.ensure(self.account_prefix, self.user.name)
        view = self.view(account)
        self._clean_up()
        homes.mount(Path(self.state) / "disks" / f"{self.user.name}.ext4", view.home,
                    self.limits.disk, account)
        sandbox.identity_files(view)
        self.cgroup.create(self.limits)
        return view

    @property
    def student_home(self) -> Path:
        """Where the student's home image is mounted, outside the sandbox."""
        return Path(self.state) / "homes" / self.user.name

    def make_preexec_fn(self, name):
        """Before the server runs: into the student's groups (a sandbox), and SIGINT, which
        JupyterHub stops servers with, restored (a hub started in the background ignores it)."""
        first = super().make_preexec_fn(name) if not self.sandboxed else self.cgroup.join_self

        def preexec() -> None:
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            first()
        return preexec

    def get_env(self) -> dict[str, str]:
        """A student's server gets the hub's variables for it and the course's, nothing of
        the hub's own environment (``env_keep``: PATH, PYTHONPATH, ...)."""
        env = super().get_env()
        if not self.sandboxed:
            return env
        home = f"/home/{self.user.name}"
        env = {k: v for k, v in env.items() if k.startswith("JUPYTERHUB_") or k in KEPT
               or k in self.environment}
        return dict(env, HOME=home, USER=self.user.name, SHELL="/bin/bash", TMPDIR="/tmp",
                    JUPYTER_CONFIG_PATH=sandbox.CONFIG,
                    PATH=f"{Path(self.student_environment) / 'bin'}:/usr/bin:/bin")

    async def stop(self, now: bool = False) -> None:
        await super().stop(now=now)
        if self.sandboxed:
            await asyncio.to_thread(self._clean_up)

    async def poll(self):
        status = await super().poll()
        if status is not None and self.sandboxed and (self.cgroup.processes()
                                                      or os.path.ismount(self.student_home)):
            await asyncio.to_thread(self._clean_up)
        return status

    def _clean_up(self) -> None:
        """Kill what is left in the student's groups, then unmount the home."""
        left = self.cgroup.kill()
        if left:
            self.log.error("Processes %s of %s would not die", sorted(left), self.user.name)
        self.cgroup.remove()
        homes.unmount(self.student_home)
