"""The Playground in a real browser: JupyterLab in headless Chromium, driven by playwright.

Skips (printing why) without /usr/bin/chromium-headless-shell or playwright, except under CI=true,
where that is a failure. `make screenshots` saves the Playground's picture for the docs.
"""
from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest
from browser import free_port, launch, missing_browser, require, screenshot, stop, wait_until_up

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = Path(__file__).parent / "notebooks" / "playground_demo.ipynb"
SAMPLER = Path(__file__).parent / "notebooks" / "sampler_demo.ipynb"


def _isolated_env(tmp: Path) -> dict[str, str]:
    """Jupyter and matplotlib state in ``tmp`` (lab extensions still come from the venv's share/)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    for var in ("IPYTHONDIR", "JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "MPLCONFIGDIR"):
        env[var] = str(tmp / var.lower())
    # No "fetch the news?" toast over the notebook.
    settings = tmp / "jupyter_config_dir/lab/user-settings/@jupyterlab/apputils-extension"
    settings.mkdir(parents=True)
    (settings / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    return env


@pytest.fixture
def jupyterlab(tmp_path: Path):
    """A JupyterLab server on 127.0.0.1 serving copies of the demo notebooks; yields its base URL and token."""
    require(missing_browser())
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(NOTEBOOK, work)
    shutil.copy(SAMPLER, work)
    port, token = free_port(), secrets.token_hex(16)
    command = [str(Path(sys.executable).with_name("jupyter-lab")), "--allow-root", "--no-browser",
               "--ip", "127.0.0.1", f"--port={port}", "--ServerApp.port_retries=0",
               f"--ServerApp.token={token}", f"--ServerApp.root_dir={work}",
               "--LabApp.expose_app_in_browser=True"]
    with open(tmp_path / "jupyterlab.log", "wb") as log:
        server = subprocess.Popen(command, env=_isolated_env(tmp_path), stdout=log, stderr=subprocess.STDOUT)
    try:
        base = f"http://127.0.0.1:{port}"
        wait_until_up(f"{base}/api/status?token={token}", server, "jupyter-lab")
        yield base, token
    finally:
        stop(server)


KERNEL_IDLE = """() => {
  const widget = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const kernel = widget && widget.sessionContext && widget.sessionContext.session
                 && widget.sessionContext.session.kernel;
  return !!kernel && kernel.status === 'idle';
}"""


def _status(page) -> str:
    return page.locator(".widget-html-content").last.inner_text()


def _epoch(page) -> int:
    words = _status(page).split()
    return int(words[1]) if words[:1] == ["epoch"] else -1


def _button(page, name: str):
    return page.locator(".jp-OutputArea button.widget-button", has_text=re.compile(rf"^\s*{name}\s*$"))


def _pictures(page) -> list[bytes]:
    """Screenshots of the boundary, curves and layers images, compared by their pixels."""
    images = page.locator(".jupyter-widgets img")
    return [images.nth(i).screenshot() for i in range(images.count())]


@contextmanager
def _running(jupyterlab, notebook: Path, viewport: dict):
    """A page of headless Chromium on ``notebook`` in JupyterLab, every cell run and the kernel
    idle again with the widgets' images drawn; the browser closes when the block ends."""
    from playwright.sync_api import sync_playwright

    base, token = jupyterlab
    with sync_playwright() as p:
        browser = launch(p)
        try:
            page = browser.new_page(viewport=viewport)
            page.goto(f"{base}/lab/tree/{notebook.name}?token={token}")
            page.wait_for_function(KERNEL_IDLE, timeout=60_000)
            page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
            page.wait_for_selector(".jupyter-widgets img", timeout=60_000)
            page.wait_for_function(KERNEL_IDLE, timeout=60_000)
            yield page
        finally:
            browser.close()


def test_playground_renders_steps_and_plays_in_jupyterlab(jupyterlab, tmp_path):
    with _running(jupyterlab, NOTEBOOK, {"width": 1500, "height": 950}) as page:
        assert page.locator(".widget-slider").count() >= 6, "sliders did not render"
        assert page.locator(".widget-dropdown select").count() >= 3, "dropdowns did not render"
        for name in ("Play", "Step", "Reset"):
            assert _button(page, name).count() == 1, f"no {name} button"
        assert page.locator(".jupyter-widgets img").count() == 3
        assert _epoch(page) == 20, _status(page)

        before = _pictures(page)
        _button(page, "Step").click()
        page.wait_for_function("() => document.body.innerText.includes('epoch 21 ')", timeout=20_000)
        page.wait_for_timeout(500)  # the images arrive with the status
        after = _pictures(page)
        assert after[0] != before[0], "the decision boundary picture did not change after Step"
        assert after[1] != before[1], "the loss curves did not change after Step"

        _button(page, "Play").click()
        page.wait_for_function("() => /epoch (2[3-9]|[3-9]\\d|\\d{3}) /.test(document.body.innerText)",
                               timeout=30_000)
        _button(page, "Pause").click()
        _button(page, "Play").wait_for(timeout=20_000)
        page.wait_for_timeout(1000)  # the epoch under way when Pause arrived finishes
        paused_at = _epoch(page)
        page.wait_for_timeout(1500)
        assert _epoch(page) == paused_at > 21, "training went on after Pause"

        shot = tmp_path / "playground.png"
        page.locator(".jp-OutputArea-output").last.screenshot(path=str(shot))
        screenshot(page.locator(".jp-OutputArea-output").last, "playground")
    assert shot.stat().st_size > 20_000


def test_the_sampler_redraws_for_a_prefix_and_names_a_character_it_lacks(jupyterlab):
    with _running(jupyterlab, SAMPLER, {"width": 1300, "height": 900}) as page:
        assert page.locator(".widget-slider").count() == 2, "the temperature and top-k sliders did not render"
        assert "names: " in page.locator(".jupyter-widgets").first.inner_text()
        before = page.locator(".jupyter-widgets img").first.screenshot()

        prefix = page.locator(".widget-text input").first
        prefix.fill("ma")
        page.wait_for_function("() => document.body.innerText.includes(\"after '.ma'\") || "
                               "document.body.innerText.includes('names: ma')", timeout=20_000)
        page.wait_for_function(KERNEL_IDLE, timeout=20_000)
        page.wait_for_timeout(500)
        assert page.locator(".jupyter-widgets img").first.screenshot() != before, "the bars did not move"

        prefix.fill("mz")
        page.wait_for_function("() => document.body.innerText.includes('not in the vocabulary')",
                               timeout=20_000)
        assert page.locator(".jupyter-widgets img").count() == 0


def test_a_missing_browser_skips_locally_and_fails_under_ci(monkeypatch, tmp_path):
    reason = missing_browser(tmp_path / "no-chromium")
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no-chromium is missing"):
        require(reason)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="browser test cannot run under CI"):
        require(reason)
