"""The instructor's JupyterLab on a scratch course, configured as ``make lab`` and the hub's
instructor server are (``hub/instructor/`` on ``JUPYTER_CONFIG_PATH``), and the routes it serves.
(Imported as ``instructor_lab``: pytest puts this folder on ``sys.path``.)
"""
from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

from browser import free_port, stop, wait_until_up

from autograder.pipeline.course import REPO, tool_env

# What the server's router holds once every extension is loaded: the pattern of each handler.
ROUTES = """
import json, sys
from jupyter_server.serverapp import ServerApp
app = ServerApp()
app.initialize(sys.argv[1:])
found = []
for host in app.web_app.default_router.rules:
    for rule in getattr(host.target, "rules", []):
        pattern = getattr(rule.matcher, "regex", None)
        if pattern is not None:
            found.append(pattern.pattern)
print(json.dumps(found))
"""


class Lab(NamedTuple):
    url: str
    token: str
    log: Path


def environment(root: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The server's environment: the course's configuration, then ``hub/instructor/``'s."""
    paths = os.pathsep.join([str(root), str(REPO / "hub" / "instructor")])
    return tool_env({"JUPYTER_CONFIG_PATH": paths, **(extra or {})})


def _options(root: Path, port: int, token: str) -> list[str]:
    return ["--allow-root", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
            "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={root}"]


@contextmanager
def running(root: Path, log: Path, extra: dict[str, str] | None = None) -> Iterator[Lab]:
    """``jupyter-lab`` at ``root`` until the block ends; its output in ``log``."""
    port, token = free_port(), secrets.token_hex(16)
    command = [str(Path(sys.executable).with_name("jupyter-lab")), *_options(root, port, token)]
    # Its kernels speak over Unix sockets, whose paths must stay within 107 bytes: a runtime
    # folder of a few characters, not the session's (tests/conftest.py's isolated_jupyter).
    runtime = tempfile.mkdtemp(prefix="lab-")
    env = environment(root, {"JUPYTER_RUNTIME_DIR": runtime, **(extra or {})})
    with open(log, "wb") as out:
        process = subprocess.Popen(command, cwd=root, env=env, stdout=out,
                                   stderr=subprocess.STDOUT)
    try:
        wait_until_up(f"http://127.0.0.1:{port}/api/status?token={token}", process, "jupyter-lab")
        yield Lab(f"http://127.0.0.1:{port}", token, log)
    finally:
        stop(process)
        shutil.rmtree(runtime, ignore_errors=True)


def routes(root: Path) -> list[str]:
    """The pattern of every route the instructor's server at ``root`` serves (its extensions'
    too), read from a server set up as ``running`` sets it up but never started."""
    options = _options(root, free_port(), secrets.token_hex(16))
    done = subprocess.run([sys.executable, "-c", ROUTES, *options], cwd=root,
                          env=environment(root), capture_output=True, text=True, timeout=120,
                          check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])
