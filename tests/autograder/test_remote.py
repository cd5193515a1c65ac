"""The data-only channel between the grader and a student's kernel (``autograder.remote``):
what travels, and a real ipykernel driven through ``Remote`` stand-ins."""
from __future__ import annotations

import json
import os
import signal
import socket
import time

import numpy as np
import pytest

from autograder.audit_remote import agent_kernel
from autograder import testimony
from autograder.cells import hidden
from autograder.checks._calls import Script, student_forward, warnings_explain
from autograder.remote import agent
from autograder.remote.channel import Channel, ChannelError
from autograder.remote.errors import GraderFault, RemoteError, TimeLimitExceeded
from autograder.remote.proxy import Remote, Session
from autograder.sandbox import call
from course.testing.failure import CheckFailure

STUDENT_CODE = '''
import time
import numpy as np

class Layer:
    def __init__(self, n):
        if n < 0:
            raise ValueError(f"n must be positive, got {n}")
        self.weight = np.arange(n, dtype=np.float32)
        self.child = None

    def forward(self, x):
        return x * self.weight

    def backward(self, g):
        raise NotImplementedError

    def spin(self):
        while True:
            pass

    def sleep(self):
        time.sleep(60)

    def nap(self, seconds):
        time.sleep(seconds)

    def hungry(self):
        raise MemoryError("the student's allocation")

    def __iter__(self):
        yield from (1, 2, 3)

    def fill(self, rng):
        self.weight[...] = rng.standard_normal(self.weight.shape)
        return self


class Zeroing:
    def forward(self, x):
        x[x < 0] = 0
        return x


class NaiveSigmoid:
    def forward(self, x):
        return 1 / (1 + np.exp(-x))


np.seterr(all="ignore")     # a notebook that silences numpy's warnings
'''


def _roundtrip(value):
    frames = []
    data = agent.encode(value, lambda v: pytest.fail(f"not data: {v!r}"), frames)
    head, received = agent.unpack(agent.pack({"v": data}, frames))
    return agent.decode(head["v"], None, received)


@pytest.mark.parametrize("value", [
    np.arange(6, dtype=np.float32).reshape(2, 3), np.zeros((0, 4)), np.array(3.5), np.array([True]),
    np.array([1 + 2j]), np.int64(7), np.float32(0.25), [1, (2.0, "x")], {"a": [None, True]},
    1 << 70, float("inf"), slice(1, None, 2), 3 + 4j, np.dtype("float32"), np.dtype(">i2")])
def test_data_travels_unchanged_with_its_dtype(value):
    back = _roundtrip(value)
    if isinstance(value, (np.ndarray, np.generic)):
        assert back.dtype == value.dtype and np.array_equal(back, value)
    else:
        assert back == value and type(back) is type(value)


def test_a_numpy_scalar_type_travels_as_its_dtype():
    assert _roundtrip(np.float32) == np.dtype("float32")


def test_a_generator_travels_as_its_state():
    rng = np.random.default_rng(5)
    copy = _roundtrip(rng)
    assert copy is not rng and np.array_equal(copy.standard_normal(4), rng.standard_normal(4))


@pytest.mark.parametrize("data", [
    {"t": "array", "dtype": "|O", "shape": [1], "frame": 0},
    {"t": "pickle", "v": "gASV"}, [1, 2], {"t": "scalar", "dtype": "<U3", "frame": 0},
    {"t": "array", "dtype": "<f8", "shape": [2], "frame": 1},       # no such frame
    {"t": "array", "dtype": "<f8", "shape": [2], "frame": -1},
    {"t": "array", "dtype": "<f8", "shape": [3], "frame": 0}])      # more than the frame holds
def test_anything_but_data_is_refused(data):
    with pytest.raises(ValueError):
        agent.decode(data, lambda d: None, [bytes(16)])


@pytest.mark.parametrize("message", [
    b"", b"\x00\x00\x00\x02[]", b"\x00\x00\x00\x0d{\"frames\": 1}",
    agent.pack({}, [b"1234"])[:-1]])                                   # a frame cut short
def test_a_broken_message_is_refused(message):
    with pytest.raises(ValueError):
        agent.unpack(message)


def test_a_message_arrives_whole_however_it_was_cut():
    """What came of a message waits for the rest; a wait that ends in between loses nothing."""
    near, far = socket.socketpair()
    with near, far:
        wire, message = agent.Wire(near), agent.pack({"v": 1}, [bytes(range(200))])
        framed = len(message).to_bytes(agent.LENGTH_BYTES, "big") + message
        far.sendall(framed[:5])
        assert wire.receive(0.05) is None
        far.sendall(framed[5:100])
        assert wire.receive(0.05) is None
        far.sendall(framed[100:] + framed)           # the rest, then a second message
        assert wire.receive(1.0) == message and wire.receive(1.0) == message


def test_a_peer_that_claims_too_much_or_hangs_up_is_refused():
    near, far = socket.socketpair()
    with near, far:
        far.sendall((1 << 40).to_bytes(agent.LENGTH_BYTES, "big"))
        with pytest.raises(ValueError, match="more than the 1024 allowed"):
            agent.Wire(near, limit=1024).receive(1.0)
    near, far = socket.socketpair()
    with near:
        far.close()
        with pytest.raises(ConnectionError):
            agent.Wire(near).receive(1.0)


@pytest.mark.parametrize("source, expected", [
    ("# 3 points\n### BEGIN HIDDEN TESTS\nfrom autograder import check\n"
     "check.linear_forward(Linear)\n### END HIDDEN TESTS", ("linear_forward", ["Linear"])),
    ("### BEGIN HIDDEN TESTS\nfrom autograder import check\ncheck.sgd_step(SGD, Parameter)  # x\n"
     "### END HIDDEN TESTS", ("sgd_step", ["SGD", "Parameter"])),
    ("check.linear_forward(Linear)", None),                                  # not hidden
    ("### BEGIN HIDDEN TESTS\ncheck.a(A)\ncheck.b(B)\n### END HIDDEN TESTS", None),  # two calls
    ("### BEGIN HIDDEN TESTS\ncheck.a(A())\n### END HIDDEN TESTS", None),     # not a name
])
def test_hidden_cells_are_parsed_strictly(source, expected):
    assert hidden.parse(source) == expected


@pytest.fixture(scope="module")
def started():
    with agent_kernel(STUDENT_CODE) as client_and_channel:
        yield client_and_channel


@pytest.fixture(scope="module")
def kernel(started):
    return started[1]


@pytest.fixture
def session(kernel):
    session = Session(kernel, cpu_seconds=2.0, wall_seconds=6.0)
    yield session
    session.release()


def test_the_students_objects_are_driven_remotely(session):
    Layer = session.lookup("Layer")
    layer = Layer(3)
    assert isinstance(layer, Remote) and layer._type == "Layer"
    out = layer.forward(np.ones(3, dtype=np.float32))
    assert out.dtype == np.float32 and out.tolist() == [0.0, 1.0, 2.0]
    layer.weight = np.full(3, 2.0)
    assert layer.forward(np.ones(3)).tolist() == [2.0, 2.0, 2.0]
    assert getattr(layer, "missing", None) is None and not hasattr(layer, "missing")
    assert list(layer) == [1, 2, 3]
    assert layer.fill(np.random.default_rng(0)) is layer           # identity is kept


def test_student_errors_come_back_with_their_type_and_line(session):
    Layer = session.lookup("Layer")
    with pytest.raises(ValueError, match="n must be positive") as caught:
        Layer(-1)
    assert isinstance(caught.value, RemoteError) and "raise ValueError" in caught.value.where
    with pytest.raises(CheckFailure, match="not implemented yet"):
        call("Layer.backward", Layer(2).backward, np.ones(2))
    with pytest.raises(NameError):
        session.lookup("Undefined")


def test_computing_and_waiting_are_bounded_and_the_kernel_survives(session, kernel):
    patient = Session(kernel, cpu_seconds=2.0, wall_seconds=120.0)   # however busy the machine
    with pytest.raises(TimeLimitExceeded) as computing:
        patient.lookup("Layer")(2).spin()
    patient.release()
    assert computing.value.args[0] == signal.SIGPROF
    with pytest.raises(TimeLimitExceeded) as waiting:
        session.lookup("Layer")(2).sleep()
    assert waiting.value.args[0] == signal.SIGALRM
    fresh = Session(kernel, cpu_seconds=2.0, wall_seconds=6.0)
    assert fresh.lookup("Layer")(1).forward(np.ones(1)).tolist() == [0.0]


def test_a_forward_that_writes_into_its_input_is_seen(session):
    """The input is held in the kernel (data sent would arrive as a new array each call)."""
    x = np.array([[-1.0, 2.0]])
    with pytest.raises(CheckFailure, match="modified its input array in place"):
        student_forward("Zeroing", session.lookup("Zeroing")(), x)
    assert student_forward("Layer", session.lookup("Layer")(2), x).tolist() == [[-0.0, 2.0]]


def test_floating_point_warnings_are_seen_whatever_the_notebook_set(session):
    """The overflow of 1 / (1 + exp(1000)) is reported, np.seterr or not; it explains a failure
    and fails nothing by itself."""
    forward = session.lookup("NaiveSigmoid")().forward
    x = np.array([-1000.0])
    assert testimony.warnings_of("forward", forward, x) == [
        "RuntimeWarning: overflow encountered in exp"]
    assert testimony.warnings_of("forward", forward, np.array([0.0])) == []
    with warnings_explain(lambda: testimony.warnings_of("forward", forward, x), "be stable"):
        pass
    with pytest.raises(CheckFailure, match=r"wrong\n  On this input your code also raised "
                                           "RuntimeWarning: overflow encountered in exp: be stable"):
        with warnings_explain(lambda: testimony.warnings_of("forward", forward, x), "be stable"):
            raise CheckFailure("wrong")


def test_a_script_runs_in_one_request_and_stops_at_the_first_error(session):
    """Values are taken when each operation ran; the failure names the operation that raised,
    with the values before it."""
    layer = session.lookup("Layer")(2)
    script = Script(layer)
    script.attributes("weight", [layer], "weight")
    script.call("layer.fill(rng)", layer.fill, np.random.default_rng(0))
    script.attributes("weight after fill", [layer], "weight")
    script.call("layer.backward(g)", layer.backward, np.ones(2))
    script.call("layer.forward(x)", layer.forward, np.ones(2))
    sent = session.channel.request
    requests = []
    session.channel.request = lambda op, *args: requests.append(op) or sent(op, *args)
    values = script.run()
    assert requests == ["batch"] and len(values) == 3
    assert values[0][0].tolist() == [0.0, 1.0] and values[1] is layer
    assert values[2][0].tolist() != [0.0, 1.0]
    assert "layer.backward(g) is not implemented yet" in str(script.failure)


def test_a_check_talks_to_the_agent_on_its_own_socket_then_the_kernel_runs_cells(started):
    """One message on the kernel's shell channel starts the agent serving; every request goes
    to the grader's socket; the session's end lets the kernel run cells again."""
    client, channel = started
    shell = []
    sent = channel._send
    channel._send = lambda msg_type, *args: shell.append(msg_type) or sent(msg_type, *args)
    try:
        session = Session(channel, cpu_seconds=2.0, wall_seconds=6.0)
        layer = session.lookup("Layer")(3)
        assert [layer.forward(np.ones(3)).sum() for _ in range(50)] == [3.0] * 50
        session.release()
    finally:
        channel._send = sent
    assert shell == [agent.SERVE] and channel.wire is None
    reply = client.execute_interactive("served = 'cells run again'", timeout=10)
    assert reply["content"]["status"] == "ok"
    after = Session(channel, cpu_seconds=2.0, wall_seconds=6.0)
    assert after.send("lookup", "served") == "cells run again"
    after.release()


def test_only_data_and_the_students_objects_are_sent(session):
    """A check that sends anything else is wrong itself: the grader's fault, not the student's."""
    layer = session.lookup("Layer")(2)
    with pytest.raises(GraderFault, match="only data and the student's own objects"):
        layer.forward(lambda x: x)


def test_every_hidden_cell_calls_a_registered_check():
    """Each hidden cell of every unit is one the grader runs from outside (``hidden.parse``)."""
    import nbformat
    from autograder.notebooks.units import units
    from autograder.registry import CHECKS
    import autograder.check  # noqa: F401  (registers every check)
    cells = [cell for unit in units() for cell in nbformat.read(str(unit.source), 4).cells
             if hidden.BEGIN in cell.source]
    calls = [hidden.parse(cell.source) for cell in cells]
    assert None not in calls and {call[0] for call in calls} <= set(CHECKS)


def test_a_kernel_that_dies_during_a_check_is_seen_at_once():
    """A submission that ends its kernel mid-check breaks the channel when the socket closes,
    not when the check's time is up."""
    with agent_kernel("import os\n\ndef leave():\n    os._exit(3)\n") as (_, channel):
        session = Session(channel, cpu_seconds=20.0, wall_seconds=20.0)
        started = time.monotonic()
        with pytest.raises(ChannelError, match="broke its connection"):
            session.lookup("leave")()
        assert time.monotonic() - started < 5.0 and channel.broken


def open_files() -> set[tuple[str, str]]:
    """This process's open descriptors and what each is (a socket's inode tells two apart).
    Other threads of the test worker may close theirs meanwhile: only new ones count."""
    files = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            files.add((fd, os.readlink(f"/proc/self/fd/{fd}")))
        except FileNotFoundError:   # the listing's own descriptor, or one closed since
            pass
    return files


def lasting(before: set[tuple[str, str]], seconds: float = 2.0) -> set[tuple[str, str]]:
    """The descriptors opened since ``before`` that are still open ``seconds`` later: another
    thread of the test worker may hold one for a moment (a request), a leak stays."""
    deadline = time.monotonic() + seconds
    while (new := open_files() - before) and time.monotonic() < deadline:
        time.sleep(0.1)
    return new


def test_a_socket_the_grader_cannot_listen_on_fails_the_check_cleanly(tmp_path):
    """A run folder deep enough that the kernel's own sockets fit a Unix socket's 107 bytes and
    the grader's longer name does not: the check fails with the grader's fault, which says
    where, and no socket is left open."""
    ip = str(tmp_path / ("k" * (104 - len(str(tmp_path)))))
    info = {"transport": "ipc", "ip": ip, "shell_port": 1, "control_port": 2, "key": "k"}
    channel = Channel(info)
    open_before = open_files()
    try:
        with pytest.raises(GraderFault, match="could not listen at .*-1-grader-1"):
            channel.request("lookup", {}, [], seconds=1.0, cpu=1.0)
        assert lasting(open_before) == set() and not list(tmp_path.iterdir())
    finally:
        channel.close()


class Replies:
    """A channel whose replies are given: what a tampered agent could send."""

    def __init__(self, *replies: dict) -> None:
        self.replies = list(replies)

    def request(self, *_args) -> tuple[dict, list]:
        return self.replies.pop(0), []

    def pause(self) -> None:
        pass


@pytest.mark.parametrize("reply", [
    {"ok": {"t": "list"}}, {"ok": {"t": "list", "v": 5}}, {"ok": {"t": "complex", "v": "ab"}},
    {"ok": {"t": "dict", "v": [[{"t": "list", "v": []}, 1]]}},             # a list as a key
    {"ok": {"t": "generator", "v": {"t": "dict", "v": [["bit_generator", "Nope"]]}}},
    {"ok": {"t": "ref", "id": "x"}}, {"error": "text"}, {"error": {"type": "a b", "message": ""}},
    {"error": {"type": "ValueError", "message": 3}},
    {"error": {"type": "ValueError", "message": "", "done": {"t": "tuple"}}}])
def test_a_malformed_reply_is_the_kernels_doing_and_fails_its_request(reply):
    """Whatever a reply holds that the agent would never send fails the request with a
    ChannelError (the student's side), never another exception the check would not expect."""
    session = Session(Replies(reply), cpu_seconds=1.0, wall_seconds=1.0)
    with pytest.raises(ChannelError, match="unreadable"):
        session.send("lookup", "x")


def test_a_reply_nested_deeper_than_the_limit_is_refused_before_it_is_parsed():
    """A head 200,000 levels deep raised RecursionError in json.loads; it is refused by a scan
    that does not recurse, and a head at the limit still travels."""
    deep = b"[" * 200_000 + b"]" * 200_000
    with pytest.raises(ValueError, match="nested more than 100 levels deep"):
        agent.unpack(len(deep).to_bytes(4, "big") + deep)
    near = {"v": json.loads("[" * 98 + "]" * 98), "s": "[" * 500}   # brackets in a string count not
    assert agent.unpack(agent.pack(near, []))[0]["s"] == "[" * 500
    assert agent.nesting(json.dumps({"a": '"[[', "b": [[1], [{"c": [2]}]]}).encode()) == 5


# The agent in the kernel, patched to answer every request with a list 200,000 levels deep.
DEEP_AGENT = """
import json

def _deep(message, _handle=_minitorch_grader_agent.handle):
    number = json.loads(message[4:4 + int.from_bytes(message[:4], 'big')])['id']
    head = b'{"frames": [], "id": %d, "ok": ' % number + b'[' * 200_000 + b']' * 200_000 + b'}'
    return len(head).to_bytes(4, 'big') + head

_minitorch_grader_agent.handle = _deep
"""


def test_a_kernel_that_answers_200000_levels_deep_fails_that_check_only():
    """The cell fails with a message (scored zero: the kernel's doing); the grader raises
    nothing, and the kernel runs cells and answers checks again once its agent answers
    properly."""
    with agent_kernel() as (client, channel):
        assert client.execute_interactive(DEEP_AGENT, timeout=10)["content"]["status"] == "ok"
        outputs = hidden.grade(channel, "linear_forward", ["Linear"])
        assert [o.ename for o in outputs] == ["CheckFailure"]
        assert "Your kernel did not answer the grader" in outputs[0].evalue
        assert "nested more than 100 levels deep" in outputs[0].evalue
        reply = client.execute_interactive("del _minitorch_grader_agent.handle\nx = 3", timeout=10)
        assert reply["content"]["status"] == "ok"
        after = Session(channel, cpu_seconds=2.0, wall_seconds=6.0)
        assert after.send("lookup", "x") == 3
        after.release()


def test_a_check_whose_socket_cannot_be_bound_leaves_its_cell_to_an_instructor(tmp_path):
    """The grader's failure to listen is not the student's: the cell's output says so, and is
    the grader's fault (``hidden.FAULT``), which the job turns into no score."""
    ip = str(tmp_path / ("k" * (104 - len(str(tmp_path)))))
    channel = Channel({"transport": "ipc", "ip": ip, "shell_port": 1, "control_port": 2, "key": "k"})
    try:
        outputs = hidden.grade(channel, "linear_forward", ["Linear"])
    finally:
        channel.close()
    assert [o.ename for o in outputs] == [hidden.FAULT]
    assert "could not listen at" in outputs[0].evalue and "not your code's doing" in outputs[0].evalue
    assert hidden.faulted(outputs) == outputs[0].evalue


def _table_size() -> int:
    return {"rows": 3}["columns"]          # a key the checker never wrote: its own bug


def checker_misspelt_a_name(Layer):
    layer = call("Layer(2)", Layer, 2)
    call("layer.forward", layer.forward, np.ones(2))
    return expected_values  # noqa: F821 - the checker's bug under test


def checker_broken_helper(Layer):
    call("Layer(2)", Layer, 2).forward(np.ones(2))
    return np.zeros(_table_size())


def checker_out_of_memory(Layer):
    call("Layer(2)", Layer, 2)
    raise MemoryError("the grader's own allocation")


def checker_reads_a_string_as_an_array(Layer):
    text = repr(call("Layer(2)", Layer, 2))      # the kernel sends "<__main__.Layer ...>"
    return text.shape                            # a string where an array was expected: theirs


def checker_indexes_a_reply_at_once(Layer):
    return call("Layer(2)", Layer, 2).weight.shape[5]      # weight has one axis: theirs


def checker_student_memory(Layer):
    return Layer(2).hungry()     # a MemoryError in the kernel: theirs


@pytest.fixture
def registered():
    """Checks registered for the length of a test, as the grader's registry runs them."""
    from autograder.registry import CHECKS, check
    names = []

    def register(function):
        check(function)
        names.append(function.__name__)
        return function.__name__
    yield register
    for name in names:
        del CHECKS[name]


@pytest.mark.parametrize("checker", [checker_misspelt_a_name, checker_broken_helper,
                                     checker_out_of_memory])
def test_a_check_that_fails_on_the_graders_side_leaves_its_cell_unscored(kernel, registered,
                                                                           checker):
    """An exception of the check's own (a name it misspelt, a helper's bug, the grader's
    memory), not caused by anything the kernel sent, is the grader's fault."""
    outputs = hidden.grade(kernel, registered(checker), ["Layer"])
    assert [o.ename for o in outputs] == [hidden.FAULT], outputs
    assert "not your code's doing" in outputs[0].evalue


@pytest.mark.parametrize("checker, raised", [
    (checker_reads_a_string_as_an_array, "AttributeError"),
    (checker_indexes_a_reply_at_once, "IndexError"), (checker_student_memory, "MemoryError: the student's allocation")])
def test_an_error_caused_by_what_the_kernel_sent_is_the_students(kernel, registered, checker,
                                                                  raised):
    outputs = hidden.grade(kernel, registered(checker), ["Layer"])
    assert [o.ename for o in outputs] == ["CheckFailure"] and raised in outputs[0].evalue


def checker_waits_for_a_slow_kernel(Layer):
    Layer(2).nap(1.5)


def test_a_check_waits_for_the_kernel_as_long_as_the_grader_allows(kernel, registered,
                                                                    monkeypatch):
    """A busy grading machine may give a check more than twice its computing limit to wait
    (``Limits.check_wait_seconds``)."""
    monkeypatch.setattr(hidden, "SECONDS_PER_CHECK", 0.5)
    assert hidden.grade(kernel, registered(checker_waits_for_a_slow_kernel), ["Layer"],
                        wall=10) == []
    said = hidden.grade(kernel, "checker_waits_for_a_slow_kernel", ["Layer"], wall=1)
    assert [o.ename for o in said] == ["CheckFailure"] and "spent waiting" in said[0].evalue


def test_a_hidden_cell_naming_no_check_is_the_graders_fault(kernel):
    """Hidden cells are the course's, restored before grading: a name the grader lacks is its
    own mistake."""
    assert [o.ename for o in hidden.grade(kernel, "no_such_check", ["Layer"])] == [hidden.FAULT]
