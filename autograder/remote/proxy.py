"""Stand-ins for the student's objects on the grader's side of the channel.

A check receives ``Remote`` objects in place of the student's classes and works with
them as it would with the classes themselves: calling one constructs an object in the
kernel, attribute access and method calls travel as requests, and what comes back is
data (arrays, numbers, strings) or another ``Remote``. An exception in the student's
code comes back as ``RemoteError`` (``autograder.remote.errors``), which is also the
builtin exception of the same name, with the student's line.
"""
from __future__ import annotations

import signal
import sys
import time

import numpy as np

from autograder.remote import agent
from autograder.remote.channel import Channel, ChannelError, NoAnswer
from autograder.remote.errors import (  # noqa: F401  (RemoteError re-exported)
    GraderFault, RemoteError, TimeLimitExceeded, remote_error)


class Session:
    """The grader's view of one kernel during one check: requests under a time budget."""

    def __init__(self, channel: Channel, cpu_seconds: float, wall_seconds: float) -> None:
        self.channel = channel
        self.cpu_left, self.deadline = cpu_seconds, time.monotonic() + wall_seconds
        self.cpu_seconds, self.wall_seconds = cpu_seconds, wall_seconds
        self.cpu_seen: float | None = None
        self.remotes: dict[int, Remote] = {}     # one stand-in per kernel object (identity)
        self.received: set[int] = set()          # ids of the values the kernel sent (blame)
        self.asked: set[tuple] = set()           # (code, line) that waited for a reply (blame)

    def send(self, op: str, *args):
        """One operation in the kernel; its value, or the student's exception raised here.
        Past the check's budget (computing, in the kernel; waiting, here): TimeLimitExceeded.
        A reply that is not what the agent sends: ChannelError (the kernel's doing); the
        grader's own failure (a check sending what cannot travel, its memory): GraderFault."""
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeLimitExceeded(signal.SIGALRM)
        outgoing: list[bytes] = []
        encoded = [agent.encode(a, self._outgoing, outgoing) for a in args]
        self._asking(sys._getframe(1))
        try:
            reply, frames = self.channel.request(op, {"t": "list", "v": encoded}, outgoing, left,
                                                 max(self.cpu_left, 0.01))
        except NoAnswer:
            raise TimeLimitExceeded(signal.SIGALRM) from None
        except MemoryError:
            raise GraderFault("the grader ran out of memory reading the kernel's reply") from None
        self._account(reply.get("cpu"))
        if "error" in reply:
            raise self._raised(reply["error"], frames)
        return self._decoded(reply["ok"], frames)

    def _raised(self, error, frames: list) -> BaseException:
        """What the kernel's error reply stands for: the student's exception (with the values
        of a batch before it), or the check's computing time used up."""
        if not (isinstance(error, dict) and isinstance(error.get("type"), str)
                and error["type"].isidentifier() and isinstance(error.get("message"), str)
                and isinstance(error.get("where", ""), str)):
            return ChannelError("an unreadable error reply from the kernel")
        if error["type"] == "CheckTimeLimit":
            return TimeLimitExceeded(signal.SIGPROF)
        raised = remote_error(error["type"], error["message"], error.get("where", ""))
        if "done" in error:      # a batch: the values of the operations before the error
            raised.done = self._decoded(error["done"], frames)
        return raised

    def _decoded(self, data, frames: list):
        """The value a reply carries, remembered as the kernel's (``autograder.blame``).
        Whatever a malformed reply makes ``decode`` raise is the kernel's doing."""
        try:
            value = agent.decode(data, self._incoming, frames)
        except MemoryError:
            raise GraderFault("the grader ran out of memory reading the kernel's reply") from None
        except Exception as error:  # noqa: BLE001 - a tampered agent's reply, never a crash
            raise ChannelError(f"an unreadable reply from the kernel ({type(error).__name__}: "
                               f"{error})") from None
        self._remember(value)
        return value

    def _remember(self, value) -> None:
        """Note ``value`` and the containers and arrays inside it as received from the kernel."""
        if not (isinstance(value, Remote) or _shared(value)):
            self.received.add(id(value))
        if isinstance(value, (list, tuple)):
            for item in value:
                if isinstance(item, (list, tuple, dict, np.ndarray)):
                    self._remember(item)
        elif isinstance(value, dict):
            for item in (*value.keys(), *value.values()):
                if isinstance(item, (list, tuple, dict, np.ndarray)):
                    self._remember(item)

    def _asking(self, frame) -> None:
        """Note each line on the stack as waiting for a reply (``autograder.blame``)."""
        while frame is not None:
            self.asked.add((frame.f_code, frame.f_lineno))
            frame = frame.f_back

    def release(self) -> None:
        """Let the kernel drop this check's objects (a few seconds of its own; errors ignored)
        and run cells again."""
        self.deadline, self.cpu_left = time.monotonic() + 5.0, 1.0
        try:
            self.send("release")
        except (Exception, TimeLimitExceeded, GraderFault):  # noqa: BLE001 - nothing to keep
            pass
        self.channel.pause()

    def _account(self, cpu) -> None:
        if isinstance(cpu, (int, float)):
            if self.cpu_seen is not None:
                self.cpu_left -= max(0.0, cpu - self.cpu_seen)
            self.cpu_seen = cpu

    def _outgoing(self, value) -> dict:
        if isinstance(value, Remote) and value._session is self:
            return {"t": "ref", "id": value._id}
        raise GraderFault(f"a check sent a {type(value).__name__} to the student's kernel; "
                          "only data and the student's own objects can travel")

    def _incoming(self, data: dict) -> "Remote":
        key = int(data["id"])
        if key not in self.remotes:
            self.remotes[key] = Remote(self, data)
        return self.remotes[key]

    def hold(self, value) -> "Remote":
        """A copy of ``value`` (data) made in the kernel and kept there: a handle to it."""
        return self.send("hold", value)

    def value(self, remote: "Remote"):
        """What the kernel's object ``remote`` holds now, as data."""
        return self.send("value", remote)

    def lookup(self, name: str) -> "Remote":
        value = self.send("lookup", name)
        if not isinstance(value, Remote):
            raise ChannelError(f"{name} is data in the kernel, not a class or function")
        return value

    def answer(self, name: str) -> "Remote":
        """A handle to whatever the kernel's variable ``name`` holds (an answer to a question,
        data or not), so that the integrity rules see the kernel and the check reads the value
        with ``value``."""
        return self.send("held", "lookup", name)


def _shared(value) -> bool:
    """Whether CPython gives ``value`` one object for everyone (None, booleans, small ints,
    one-character strings, the empty tuple): its identity says nothing of where it came from."""
    return (value is None or isinstance(value, bool) or (type(value) is tuple and not value)
            or (type(value) is int and -5 <= value <= 256)
            or (type(value) is str and len(value) <= 1))


class Remote:
    """One object in the student's kernel."""

    __slots__ = ("_session", "_id", "_type", "_is_class", "_callable")

    def __init__(self, session: Session, data: dict) -> None:
        object.__setattr__(self, "_session", session)
        object.__setattr__(self, "_id", int(data["id"]))
        object.__setattr__(self, "_type", str(data.get("type", "object")))
        object.__setattr__(self, "_is_class", bool(data.get("class")))
        object.__setattr__(self, "_callable", bool(data.get("callable")))

    def __getattr__(self, name: str):
        return self._session.send("getattr", self, name)

    def __setattr__(self, name: str, value) -> None:
        self._session.send("setattr", self, name, value)

    def __call__(self, *args, **kwargs):
        return self._session.send("call", self, list(args), kwargs)

    def __repr__(self) -> str:
        return self._session.send("builtin", "repr", self)

    def __str__(self) -> str:
        return self._session.send("builtin", "str", self)

    def __bool__(self) -> bool:
        return self._session.send("builtin", "bool", self)

    def __len__(self) -> int:
        return self._session.send("builtin", "len", self)

    def __iter__(self):
        return self._session.send("builtin", "iter", self)

    def __next__(self):
        return self._session.send("builtin", "next", self)

    def __getitem__(self, key):
        return self._session.send("getattr", self, "__getitem__")(key)

    # Python's operators are evaluated in the kernel, so that ``a * 2``, ``2 * a`` and ``-a``
    # on the student's objects behave as there; numpy hands ``array + remote`` back to us.
    __array_ufunc__ = None

    def __neg__(self):
        return self._session.send("operator", "neg", self)


def _operator(name: str, reflected: bool = False):
    def method(self, other):
        pair = (other, self) if reflected else (self, other)
        return self._session.send("operator", name, *pair)
    return method


for _name in ("add", "sub", "mul", "truediv", "pow", "matmul"):
    setattr(Remote, f"__{_name}__", _operator(_name))
    setattr(Remote, f"__r{_name}__", _operator(_name, reflected=True))
