"""Executing notebooks headless as nbconvert does (nbclient, no timeout), watched from outside.

nbclient with no timeout waits for each cell's ``execute_reply`` forever. It misses a reply
that arrives while it sends on the same shell socket (nbclient issue #312), which it does
when it plays an ipywidgets ``Output`` widget for the kernel. ``RecordingClient`` notes every
message the executor sends on the shell channel, so a test can require that it sent nothing
but execution requests; ``watched`` runs the execution in a thread and fails the test, naming
the cell, if it has not finished in time (a stall would otherwise hang the suite).
(Imported as ``headless``: pytest puts tests/ on ``sys.path``.)
"""
from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from nbclient import NotebookClient
from nbclient.util import run_sync

# What an executor must send on the shell channel, and nothing else.
REQUESTS = {"kernel_info_request", "execute_request"}


class RecordingClient(NotebookClient):
    """nbclient's executor (``timeout`` None, as nbconvert's default), noting what it sends
    on the shell channel (``sent``) and which cell it is executing (``cell``)."""

    def __init__(self, nb, **kwargs) -> None:
        super().__init__(nb, timeout=None, kernel_name="python3", **kwargs)
        self.sent: list[str] = []
        self.cell = None

    async def async_start_new_kernel_client(self):
        kc = await super().async_start_new_kernel_client()
        send = kc.shell_channel.send

        def recording(msg: dict) -> None:
            self.sent.append(msg["header"]["msg_type"])
            send(msg)

        kc.shell_channel.send = recording
        return kc

    start_new_kernel_client = run_sync(async_start_new_kernel_client)  # nbclient binds its own

    async def async_execute_cell(self, cell, cell_index, *args, **kwargs):
        self.cell = cell.get("id", cell_index)
        return await super().async_execute_cell(cell, cell_index, *args, **kwargs)

    execute_cell = run_sync(async_execute_cell)

    def unexpected(self) -> set[str]:
        """What it sent on the shell channel besides execution requests."""
        return set(self.sent) - REQUESTS


def watched(client: RecordingClient, run: Callable[[], object], seconds: float) -> None:
    """Call ``run`` in a thread; fail, naming ``client``'s current cell, if it takes longer
    than ``seconds`` (the thread is left behind: a stalled nbclient never returns)."""
    failure: list[BaseException] = []

    def target() -> None:
        try:
            run()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test's thread
            failure.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        pytest.fail(f"headless execution stalled: no reply for cell {client.cell!r} "
                    f"within {seconds:.0f} s; the executor sent {client.sent[-3:]}")
    if failure:
        raise failure[0]
