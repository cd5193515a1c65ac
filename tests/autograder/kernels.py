"""Kernels for the tests of the grader's channel: a fresh ipykernel with the agent installed.
(Imported as ``kernels``: pytest puts this folder on ``sys.path``.)"""
from __future__ import annotations

import contextlib
from typing import Iterator

from jupyter_client.blocking import BlockingKernelClient
from jupyter_client.manager import start_new_kernel

from autograder.remote.channel import Channel


@contextlib.contextmanager
def agent_kernel(code: str) -> Iterator[tuple[BlockingKernelClient, Channel]]:
    """A fresh kernel that ran ``code`` (which must succeed), with the grader's agent installed."""
    manager, client = start_new_kernel(kernel_name="python3")
    channel = Channel(manager.get_connection_info())
    try:
        reply = client.execute_interactive(code, timeout=60)
        assert reply["content"]["status"] == "ok", reply["content"]
        channel.install()
        yield client, channel
    finally:
        channel.close()
        client.stop_channels()
        manager.shutdown_kernel(now=True)
