"""The red-team catalogue: submissions that attack the grader from inside their kernel.

Each attack is code appended to unit 3's ``linear`` solution cell of the untouched
release notebook, so its honest score is zero: any point it gets is forged. What an
attack manages to read it prints, so a leak would reach the graded notebook and the
student's feedback. (Imported as ``hostile``: pytest puts this folder on ``sys.path``.)

Attacks on the checks themselves from inside the kernel (input transformers, replaced
checks, frame walking, reading the reference package) are not here: they need the
checks to move out of the student's process (issue 15, part 2), and are left out until then.
"""
from __future__ import annotations

from dataclasses import dataclass
from string import Template
from typing import Callable

import nbformat
from nbformat import NotebookNode


@dataclass(frozen=True)
class Attack:
    name: str
    story: str
    code: str    # a string.Template: $course, $home, $repo, $port
    tamper: Callable[[NotebookNode], None] | None = None   # edits the notebook's cells


def _grade_cell(nb: NotebookNode, grade_id: str) -> NotebookNode:
    return next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def _inflate(nb: NotebookNode) -> None:
    _grade_cell(nb, "hidden-linear-forward").metadata.nbgrader.points = 1000
    linear = _grade_cell(nb, "linear").metadata.nbgrader
    linear.update(grade=True, points=100)


def _extra_grade_cell(nb: NotebookNode) -> None:
    extra = nbformat.v4.new_code_cell("pass")
    extra.metadata["nbgrader"] = {"grade": True, "grade_id": "free-points", "points": 50,
                                  "locked": False, "solution": False, "schema_version": 3}
    nb.cells.append(extra)


def _to_markdown(nb: NotebookNode) -> None:
    cell = _grade_cell(nb, "hidden-linear-forward")
    cell.cell_type = "markdown"
    del cell["outputs"], cell["execution_count"]


ATTACKS = (
    Attack("env-secrets", "prints the grader's environment (tokens)",
           "import os\nprint('ENV', dict(os.environ))\n"),
    Attack("home-secrets", "reads the instructor's SSH key, by ~ and by its real path",
           "import os\nfor p in (os.path.expanduser('~/.ssh/id_rsa'), '$home/.ssh/id_rsa'):\n"
           "    try:\n        print('LEAK', open(p).read())\n"
           "    except Exception as e:\n        print('blocked:', type(e).__name__)\n"),
    Attack("read-solutions", "reads source/ (solutions) and the repository's .git",
           "import os\nfor p in ('$course/source/03_module_linear/03_module_linear.ipynb',\n"
           "          '$repo/.git/HEAD', '$repo/source/03_module_linear/03_module_linear.ipynb'):\n"
           "    try:\n        print('LEAK', open(p).read())\n"
           "    except Exception as e:\n        print('blocked:', type(e).__name__)\n"),
    Attack("sqlite-uri", "opens the real gradebook through a sqlite URI and gives extra credit",
           "import sqlite3\ntry:\n"
           "    db = sqlite3.connect('file:$course/gradebook.db?mode=rw', uri=True)\n"
           "    db.execute('UPDATE grade SET extra_credit = 20'); db.commit()\n"
           "    print('LEAK wrote the gradebook')\n"
           "except Exception as e:\n    print('blocked:', type(e).__name__)\n"),
    Attack("network", "connects to a listener on the grading machine",
           "import socket\ntry:\n"
           "    socket.create_connection(('127.0.0.1', $port), timeout=3).sendall(b'probe')\n"
           "    print('LEAK connected')\n"
           "except Exception as e:\n    print('blocked:', type(e).__name__)\n"),
    Attack("pidfd-kill", "SIGKILLs every process it can see (the grader, other kernels) by pidfd",
           "import os, signal\nfor pid in [int(p) for p in os.listdir('/proc') if p.isdigit()]:\n"
           "    if pid != os.getpid():\n        try:\n"
           "            signal.pidfd_send_signal(os.pidfd_open(pid), signal.SIGKILL)\n"
           "        except Exception as e:\n            pass\n"),
    Attack("guard-bypass", "switches the audit-hook guard off, then starts a process that "
           "outlives grading and writes into the course",
           "import gc, subprocess\n"
           "for o in gc.get_objects():\n"
           "    if type(o).__name__ == 'Guard':\n        o.active = True\n"
           "subprocess.Popen(['sh', '-c', 'sleep 4; echo pwned > $course/PWNED; "
           "cat $course/source/03_module_linear/03_module_linear.ipynb'], start_new_session=True)\n"),
    Attack("disk-flood", "writes until the disk is full, and into every folder it can find",
           "import os\nwritten = 0\ntry:\n    with open('flood.bin', 'wb') as f:\n"
           "        while written < (2 << 30):\n"
           "            f.write(b'x' * (32 << 20)); f.flush(); written += 32 << 20\n"
           "except Exception as e:\n    print('blocked:', type(e).__name__)\n"
           "print('FLOOD', written)\n"
           "for line in open('/proc/self/mounts'):\n    mount = line.split()[1]\n    try:\n"
           "        open(os.path.join(mount, 'x.txt'), 'w').write('x'); print('WROTE', mount)\n"
           "    except Exception:\n        pass\n"),
    Attack("display-flood", "displays 60 MB of HTML and widget-free rich outputs, bypassing "
           "print's cap", "from IPython.display import display\n"
           "for i in range(60):\n    display({'text/html': 'x' * 1_000_000}, raw=True)\n"),
    Attack("marker-text", "types nbgrader's hidden-test marker into its own cell (feedback broke)",
           "# ### BEGIN HIDDEN TESTS\nprint('marker')\n"),
    Attack("inflated-points", "raises a hidden cell's points to 1000 and makes its Linear cell "
           "a 100-point grade cell", "", _inflate),
    Attack("extra-grade-cell", "adds a 50-point grade cell of its own", "", _extra_grade_cell),
    Attack("hidden-to-markdown", "turns a hidden test cell into markdown", "", _to_markdown),
)
TAMPERING = ("inflated-points", "extra-grade-cell", "hidden-to-markdown", "marker-text")


def code(attack: Attack, **values: str) -> str:
    return Template(attack.code).substitute(values)
