"""What the real-browser tests share: Debian's Chromium driven by playwright, free ports,
waiting for a server to answer, and the documentation's screenshots. (Imported as ``browser``:
pytest puts tests/ on ``sys.path``.)

A test that needs a part this machine lacks skips, printing why, except under CI=true,
where that is a failure.
"""
from __future__ import annotations

import os
import random
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

# Chromium's headless shell (Debian's chromium-headless-shell, the same engine without the
# browser's window system around it): a JupyterLab page loads on 2.4 s of CPU, 3.7 s in
# `chromium --headless`, and it starts on 0.3 s instead of 0.66 s. (Playwright runs the
# same shell headless.)
CHROMIUM = Path("/usr/bin/chromium-headless-shell")
# `make screenshots` names a folder here; the tests then save what they see for the site.
SCREENSHOTS = "MINITORCH_SCREENSHOTS"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def require(reason: str | None, what: str = "browser test") -> None:
    """Skip (locally) or fail (under CI=true) when ``reason`` says what is missing."""
    if reason and os.environ.get("CI") == "true":
        pytest.fail(f"{what} cannot run under CI: {reason}")
    if reason:
        print(f"SKIP {what}: {reason}")
        pytest.skip(reason)


def missing_browser(chromium: Path = CHROMIUM) -> str | None:
    """Why Chromium cannot be driven here, or None."""
    if not chromium.exists():
        return f"{chromium} is missing (apt-get install chromium-headless-shell)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is missing (pip install -e '.[dev]')"
    return None


def launch(playwright):
    """Headless Chromium from Debian (playwright downloads no browser here)."""
    return playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS,
                                      headless=True)


def screenshot(target, name: str) -> None:
    """Save a picture of ``target`` (a playwright page or locator) as ``NAME.png`` in the
    folder $MINITORCH_SCREENSHOTS names, if it is set: the documentation shows what the
    browser tests saw (``make screenshots``), never a picture drawn by hand."""
    folder = os.environ.get(SCREENSHOTS)
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        target.screenshot(path=str(Path(folder) / f"{name}.png"))


def score_by_hand(page, grade_id: str, score: str) -> None:
    """Give the cell ``grade_id`` ``score`` in Formgrader's submission view on ``page``, as an
    instructor types it, and wait until it is saved. Formgrader puts each cell's saved score
    into its input once it has fetched the grades: a score typed before that is overwritten, or
    typed after the saved one ("8" and "9": 89, saved as the maximum). The fetch gives the
    inputs their placeholders in the same step."""
    page.wait_for_selector(f"input#{grade_id}_extra_credit[placeholder]", state="attached")
    page.fill(f"input.score#{grade_id}", score)
    page.keyboard.press("Tab")
    page.wait_for_selector(f".nbgrader_cell:has(#{grade_id}) .score-saved.glyphicon-ok")


# Where free_port looks: below the machine's ephemeral ports, which the kernel hands out on
# its own (a connection's local port, a bind to port 0). A port found free there stays free
# until the server binds it, whatever the other workers' kernels, clusters and browsers do
# meanwhile; taken from the ephemeral range, the hub's second port was once taken first.
LOWEST_PORT = 20000
EPHEMERAL_PORTS = Path("/proc/sys/net/ipv4/ip_local_port_range")


def free_port(span: int = 1) -> int:
    """A port on 127.0.0.1 that is free, with the ``span - 1`` ports after it, below the
    ephemeral ports (another worker's ``free_port`` may draw the same: one in thousands)."""
    try:
        ephemeral = int(EPHEMERAL_PORTS.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        ephemeral = 32768              # Linux's default
    for _ in range(100):
        port = random.randrange(LOWEST_PORT, ephemeral - span)
        if all(_free(port + k) for k in range(span)):
            return port
    raise RuntimeError(f"no {span} free consecutive ports on 127.0.0.1 between {LOWEST_PORT} "
                       f"and {ephemeral}")


def _free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def wait_until_up(url: str, server: subprocess.Popen, name: str, timeout: float = 60) -> None:
    """Poll ``url`` until it answers; fail early if ``server`` exits."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"{name} exited with code {server.returncode}")
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except OSError:
            time.sleep(0.3)
    raise TimeoutError(f"{name} did not answer at {url} within {timeout} s")


def stop(server: subprocess.Popen, timeout: float = 15) -> None:
    """End a server the test started: SIGTERM, then SIGKILL after ``timeout`` seconds."""
    server.terminate()
    try:
        server.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()
