"""The grading Execute preprocessor reads kernel messages in short polls (a poll that missed a
reply's arrival used to last until the cell's deadline)."""
from __future__ import annotations

import asyncio
from pathlib import Path
from queue import Empty
from time import monotonic

import pytest
import zmq

from autograder.pipeline.job import execute
from autograder.pipeline.job.execute import Execute, ShortPolls


class MissedWakeup:
    """A channel whose first poll misses a waiting message and sleeps its whole timeout."""

    def __init__(self) -> None:
        self.timeouts: list[float] = []
        self.name = "shell"

    async def get_msg(self, timeout=None):
        self.timeouts.append(timeout)
        if len(self.timeouts) == 1:
            await asyncio.sleep(timeout)
            raise Empty
        return {"msg": "reply"}


def test_a_missed_message_is_seen_at_the_next_short_poll(monkeypatch):
    monkeypatch.setattr(execute, "POLL_SECONDS", 0.05)
    channel = MissedWakeup()
    start = monotonic()
    assert asyncio.run(ShortPolls(channel).get_msg(timeout=30)) == {"msg": "reply"}
    assert monotonic() - start < 1
    assert channel.timeouts[0] == pytest.approx(0.05)
    assert ShortPolls(channel).name == "shell"


def test_the_deadline_still_holds(monkeypatch):
    monkeypatch.setattr(execute, "POLL_SECONDS", 0.05)

    class Silent:
        async def get_msg(self, timeout=None):
            await asyncio.sleep(timeout)
            raise Empty

    start = monotonic()
    with pytest.raises(Empty):
        asyncio.run(ShortPolls(Silent()).get_msg(timeout=0.2))
    assert 0.2 <= monotonic() - start < 1


def test_grading_jobs_use_it_and_wait_for_late_output():
    from autograder.pipeline.job.job import IOPUB_SECONDS, Limits, _config
    text = _config(Path("course"), Path("gradebook.db"), Limits())
    assert "from autograder.pipeline.job.execute import Execute" in text
    assert f"c.Execute.iopub_timeout = {IOPUB_SECONDS}" in text
    assert Execute().shutdown_kernel == "immediate"     # killed: it has nothing to save


def test_the_client_tries_a_starting_kernel_again_within_milliseconds(tmp_path):
    """It connects before the kernel listens: ZeroMQ's default retry came 100 ms later."""
    manager = execute.KernelManager(transport="ipc", ip=str(tmp_path / "kernel"))
    manager.write_connection_file()
    client = manager.client()
    try:
        for channel in (client.shell_channel, client.iopub_channel, client.control_channel):
            assert channel.socket.getsockopt(zmq.RECONNECT_IVL) == execute.RECONNECT_MS
    finally:
        client.stop_channels()
        manager.cleanup_connection_file()
