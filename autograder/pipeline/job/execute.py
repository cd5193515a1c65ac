"""nbgrader's ``Execute`` preprocessor, reading the kernel's messages in short polls.

nbclient waits for a cell's reply with one poll of the kernel's shell socket as long as
the cell's whole time limit. After a widget cell that poll can miss the reply's arrival
and return only at the deadline (nbclient issue 312, open): a graded run of unit 7 spent
30 s idle after its ``interact`` cell, which ran in 0.4 s. Polls of at most
``POLL_SECONDS``, repeated until the same deadline, see a waiting message at the next
poll, so such a stall lasts a second at most.

It also bounds what a notebook's outputs may hold, here in the grader's process, whatever
the kernel does: once a cell has sent ``max_cell_output`` characters of output (text, HTML,
images, widget messages, every kind), or the notebook ``max_notebook_output``, further
outputs are dropped with one note. Error outputs always pass (they decide a cell's score;
``LimitOutputSize`` shortens them afterwards). The kernel caps its own printing too, but
that cap lives in the student's process, where it can be undone.

And it keeps to the job's time budget (``job_deadline``, on the monotonic clock, and the job's
CPU time, whose end the worker marks with the file ``job_spent``; the job kills the kernel
then, which ends a cell's wait within a second, and no check or graded run waits past the
clock's end): a cell that had not
finished by then, and every cell after it, gets one ``BUDGET_ERROR`` output, so a graded cell
that did not finish scores zero and the job can say why. Unit 11's graded run reads the
kernel's CPU time from outside it: its job's control group (``job_cgroup``), or where it has
none, its processes in ``/proc`` (``autograder.pipeline.sandbox.kernel_cpu``).
A graded cell whose check failed on the grader's side is marked for the job
(``autograder.pipeline.flags``), which leaves it without a score; one whose verdict asks for
a review is marked so, its score kept.
"""
from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Callable
from queue import Empty
from time import monotonic

import zmq
import zmq.asyncio
from jupyter_client import AsyncKernelClient, AsyncKernelManager
from nbclient.exceptions import DeadKernelError
from nbclient.util import ensure_async, run_sync
from nbformat.v4 import new_output
from nbgrader.preprocessors import Execute as NbgraderExecute
from traitlets import Float, Integer, Type, Unicode, default

from autograder.pipeline import flags
from autograder.pipeline.sandbox import cgroups
from autograder.pipeline.sandbox.kernel_cpu import KernelCPU
from autograder.registry import SECONDS_PER_CHECK
from autograder.cells import hidden, visible
from autograder.remote.channel import Channel, ChannelError

POLL_SECONDS = 1.0
EXIT_POLL_SECONDS = 0.005
READY_POLL_SECONDS = 0.02
RECONNECT_MS = 5
BOUNDED = {"stream", "display_data", "execute_result", "update_display_data", "comm_open",
           "comm_msg", "clear_output"}
DROPPED = "\n[... the grader dropped this cell's further outputs: more than {:,} characters ...]\n"
BUDGET_ERROR = "JobTimeBudget"
OUT_OF_TIME = ("The grader stopped here: this submission used up its time budget of {}. "
               "A graded cell that had not finished by then scores zero; an instructor will "
               "look at the submission.")


def _flag(cell, graders: list) -> None:
    """Mark ``cell`` unscored when the outputs the grader made for it say the grader failed."""
    why = hidden.faulted(graders)
    if why is not None:
        flags.mark(cell, flags.Flag.GRADER_FAULT, why)


def size(content: object) -> int:
    """The characters of every string in a message's content (nested dicts and lists)."""
    if isinstance(content, str):
        return len(content)
    if isinstance(content, dict):
        return sum(size(key) + size(value) for key, value in content.items())
    if isinstance(content, (list, tuple)):
        return sum(size(value) for value in content)
    return 8


class KernelClient(AsyncKernelClient):
    """jupyter_client's client, which asks a starting kernel for its info again every
    ``READY_POLL_SECONDS``. jupyter_client's own waits 0.2 s for a status message on iopub
    after the first reply, and the first is always missed when the subscription connected
    after the kernel sent it: a fifth of a second of every job.

    Its sockets try again every ``RECONNECT_MS`` to reach a kernel that has not bound its own
    yet. The client connects as soon as the kernel's process starts, about 0.1 s before the
    kernel listens, and ZeroMQ's default retry, after 100 ms, left the job idle for half of
    its kernel's start (a release submission of unit 3 waited 160 ms for its kernel, 85 ms
    with this)."""

    @default("context")
    def _context_default(self) -> zmq.asyncio.Context:
        context = super()._context_default()
        context.setsockopt(zmq.RECONNECT_IVL, RECONNECT_MS)
        return context

    async def _async_wait_for_ready(self, timeout: float | None = None) -> None:
        deadline = monotonic() + (float("inf") if timeout is None else timeout)
        while True:
            self.kernel_info()
            if await self._ready_reply():
                return
            if not await self._async_is_alive():
                raise RuntimeError("Kernel died before replying to kernel_info")
            if monotonic() > deadline:
                raise RuntimeError(f"Kernel didn't respond in {timeout:g} seconds")

    async def _ready_reply(self) -> bool:
        """A kernel_info reply on shell, then a message on iopub (both connected)."""
        try:
            reply = await ensure_async(self.shell_channel.get_msg(timeout=READY_POLL_SECONDS))
            if reply["msg_type"] != "kernel_info_reply":
                return False
            await ensure_async(self.iopub_channel.get_msg(timeout=READY_POLL_SECONDS))
        except Empty:
            return False
        self._handle_kernel_info_reply(reply)
        return True

    wait_for_ready = _async_wait_for_ready     # jupyter_client binds its own at class creation


class KernelManager(AsyncKernelManager):
    """jupyter_client's manager, which looks every ``EXIT_POLL_SECONDS`` (not 0.1 s) whether a
    killed kernel has gone (``Execute`` kills every kernel: ``shutdown_kernel = 'immediate'``)
    and whose clients are ``KernelClient``."""

    async def _async_wait(self, pollinterval: float = EXIT_POLL_SECONDS) -> None:
        await super()._async_wait(min(pollinterval, EXIT_POLL_SECONDS))

    client_factory = Type(KernelClient, klass=AsyncKernelClient)


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
    """``nbgrader.preprocessors.Execute`` whose kernel client polls in short slices and whose
    notebook keeps a bounded amount of output."""

    _channel: Channel | None = None

    max_cell_output = Integer(1_000_000, help="characters of output kept per cell").tag(config=True)
    max_notebook_output = Integer(20_000_000, help="characters of output kept per notebook"
                                  ).tag(config=True)
    job_deadline = Float(0.0, help="when the job's time budget ends, on the monotonic clock "
                         "(0: never); no cell starts after it").tag(config=True)
    job_budget = Unicode("", help="the job's time budget, for the note on cells it stopped"
                         ).tag(config=True)
    job_spent = Unicode("", help="the file the worker writes when the job's CPU time is up "
                        "(empty: none)").tag(config=True)
    job_cgroup = Unicode("", help="the job's control group (autograder.pipeline.sandbox."
                         "cgroups); empty: it has none").tag(config=True)
    check_wait_seconds = Float(2 * SECONDS_PER_CHECK, help="how long a hidden cell's check "
                               "waits for the kernel (job.Limits)").tag(config=True)
    sandbox_record = Unicode("", help="the sandbox's record (autograder.pipeline.sandbox.spawn); "
                             "empty: the kernel is the process the kernel manager started"
                             ).tag(config=True)

    @default("shutdown_kernel")
    def _kill_the_kernel(self) -> str:
        """A graded kernel has nothing to save: SIGKILL (its sandbox dies with it), not a
        shutdown request and polls every 0.1 s until the process has gone (0.4 s a job)."""
        return "immediate"

    def __init__(self, **kwargs) -> None:
        kwargs.setdefault("kernel_manager_class", KernelManager)   # nbgrader's would win
        super().__init__(**kwargs)

    async def async_execute_cell(self, cell, cell_index: int, execution_count=None,
                                 store_history: bool = True):
        """The cell graded or run (``_execute``) within the job's time budget: once the budget
        has run out no cell starts, and a cell it stopped (its kernel killed) says so."""
        if cell.cell_type == "code" and self._out_of_time():
            return self._stopped(cell, [])
        try:
            cell = await self._execute(cell, cell_index, execution_count, store_history)
        except DeadKernelError:
            if not self._out_of_time():
                raise
            return self._stopped(cell, [])
        if self._out_of_time() and any(o.output_type == "error" for o in cell.get("outputs", ())):
            return self._stopped(cell, cell.outputs)
        return cell

    def _out_of_time(self) -> bool:
        return (bool(self.job_deadline) and monotonic() >= self.job_deadline) or (
            bool(self.job_spent) and os.path.exists(self.job_spent))

    def _left(self) -> float:
        """The seconds left of the job's budget: what a check or a graded run may wait (a
        killed kernel does not close the shell socket on which a check's first wait lies)."""
        return self.job_deadline - monotonic() if self.job_deadline else math.inf

    def _stopped(self, cell, outputs: list):
        """``cell`` with ``outputs`` and the note that the job's time budget stopped it."""
        message = OUT_OF_TIME.format(self.job_budget)
        cell.outputs = [*outputs, new_output("error", ename=BUDGET_ERROR, evalue=message,
                                             traceback=[f"{BUDGET_ERROR}: {message}"])]
        return cell

    async def _execute(self, cell, cell_index: int, execution_count, store_history: bool):
        """A hidden test cell is graded by ``autograder.cells.hidden``; a visible one that
        carries points runs in the kernel and is scored by ``autograder.cells.visible``;
        every other cell runs in the kernel as usual."""
        call = hidden.parse(cell.source) if cell.cell_type == "code" else None
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if call is None and grade_id in visible.VERDICTS:
            verdict = self._verdicts.judge(self._agent(), grade_id, self._left())
            await self._drain_iopub()
            cell = await self._in_kernel(cell, cell_index, execution_count, store_history)
            cell.outputs = visible.scored(cell.outputs, verdict)
            _flag(cell, verdict)
            review = visible.reviewed(verdict)
            if review is not None:
                flags.mark_review(cell, review)
            return cell
        if call is None:
            return await self._in_kernel(cell, cell_index, execution_count, store_history)
        cell.outputs = hidden.grade(self._agent(), *call,
                                    wall=min(self.check_wait_seconds, self._left()))
        _flag(cell, cell.outputs)
        self.code_cells_executed += 1           # it ran, here: numbered as nbclient numbers cells
        cell.execution_count = execution_count or self.code_cells_executed
        await self._drain_iopub()
        return cell

    async def _in_kernel(self, cell, cell_index: int, execution_count, store_history: bool):
        """nbclient's run of the cell in the kernel, once the agent no longer serves the grader
        (each check's end has stopped it already: this is the backstop)."""
        if self._channel is not None:
            self._channel.pause()
        return await super().async_execute_cell(cell, cell_index, execution_count, store_history)

    async def _drain_iopub(self) -> None:
        """Drop the kernel's status messages about the grader's requests: unread, they fill
        the client's queue (ZeroMQ keeps 1000) and the next cell's messages would be lost."""
        while True:
            try:
                await ensure_async(self.kc.iopub_channel.get_msg(timeout=0))
            except Empty:
                return

    execute_cell = run_sync(async_execute_cell)   # nbclient binds its own at class creation

    def preprocess(self, nb, resources=None, km=None):
        """nbclient's run of the notebook, once every mark of ``flags`` is gone from it: only
        the grader's own, made during this run, reach the graded notebook."""
        flags.clear(nb.cells)
        return super().preprocess(nb, resources, km)

    def _agent(self) -> Channel:
        """The channel to this notebook's kernel, its agent installed on first use."""
        if self._channel is None:
            self._channel = Channel(self.km.get_connection_info())
            try:
                self._channel.install()
            except ChannelError as error:
                self._channel.broken = str(error)
        return self._channel

    def _kernel_cpu(self) -> float:
        """The CPU seconds this notebook's kernel has used, read from outside it: its job's
        control group's, or its processes'."""
        if self._cpu is None:
            record = Path(self.sandbox_record) if self.sandbox_record else None
            self._cpu = (cgroups.group(self.job_cgroup).cpu_seconds if self.job_cgroup else
                         KernelCPU(record, None if record else self.km.provisioner.pid))
        return self._cpu()

    def process_message(self, msg: dict, cell, cell_index: int):
        if msg["msg_type"] in BOUNDED and not self._room(msg, cell, cell_index):
            return None
        return super().process_message(msg, cell, cell_index)

    def _room(self, msg: dict, cell, cell_index: int) -> bool:
        """Count the message against its cell's and the notebook's budgets; False: drop it."""
        cost = size(msg["content"])
        if cell_index not in self._full and \
                self._used.get(cell_index, 0) + cost <= self.max_cell_output and \
                sum(self._used.values()) + cost <= self.max_notebook_output:
            self._used[cell_index] = self._used.get(cell_index, 0) + cost
            return True
        if cell_index not in self._full:     # the first drop in this cell: say so, once
            self._full.add(cell_index)
            limit = min(self.max_cell_output, self.max_notebook_output)
            cell.outputs.append(new_output("stream", name="stderr", text=DROPPED.format(limit)))
        return False

    def on_notebook_start(self, **_) -> None:
        """nbclient's hook, run once the kernel client exists: wrap its shell and iopub
        channels (a method, as nbgrader writes its own on_cell_executed hook); fresh output budgets
        and runs of the graded cells."""
        self._used: dict[int, int] = {}
        self._full: set[int] = set()
        self._verdicts = visible.Verdicts(self._kernel_cpu)
        self._cpu: Callable[[], float] | None = None
        self.kc._shell_channel = ShortPolls(self.kc.shell_channel)
        self.kc._iopub_channel = ShortPolls(self.kc.iopub_channel)

    async def _async_cleanup_kernel(self) -> None:
        """nbclient's, and the grader's channel to the kernel closed (nbconvert's synchronous
        ``setup_kernel`` never calls the ``on_notebook_complete`` hook; a channel left open
        to the garbage collector could block a long-lived grading worker for good)."""
        try:
            await super()._async_cleanup_kernel()
        finally:
            if self._channel is not None:
                self._channel.close()
                self._channel = None

    _cleanup_kernel = run_sync(_async_cleanup_kernel)
