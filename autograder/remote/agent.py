"""The kernel's half of the data-only channel: runs one operation on the student's objects.

This file is sent, as text, into the student's kernel when a hidden check starts; it
holds no check, no reference and nothing to hide. The grader (``autograder.remote``)
asks it for operations on the student's objects (look up a name, get or set an
attribute, call, a few builtins) and receives data back: ``None``, booleans, numbers,
strings, numeric numpy arrays and scalars, and lists, tuples and dicts of those; every
other object stays in the kernel and travels as a numbered handle. The same ``encode``
and ``decode`` serve both sides (the grader imports this module), so nothing the kernel
sends is ever unpickled or evaluated: a tampered agent can send wrong numbers, never an
object. A message (``pack``) is a JSON head, then the raw bytes of its arrays, which JSON
would carry as base64 at four times the work; it travels whole on a stream socket of the
grader's (``Wire``). Stdlib and numpy only.
"""
from __future__ import annotations

import json
import linecache
import operator
import re
import signal
import socket
import time
import warnings

import numpy as np

NUMERIC_KINDS = "biufc"    # bool, signed, unsigned, float, complex: the dtypes that travel
BIT_GENERATORS = {"PCG64": np.random.PCG64, "MT19937": np.random.MT19937,
                  "Philox": np.random.Philox, "SFC64": np.random.SFC64}
BUILTINS = {"len": len, "iter": iter, "next": next, "repr": repr, "str": str, "bool": bool,
            "isinstance": isinstance, "type": type}
# Python's operators, for expressions of the student's objects (unit 12's Tensor).
OPERATORS = {name: getattr(operator, name) for name in
             ("add", "sub", "mul", "truediv", "pow", "matmul", "neg")}
AGENT_FILE = "<grader-agent>"
DOUBLES_FILE = "<grader-doubles>"          # doubles.py, as the kernel compiles it
GRADER_FILES = (AGENT_FILE, DOUBLES_FILE)  # not the student's lines in a traceback
# What ``op_batch`` runs: operations whose values are data or new handles (not ``Held``).
BATCHED = frozenset({"getattr", "call", "builtin", "getitem", "setitem", "write", "each",
                     "double", "operator", "repeat"})
# numpy's default floating-point error handling, restored for the calls ``op_warned`` watches
# whatever the notebook set with np.seterr: these become RuntimeWarnings, underflow does not.
FLOATING_POINT = {"divide": "warn", "over": "warn", "invalid": "warn", "under": "ignore"}
# A Jupyter message of its own starts the kernel answering the grader on a socket of their
# own (``serve``), until the grader sends ``END`` or stays silent for ``IDLE_SECONDS``.
SERVE, SERVING = "grader_serve", "grader_serving"
END = b"end"
IDLE_SECONDS = 60.0
LENGTH_BYTES = 8           # before each message on the wire: its length
CHUNK = 1 << 16
# A message's JSON head nests no deeper than this (the deepest value the checks exchange, a
# generator's state in a list, takes about 12 levels): deeper is refused before it is parsed.
MAX_NESTING = 100
SCAN = 1 << 20             # bytes of a head scanned for its depth at a time
JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
BRACKETS = np.zeros(256, dtype=np.int8)
BRACKETS[[ord("["), ord("{")]], BRACKETS[[ord("]"), ord("}")]] = 1, -1


class CheckTimeLimit(BaseException):
    """Raised in student code when the check's computing time is up."""


def encode(value, other, frames: list[bytes]):
    """A JSON-ready form of ``value``, its arrays' bytes appended to ``frames``;
    ``other(value)`` encodes what is not data (or raises)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if type(value) in (int, float):   # not numpy's float64, a float subclass: it keeps its dtype
        return value
    if isinstance(value, (np.ndarray, np.generic)) and value.dtype.kind in NUMERIC_KINDS:
        frames.append(value.tobytes(order="C"))
        kind = "array" if isinstance(value, np.ndarray) else "scalar"
        return {"t": kind, "dtype": value.dtype.str, "shape": list(np.shape(value)),
                "frame": len(frames) - 1}
    if type(value) in (list, tuple):
        return {"t": type(value).__name__, "v": [encode(v, other, frames) for v in value]}
    if type(value) is dict:
        return {"t": "dict", "v": [[encode(k, other, frames), encode(v, other, frames)]
                                   for k, v in value.items()]}
    if type(value) is complex:
        return {"t": "complex", "v": [value.real, value.imag]}
    if isinstance(value, np.dtype) or (isinstance(value, type) and issubclass(value, np.generic)):
        dtype = np.dtype(value)                  # np.float32 arrives as np.dtype('float32')
        if dtype.kind in NUMERIC_KINDS:
            return {"t": "dtype", "v": dtype.str}
    if isinstance(value, np.random.Generator):   # travels as its state: a copy, same draws
        return {"t": "generator", "v": encode(value.bit_generator.state, other, frames)}
    if type(value) is slice:
        return {"t": "slice", "v": [encode(p, other, frames)
                                    for p in (value.start, value.stop, value.step)]}
    return other(value)


def _numbers(data: dict, frames: list) -> np.ndarray:
    """The array (a copy) that ``data`` describes, from its frame."""
    dtype = np.dtype(data["dtype"])
    if dtype.kind not in NUMERIC_KINDS:
        raise ValueError(f"numbers of dtype {dtype} cannot travel")
    index = data["frame"]
    if type(index) is not int or not 0 <= index < len(frames):
        raise ValueError(f"no frame {index!r} in the message")
    return np.frombuffer(frames[index], dtype=dtype).reshape(tuple(data["shape"])).copy()


def decode(data, resolve, frames: list):
    """The value ``encode`` made, its arrays read from ``frames``; ``resolve(d)`` turns a
    handle ``{"t": "ref", ...}`` into an object."""
    if not isinstance(data, dict):
        if isinstance(data, list) or not (data is None or isinstance(data, (bool, int, float, str))):
            raise ValueError(f"not a value the channel carries: {type(data).__name__}")
        return data
    kind = data.get("t")
    if kind == "array":
        return _numbers(data, frames)
    if kind == "scalar":
        return _numbers(data, frames)[()]
    if kind in ("list", "tuple"):
        items = [decode(v, resolve, frames) for v in data["v"]]
        return items if kind == "list" else tuple(items)
    if kind == "dict":
        return {decode(k, resolve, frames): decode(v, resolve, frames) for k, v in data["v"]}
    if kind == "complex":
        return complex(*data["v"])
    if kind == "dtype":
        dtype = np.dtype(data["v"])
        if dtype.kind not in NUMERIC_KINDS:
            raise ValueError(f"the dtype {dtype} cannot travel")
        return dtype
    if kind == "slice":
        return slice(*(decode(p, resolve, frames) for p in data["v"]))
    if kind == "generator":
        state = decode(data["v"], resolve, frames)
        bit_generator = BIT_GENERATORS[state["bit_generator"]]()
        bit_generator.state = state
        return np.random.Generator(bit_generator)
    if kind == "ref":
        return resolve(data)
    raise ValueError(f"unknown value tag {kind!r}")


def pack(head: dict, frames: list[bytes]) -> bytes:
    """One message: the JSON head's length (4 bytes), the head with its frames' sizes, the
    frames."""
    text = json.dumps({**head, "frames": [len(frame) for frame in frames]}).encode()
    return b"".join([len(text).to_bytes(4, "big"), text, *frames])


def nesting(text: bytes) -> int:
    """How deep JSON arrays and objects nest in ``text`` (its strings skipped), in one pass
    that cannot recurse: ``json.loads`` and ``decode`` recurse once per level."""
    codes = np.frombuffer(JSON_STRING.sub(b'""', text), dtype=np.uint8)
    depth = deepest = 0
    for start in range(0, len(codes), SCAN):
        running = depth + np.cumsum(BRACKETS[codes[start:start + SCAN]], dtype=np.int64)
        deepest, depth = max(deepest, int(running.max())), int(running[-1])
    return deepest


def unpack(message: bytes) -> tuple[dict, list[memoryview]]:
    """The head and frames of a message ``pack`` made (ValueError if it is not one, or if its
    head nests deeper than ``MAX_NESTING``)."""
    view = memoryview(message)
    end = 4 + int.from_bytes(view[:4], "big")
    if len(view) < end:
        raise ValueError("a message shorter than its head")
    text = bytes(view[4:end])
    # (a head with fewer brackets than the limit cannot nest deeper: most are not scanned)
    if text.count(b"[") + text.count(b"{") > MAX_NESTING and nesting(text) > MAX_NESTING:
        raise ValueError(f"a message nested more than {MAX_NESTING} levels deep")
    head = json.loads(text)
    if not isinstance(head, dict) or not isinstance(head.get("frames"), list):
        raise ValueError("not a message of the grader's channel")
    frames = []
    for size in head["frames"]:
        if type(size) is not int or size < 0 or end + size > len(view):
            raise ValueError("a frame beyond the end of the message")
        frames.append(view[end:end + size])
        end += size
    return head, frames


PROVIDED = "# Provided, read-only"   # how a provided cell starts (autograder.notebooks.sync)


def _not_ours(filename: str) -> bool:
    """Whether a traceback's file is the notebook's (not the agent's, numpy's or Python's)."""
    return filename not in GRADER_FILES and "site-packages" not in filename \
        and "/lib/python3" not in filename


def student_frame(error: BaseException, notebook=_not_ours) -> str:
    """Where the error arose in the notebook's code (``notebook(filename)``): the class and
    method, and the student's own line. A provided cell's line (an earlier unit's code, read
    only) is not theirs: then the line of theirs that called it."""
    frames = [(tb.tb_frame.f_code, tb.tb_lineno)
              for tb in _tracebacks(error.__traceback__) if notebook(tb.tb_frame.f_code.co_filename)]
    if not frames:
        return ""
    own = [(code, line) for code, line in frames if not _provided(code.co_filename)]
    where = ""
    if _provided(frames[-1][0].co_filename):
        where = f"\n  in the provided {_qualname(frames[-1][0])}()"
        if not own:
            return where
        where += ", called"
    code, line = own[-1]
    text = linecache.getline(code.co_filename, line).strip()
    return f"{where}\n  at line {line} of your {_qualname(code)}(): {text}"


def _tracebacks(tb):
    while tb is not None:
        yield tb
        tb = tb.tb_next


def _qualname(code) -> str:
    """``Sum.backward`` for a method: Python's qualified name, from the innermost function or
    class that defines it."""
    return getattr(code, "co_qualname", code.co_name).rsplit("<locals>.", 1)[-1]


def _provided(filename: str) -> bool:
    return linecache.getline(filename, 1).startswith(PROVIDED)


def warned(function, *args, **kwargs) -> tuple:
    """``function(*args, **kwargs)`` and the RuntimeWarnings it raised, as text, under numpy's
    default floating-point error handling (``FLOATING_POINT``)."""
    with warnings.catch_warnings(record=True) as caught, np.errstate(**FLOATING_POINT):
        warnings.simplefilter("always")
        value = function(*args, **kwargs)
    return value, [f"{w.category.__name__}: {w.message}" for w in caught
                   if issubclass(w.category, RuntimeWarning)]


def as_of_now(value):
    """``value`` with its numeric arrays, lists and dicts copied: what it would send if it were
    sent now, not after the later operations of a batch change it."""
    if isinstance(value, np.ndarray) and value.dtype.kind in NUMERIC_KINDS:
        return value.copy()
    if type(value) in (list, tuple):
        return type(value)(as_of_now(v) for v in value)
    if type(value) is dict:
        return {k: as_of_now(v) for k, v in value.items()}
    return value


def repeated(name: str, value, other, times: int):
    """``value = value <op> other``, ``times`` times: a long chain of one operator (``name``
    of ``OPERATORS``) in one request."""
    for _ in range(times):
        value = OPERATORS[name](value, other)
    return value


def write_array(obj, name: str, value: np.ndarray) -> None:
    """``value`` written into the array ``obj.<name>`` in place, as backward() writes a
    gradient; ``obj.<name>`` set to a copy of it if it holds no writable array of that shape."""
    current = getattr(obj, name, None)
    if isinstance(current, np.ndarray) and current.shape == value.shape and current.flags.writeable:
        current[...] = value
    else:
        setattr(obj, name, value.copy())


def _code_names(code):
    yield from code.co_names
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            yield from _code_names(const)


class BatchStop(Exception):
    """An operation of a batch failed: its position, and what it raised."""

    def __init__(self, values: list, error: BaseException) -> None:
        super().__init__(len(values))
        self.values, self.error = values, error


class Held:
    """A value the grader keeps a handle to, data or not (``op_hold``)."""

    def __init__(self, value) -> None:
        self.value = value


class Agent:
    """Handles the grader's requests against the kernel's namespace, keeping handles to objects."""

    def __init__(self, namespace: dict, doubles: dict | None = None) -> None:
        self.namespace, self.objects, self.keys = namespace, {}, {}
        self.doubles = doubles or {}

    def _ref(self, value) -> dict:
        """A handle; the same object always gets the same one (checks compare identities)."""
        key = self.keys.setdefault(id(value), len(self.keys) + 1)
        self.objects[key] = value
        return {"t": "ref", "id": key, "type": type(value).__name__,
                "class": isinstance(value, type), "callable": callable(value)}

    def _encode(self, value, frames: list[bytes]):
        """A reply's value: a handle for a ``Held`` one, else data with handles inside."""
        if isinstance(value, Held):
            return self._ref(value.value)
        return encode(value, self._ref, frames)

    def _resolve(self, data: dict):
        return self.objects[data["id"]]

    def handle(self, message: bytes) -> bytes:
        """One request in, one reply out (``pack``'s messages): ``ok`` with the value, or
        ``error``, and the request's ``id``."""
        request, frames = {}, []
        try:
            request, given = unpack(message)
            args = decode(request["args"], self._resolve, given)
            value = self._limited(request.get("cpu", 10.0), getattr(self, "op_" + request["op"]), args)
            reply = {"ok": self._encode(value, frames)}
        except BaseException as error:  # noqa: BLE001 - every student error goes back as data
            done, frames = None, []
            if isinstance(error, BatchStop):
                done, error = error.values, error.error
            reply = {"error": {"type": type(error).__name__, "message": str(error)[:4000],
                               "where": student_frame(error)}}
            if done is not None:
                reply["error"]["done"] = self._encode(done, frames)
        reply["cpu"] = time.process_time()
        reply["id"] = request.get("id") if isinstance(request, dict) else None
        return pack(reply, frames)

    @staticmethod
    def _limited(seconds: float, operation, args):
        """Run ``operation(*args)`` with at most ``seconds`` of CPU time (the process's)."""
        def stop(signum, frame):
            raise CheckTimeLimit(seconds)
        previous = signal.signal(signal.SIGPROF, stop)
        interrupt = signal.signal(signal.SIGINT, signal.default_int_handler)   # the grader's
        signal.setitimer(signal.ITIMER_PROF, max(seconds, 0.01))
        try:
            return operation(*args)
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.signal(signal.SIGINT, interrupt)
            signal.signal(signal.SIGPROF, previous)

    def op_lookup(self, name: str):
        if name not in self.namespace:
            raise NameError(f"name '{name}' is not defined")
        return self.namespace[name]

    def op_getattr(self, obj, name: str):
        return getattr(obj, name)

    def op_setattr(self, obj, name: str, value) -> None:
        setattr(obj, name, value)

    def op_call(self, function, args: list, kwargs: dict):
        return function(*args, **kwargs)

    def op_warned(self, function, args: list, kwargs: dict) -> tuple:
        """``op_call``, and the RuntimeWarnings (numpy's overflow, division by zero, invalid
        value) the call raised, as text: ``(value, ["RuntimeWarning: overflow ...", ...])``.
        The warnings, like ``op_modules`` and ``op_history``, are the kernel's testimony about
        itself, which explains a failure and decides no point (``autograder.testimony``)."""
        return warned(function, *args, **kwargs)

    def op_getitem(self, obj, key):
        return obj[key]

    def op_setitem(self, obj, key, value) -> None:
        obj[key] = value

    def op_write(self, obj, name: str, value) -> None:
        write_array(obj, name, value)

    def op_each(self, op: str, calls: list) -> list:
        """``op_getattr`` or ``op_write`` on each argument list of ``calls``, in one request
        (an optimizer's parameters are read and written together at every step)."""
        if op not in ("getattr", "write"):
            raise ValueError(f"op_each cannot repeat {op!r}")
        return [getattr(self, "op_" + op)(*args) for args in calls]

    def op_batch(self, requests: list) -> list:
        """Several operations ``[op, args]`` in one request, run in order: their values. At
        the first error the batch stops; the error's reply holds the values before it."""
        values = []
        for op, args in requests:
            try:
                if op not in BATCHED:
                    raise ValueError(f"op_batch cannot run {op!r}")
                values.append(as_of_now(getattr(self, "op_" + op)(*args)))
            except BaseException as error:  # noqa: BLE001 - reported after the values so far
                raise BatchStop(values, error) from None
        return values

    def op_double(self, name: str, *args):
        """A new object of the grader's own (``doubles.DOUBLES``) to hand the student's code."""
        return self.doubles[name](*args)

    def op_operator(self, name: str, *args):
        """``a + b`` and the like, as Python evaluates them (reflected methods included)."""
        return OPERATORS[name](*args)

    def op_repeat(self, name: str, value, other, times: int):
        return repeated(name, value, other, times)

    def op_builtin(self, name: str, *args):
        return BUILTINS[name](*args)

    def op_modules(self, obj) -> list[str]:
        """The modules ``obj`` (a class or function), its bases and its methods' globals come from."""
        found = set()
        for klass in getattr(obj, "__mro__", (obj,)):
            found.add(getattr(klass, "__module__", "") or "")
            members = vars(klass).values() if isinstance(obj, type) else (obj,)
            for member in members:
                function = getattr(member, "__func__", member)
                code, space = getattr(function, "__code__", None), getattr(function, "__globals__", {})
                for name in _code_names(code) if code is not None else ():
                    value = space.get(name)
                    found.add(getattr(value, "__module__", None) or getattr(value, "__name__", "")
                              if value is not None else "")
        return sorted(m for m in found if isinstance(m, str) and m)

    def op_history(self) -> list[str]:
        """The sources of the cells the kernel ran (IPython's ``In``)."""
        return [str(source) for source in self.namespace.get("In", [])]

    def op_hold(self, value) -> Held:
        """``value`` (data the grader sent) kept here: a handle, not a copy, comes back, so that
        the grader sees what the student's code does to this very object."""
        return Held(value)

    def op_value(self, obj):
        """The current value of a held object, as data."""
        return obj

    def op_held(self, op: str, *args) -> Held:
        """What ``op_lookup``, ``op_getattr``, ``op_getitem`` or ``op_call`` gives, kept here: a
        handle comes back, not a copy, so that the grader sees later what happens to that very
        object (a returned dict, an array attribute) or changes it (a notebook's dict)."""
        if op not in ("lookup", "getattr", "getitem", "call"):
            raise ValueError(f"op_held cannot keep the result of {op!r}")
        return Held(getattr(self, "op_" + op)(*args))

    def op_shift(self, array, delta: float) -> None:
        """Add ``delta`` to a kernel array in place, as an optimizer step or a running
        statistic's update does to the arrays a model holds."""
        np.add(array, delta, out=array)

    def op_release(self) -> None:
        self.objects.clear()
        self.keys.clear()


class Wire:
    """Whole messages on a stream socket, each sent as its length (``LENGTH_BYTES``) and its
    bytes. What arrived of a message waits in ``buffer`` for the rest, so a wait that ends
    (a deadline) loses nothing; a message longer than ``limit`` is refused (ValueError)."""

    def __init__(self, connected: socket.socket, limit: int | None = None) -> None:
        self.socket, self.limit, self.buffer = connected, limit, bytearray()

    def send(self, message: bytes, seconds: float) -> None:
        """The whole message within ``seconds`` (TimeoutError: the other side does not read)."""
        self.socket.settimeout(seconds)
        self.socket.sendall(len(message).to_bytes(LENGTH_BYTES, "big") + message)

    def receive(self, seconds: float) -> bytes | None:
        """The next message, or None if it is not whole within ``seconds``; ConnectionError
        if the other side closed the socket."""
        deadline = time.monotonic() + seconds
        while (message := self._whole()) is None:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            self.socket.settimeout(left)
            try:
                chunk = self.socket.recv(max(CHUNK, self._missing()))
            except TimeoutError:
                return None
            if not chunk:
                raise ConnectionError("the other side closed the connection")
            self.buffer += chunk
        return message

    def _size(self) -> int | None:
        if len(self.buffer) < LENGTH_BYTES:
            return None
        size = int.from_bytes(self.buffer[:LENGTH_BYTES], "big")
        if self.limit is not None and size > self.limit:
            raise ValueError(f"a message of {size} bytes, more than the {self.limit} allowed")
        return size

    def _missing(self) -> int:
        size = self._size()
        return 0 if size is None else LENGTH_BYTES + size - len(self.buffer)

    def _whole(self) -> bytes | None:
        size = self._size()
        if size is None or len(self.buffer) < LENGTH_BYTES + size:
            return None
        message = bytes(self.buffer[LENGTH_BYTES:LENGTH_BYTES + size])
        del self.buffer[:LENGTH_BYTES + size]
        return message


def connect(endpoint: str) -> socket.socket:
    """A stream socket connected to the grader's ``ipc://PATH`` or ``tcp://HOST:PORT``."""
    transport, _, where = endpoint.partition("://")
    if transport == "ipc":
        family, address = socket.AF_UNIX, where
    elif transport == "tcp":
        host, _, port = where.rpartition(":")
        family, address = socket.AF_INET, (host, int(port))
    else:
        raise ValueError(f"not an endpoint of the grader's: {endpoint!r}")
    connected = socket.socket(family, socket.SOCK_STREAM)
    try:
        connected.settimeout(IDLE_SECONDS)
        connected.connect(address)
    except OSError:
        connected.close()
        raise
    return connected


def serve(kernel, agent: Agent) -> None:
    """Answer the grader on a socket of its own: a ``SERVE`` message on the kernel's shell
    channel names the socket the grader listens on; the handler connects to it, replies
    ``SERVING``, then answers each request (``pack``'s messages, to ``agent.handle``) until
    ``END``. The kernel runs nothing else meanwhile. Through ipykernel's shell dispatch (signatures,
    busy and idle messages on iopub, hand-overs between its threads) a round trip took about
    1.5 ms; on a ZeroMQ socket 0.24-0.28 ms of CPU (both sides), a fifth of it in ZeroMQ's
    I/O threads; on this plain socket 0.20-0.23 ms. The grader listens and the kernel
    connects, because a sandboxed kernel can create no socket file once it has started."""
    def handler(stream, ident, parent) -> None:
        try:
            connected = connect(str(parent.get("content", {}).get("endpoint", "")))
        except (OSError, ValueError) as error:
            kernel.session.send(stream, SERVING, {"status": "error", "error": str(error)},
                                parent, ident)
            return
        kernel.session.send(stream, SERVING, {"status": "ok"}, parent, ident)
        with connected:
            answer(Wire(connected), agent)

    kernel.shell_handlers[SERVE] = handler


def _ignored(signum, frame) -> None:
    """Between operations: the grader's interrupt came after the answer it waited for."""


def answer(wire: Wire, agent: Agent) -> None:
    """Each request on ``wire`` answered in turn, until ``END``, an idle ``IDLE_SECONDS`` or a
    closed socket (a grader that went away). The grader interrupts the kernel (SIGINT) when an
    answer is late: the operation it waits for stops (``Agent._limited``); an interrupt that
    lands between operations, once the answer left, is ignored."""
    previous = signal.signal(signal.SIGINT, _ignored)
    try:
        while (message := wire.receive(IDLE_SECONDS)) not in (None, END):
            wire.send(agent.handle(message), IDLE_SECONDS)
    except (OSError, ValueError):      # the grader went away, or wrote what is no message
        return
    finally:
        signal.signal(signal.SIGINT, previous)
