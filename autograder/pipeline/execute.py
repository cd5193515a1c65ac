"""nbgrader's ``Execute`` preprocessor, reading the kernel's messages in short polls.

nbclient waits for a cell's reply with one poll of the kernel's shell socket as long as
the cell's whole time limit. After a widget cell that poll can miss the reply's arrival
and return only at the deadline (nbclient issue 312, open): a graded run of unit 7 spent
30 s idle after its ``interact`` cell, which ran in 0.4 s. Polls of at most
``POLL_SECONDS``, repeated until the same deadline, see a waiting message at the next
poll, so such a stall lasts a second at most.
"""
from __future__ import annotations

from queue import Empty
from time import monotonic

from nbclient.util import ensure_async
from nbgrader.preprocessors import Execute as NbgraderExecute

POLL_SECONDS = 1.0


class ShortPolls:
    """A kernel client's channel whose ``get_msg(timeout)`` polls at most ``POLL_SECONDS`` at a
    time until ``timeout`` (None: forever); everything else is the channel's own."""

    def __init__(self, channel) -> None:
        self._channel = channel

    def __getattr__(self, name: str):
        return getattr(self._channel, name)

    async def get_msg(self, timeout: float | None = None) -> dict:
        deadline = None if timeout is None else monotonic() + timeout
        while True:
            left = POLL_SECONDS if deadline is None else max(0.0, deadline - monotonic())
            try:
                return await ensure_async(self._channel.get_msg(timeout=min(left, POLL_SECONDS)))
            except Empty:
                if deadline is not None and monotonic() >= deadline:
                    raise


class Execute(NbgraderExecute):
    """``nbgrader.preprocessors.Execute`` whose kernel client polls in short slices."""

    def on_notebook_start(self, **_) -> None:
        """nbclient's hook, run once the kernel client exists: wrap its shell and iopub
        channels (a method, as nbgrader writes its own on_cell_executed hook)."""
        self.kc._shell_channel = ShortPolls(self.kc.shell_channel)
        self.kc._iopub_channel = ShortPolls(self.kc.iopub_channel)
