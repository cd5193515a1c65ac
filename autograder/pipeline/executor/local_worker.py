"""A local cluster's worker starts as a spawned process would, though it is forked.

The workers of ``Executor``'s local cluster fork from the fork server that has imported Dask
and the job already (``autograder.pipeline.job.runner``). A forked child has the server's
environment, working folder and import path, those of the moment the server started, which
a long-lived process (a test session, a notebook) may have changed since; a spawned worker
would have this process's. So ``state()`` hands the worker the run's, in one variable of the
environment Dask's nanny sets, and ``dask_setup``, which Dask runs in the worker before any
job (a worker preload), puts them in place, with the worker's one BLAS thread that Dask's
nanny would set before spawning (``distributed.nanny.pre-spawn-environ``).
"""
from __future__ import annotations

import json
import os
import sys

import dask
from threadpoolctl import threadpool_limits

VARIABLE = "AUTOGRADER_WORKER_STATE"


def state() -> dict[str, str]:
    """The environment for the nanny to give its worker: this process's, folder and path."""
    return {VARIABLE: json.dumps({"env": dict(os.environ), "cwd": os.getcwd(),
                                  "path": list(sys.path)})}


def dask_setup(worker) -> None:
    """In the worker, at its start: the run's environment, folder and import path."""
    run = json.loads(os.environ[VARIABLE])
    before_spawn = dask.config.get("distributed.nanny.pre-spawn-environ", {})
    os.environ.clear()
    os.environ.update(run["env"] | {name: str(value) for name, value in before_spawn.items()})
    os.chdir(run["cwd"])
    sys.path[:] = run["path"]
    threadpool_limits(limits=1)
