"""Where grading jobs run: Dask distributed, on this machine or on an existing cluster.

``Executor(scheduler=None, workers=N)`` starts a ``distributed.LocalCluster`` of N
worker processes with one thread each (one submission at a time per process), forked from a
server that has imported Dask and the job (``local_worker``);
``Executor(scheduler="tls://HOST:PORT", tls_files=TLSFiles(...))`` (or Dask's own
``DASK_SCHEDULER_ADDRESS``) connects to a running cluster instead: dask-jobqueue on Slurm or
PBS, dask-kubernetes, a ``dask scheduler`` with ``dask worker`` processes started by hand.
Either way only holders of the cluster's TLS credentials get in (``tls``);
the local cluster and its dashboard listen on 127.0.0.1 only.

- ``check`` refuses workers whose packages differ from the instructor's
  (``autograder.pipeline.job.fingerprint``) or that have more than one thread, before any
  job runs; a worker that joins later refuses its first job (other packages) or a second
  one at once (more threads) the same way, which stops the run.
- ``results`` submits the jobs, each with the run's ``Material``, a bounded number
  at a time (so a class of thousands is never all in memory), and yields each
  ``Result`` as it arrives, with a progress bar.
- A worker that dies (a submission that crashes its process, the machine's memory
  killer, a node lost) takes its job with it: Dask runs the job again elsewhere, and
  after ``RETRIES`` deaths (the scheduler's ``allowed-failures``) gives up on it. That job,
  like one whose grading code raised, is the grader's failure, not the student's: its result
  leaves every cell without a score, flagged ``needs review: grader fault``
  (``job.lost``). The class goes on.
- The run never waits without bound: when no worker is connected, or none runs a job of
  this run, for ``STALL_SECONDS`` (said when the wait starts), ``results`` raises ``Stalled``;
  what was yielded is kept, the jobs not yet finished are cancelled, for the next run. The
  progress bar shows how many workers are connected.
"""
from __future__ import annotations

import logging
import sys
import time
from collections.abc import Iterable, Iterator
from itertools import islice
from uuid import uuid4

import dask
from distributed import Client, KilledWorker, LocalCluster, wait
from tqdm import tqdm

from autograder.pipeline.executor import local_worker, tls
from autograder.pipeline.job import fingerprint, runner
from autograder.pipeline.job.job import Job, Material, MismatchError, Result, lost, run

RETRIES = 2             # a job's worker may die this often before the job is given up
CONNECT_SECONDS = 5
WORKER_WAIT_SECONDS = 60   # for the first worker of an existing cluster to join
IN_FLIGHT_PER_THREAD = 2
STALL_SECONDS = 120     # no worker running a job of the run this long: the run stops
NOTICE_SECONDS = 10     # ... this long: the run says so (a shorter gap is a job changing hands)
POLL_SECONDS = 1.0      # how often the run looks at the workers while no result arrives
# The local cluster's settings. Each worker's statistical profiler (the dashboard's "Profile"
# page) would sample its stack every 10 ms, in CPU the jobs need. Every Dask process (the
# scheduler here, each nanny and worker) would also wake 50 times a second to time its own
# event loop (a warning past 3 s blocked) and twice a second to sample the machine for the
# dashboard's graphs: a cluster of two workers spent 1.45 s of CPU in 20 s doing nothing,
# 0.63 s with these at 0.5 s and 2 s. The nannies' memory watch (every 0.1 s) stays as it is.
LOCAL_CONFIG = {"distributed.scheduler.allowed-failures": RETRIES,
                "distributed.worker.profile.enabled": False,
                "distributed.admin.tick.interval": "500ms",
                "distributed.admin.system-monitor.interval": "2s",
                # its workers fork from a server that has imported Dask and the job
                "distributed.worker.multiprocessing-method": "forkserver"}


class ExecutorError(RuntimeError):
    """The cluster cannot grade: unreachable, or its workers differ from the instructor's."""


class Stalled(ExecutorError):
    """No worker ran a job of the run for ``STALL_SECONDS``: the run stopped, the rest is left."""


class Executor:
    """A Dask client, and the local cluster it started (if it started one)."""

    def __init__(self, scheduler: str | None = None, workers: int = 2,
                 tls_files: tls.TLSFiles | None = None, insecure: bool = False) -> None:
        """A local cluster of ``workers`` processes, or the cluster at ``scheduler`` reached
        with ``tls_files`` (in the clear only if ``insecure``)."""
        self.cluster = None
        if workers < 1:
            raise ExecutorError(f"--workers must be at least 1, not {workers}")
        address = scheduler or dask.config.get("scheduler-address", None)
        if address:
            self.client = _connect(address, tls_files, insecure)
        else:
            runner.fork_server()    # started with the job's imports, before Dask's own
            with dask.config.set(LOCAL_CONFIG):
                self.cluster = LocalCluster(
                    n_workers=workers, threads_per_worker=1, processes=True,
                    host="127.0.0.1", dashboard_address="127.0.0.1:0",   # any free port
                    security=tls.local(), env=local_worker.state(),
                    preload=[local_worker.__name__],
                    silence_logs=logging.CRITICAL)  # a lost worker is reported per job
            self.client = Client(self.cluster)    # with the cluster's credentials
        self.where = address or f"a local cluster of {workers} worker process(es)"

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *_exc) -> None:
        self.close()

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()

    @property
    def dashboard(self) -> str | None:
        """The Dask dashboard's address, if one is running."""
        try:
            return self.client.dashboard_link if self.client.scheduler_info().get(
                "services", {}).get("dashboard") else None
        except Exception:  # noqa: BLE001 - no dashboard is not an error
            return None

    def check(self, installed: dict[str, str]) -> None:
        """Refuse a cluster without workers, with workers of more than one thread, or whose
        workers' packages differ from ``installed``."""
        try:
            self.client.wait_for_workers(1, timeout=WORKER_WAIT_SECONDS)
        except TimeoutError as error:
            raise ExecutorError(f"no worker joined {self.where} within {WORKER_WAIT_SECONDS} s; "
                                "start some (dask worker ADDRESS --nthreads 1)") from error
        crowded = [f"{worker} ({threads} threads)"
                   for worker, threads in self.client.nthreads().items() if threads != 1]
        if crowded:
            raise ExecutorError("refusing to grade: a worker process grades one submission at a "
                                "time, and these have more threads: " + ", ".join(crowded)
                                + "; start them with dask worker ADDRESS --nthreads 1")
        try:
            found = self.client.run(fingerprint.installed)
        except Exception as error:  # noqa: BLE001 - reported as the cluster's problem
            raise ExecutorError(f"the workers of {self.where} cannot report their packages "
                                f"({type(error).__name__}: {error}); install minitorch-course "
                                "and its dependencies on every worker") from error
        problems = [f"worker {worker}: " + "; ".join(diff) for worker, theirs in found.items()
                    if (diff := fingerprint.differences(installed, theirs))]
        if problems:
            raise ExecutorError("refusing to grade: workers whose packages differ from this "
                                "machine's could score differently.\n" + "\n".join(problems))

    def results(self, jobs: Iterable[Job], total: int, material: Material,
                progress: bool = True) -> Iterator[Result]:
        """Run every job; yield each result as it arrives. Leaving the loop early (Ctrl-C,
        ``Stalled``) cancels the jobs still queued or running."""
        jobs = iter(jobs)
        pending: dict = {}      # future: job
        bar = tqdm(total=total, disable=not progress, unit="submission", desc="autograding",
                   file=sys.stderr, dynamic_ncols=True)
        counts = {"graded": 0, "failed": 0, "workers": 0}
        watch = _Watch(bar, self.where, total)
        try:
            self._submit(jobs, material, pending)
            while pending:
                for future in self._finished(pending, watch, counts):
                    result = _result(future, pending.pop(future), material)
                    counts["graded" if result.status == "graded" else "failed"] += 1
                    bar.set_postfix(counts, refresh=False)
                    bar.update()
                    yield result
                self._submit(jobs, material, pending)
        finally:
            bar.close()
            self.client.cancel(list(pending))

    def _finished(self, pending: dict, watch: _Watch, counts: dict) -> list:
        """The futures of ``pending`` that finish within ``POLL_SECONDS`` (at least one, or
        none); the bar's count of connected workers updated, and ``watch`` told whether any
        worker runs a job of the run."""
        try:
            done = list(wait(list(pending), timeout=POLL_SECONDS,
                             return_when="FIRST_COMPLETED").done)
        except TimeoutError:
            done = []
        try:
            processing = self.client.processing()
        except (OSError, TimeoutError):     # the scheduler out of reach: no worker known either
            processing = {}
        counts["workers"] = len(processing)
        watch.bar.set_postfix(counts)
        busy = {key for keys in processing.values() for key in keys}
        watch.saw(bool(done) or any(future.key in busy for future in pending), counts)
        return done

    def _submit(self, jobs: Iterator[Job], material: Material, pending: dict) -> None:
        """Keep about ``IN_FLIGHT_PER_THREAD`` jobs per worker thread submitted, each with the
        material (not scattered once: scattered data dies with the workers that hold it). A
        job's key names its unit, never its student: the dashboard shows keys to anyone on the
        machine, and a key must not be reused while the scheduler may still hold its result."""
        room = IN_FLIGHT_PER_THREAD * max(1, sum(self.client.nthreads().values())) - len(pending)
        for job in islice(jobs, max(0, room)):
            future = self.client.submit(run, job, material, pure=False,
                                        key=f"grade-{job.assignment}-{uuid4().hex}")
            pending[future] = job


class _Watch:
    """How long no worker has run a job of the run; ``Stalled`` past ``STALL_SECONDS``."""

    def __init__(self, bar: tqdm, where: str, total: int) -> None:
        self.bar, self.where, self.total = bar, where, total
        self.since: float | None = None
        self.told = False

    def saw(self, working: bool, counts: dict) -> None:
        """Note whether a worker ran (or finished) a job of the run at this look."""
        now = time.monotonic()
        if working or self.since is None:
            self.since, self.told = (None if working else now), False
        elif now - self.since >= STALL_SECONDS:
            left = self.total - counts["graded"] - counts["failed"]
            raise Stalled(f"no worker of {self.where} ran a job of this run for {STALL_SECONDS} s "
                          f"({counts['workers']} connected): stopped, {left} submission(s) left "
                          "ungraded for the next run")
        elif now - self.since >= NOTICE_SECONDS and not self.told:
            self.told = True
            self.bar.write(f"no worker of {self.where} has run a job of this run for "
                           f"{NOTICE_SECONDS} s ({counts['workers']} connected); the run stops "
                           f"after {STALL_SECONDS} s unless one does", file=sys.stderr)


def _connect(address: str, tls_files: tls.TLSFiles | None, insecure: bool) -> Client:
    """A client of the scheduler at ``address``, refused unless it can prove who it talks to."""
    try:
        security = tls.for_scheduler(address, tls_files, insecure)
    except tls.TLSError as error:
        raise ExecutorError(str(error)) from error
    if security is None:
        print(tls.INSECURE.format(address=address), file=sys.stderr)
    try:
        return Client(address, timeout=CONNECT_SECONDS, security=security)
    except (OSError, TimeoutError) as error:
        raise ExecutorError(f"cannot reach the Dask scheduler at {address} ({error}). Is it "
                            "running, is the address right (tls://HOST:PORT), and were it and "
                            "its workers started with the certificate authority of "
                            "--tls-ca-file?") from error


def _result(future, job: Job, material: Material) -> Result:
    """The job's result; a job that could not run at all becomes a lost one (no score)."""
    if future.status == "finished":
        return future.result()
    try:
        error = future.exception()
    except Exception as cancelled:  # noqa: BLE001 - e.g. cancelled by the cluster
        error = cancelled
    if isinstance(error, MismatchError):
        raise ExecutorError(str(error)) from error
    if isinstance(error, KilledWorker):
        reason = (f"its grading worker died {RETRIES + 1} times while running it: the machine's "
                  "memory, a lost node, or a crash of the worker's process")
    else:
        reason = f"the grader failed: {type(error).__name__}: {error}"
    return lost(job, material.notebooks[job.assignment], reason, material.sandbox)
