"""The grader's half of the data-only channel: requests to the agent in a running kernel.

A ``Channel`` has its own ZeroMQ sockets to the kernel's shell and control ports (from the
kernel's connection info) and signs messages with the kernel's key. It installs the agent
with one silent ``execute_request``, which also registers the agent's handler for a
message type of its own (``agent.SERVE``). At the first request of a check, the channel
listens on a stream socket beside the kernel's (a Unix socket in the job's ``run/`` folder,
or a loopback port) and sends ``SERVE``: the agent connects to it and answers requests there
(``agent.pack``'s messages, whole on an ``agent.Wire``, numbered so that a late answer is
never taken for the next one) until ``pause`` sends ``agent.END``; the kernel then runs
cells again. Every wait has a deadline on the clock; past it the kernel is interrupted (a
control message) and the request fails. What the kernel writes is read with a bound on its
size (``MAX_REPLY_CHARS``) and of nesting (``agent.MAX_NESTING``); a kernel that closes the
socket (it crashed) or writes what is no message breaks the channel at once, and a reply too
deep or not JSON fails its request (``ChannelError``: the kernel's doing). A socket the grader
cannot listen on is the grader's failure (``GraderFault``), not the kernel's.
"""
from __future__ import annotations

import os
import socket
import time
from pathlib import Path
from typing import NoReturn

import zmq
from jupyter_client.session import Session

from autograder.remote import agent, doubles
from autograder.remote.errors import GraderFault

AGENT_NAME = "_minitorch_grader_agent"
MAX_REPLY_CHARS = 64 << 20
GRACE_SECONDS = 5.0          # after an interrupt, for the kernel to answer


class ChannelError(RuntimeError):
    """The kernel did not answer a request properly (no agent, a broken reply)."""


class NoAnswer(ChannelError):
    """The kernel did not answer within the time given (it was interrupted)."""


def _ipc_path(info: dict, port: str) -> str:
    return f"{info['ip']}-{info[port]}"


def _address(info: dict, port: str) -> str:
    if info["transport"] == "ipc":
        return f"ipc://{_ipc_path(info, port)}"
    return f"tcp://{info['ip']}:{info[port]}"


class Channel:
    """Requests to the agent in the kernel described by ``info`` (its connection info)."""

    def __init__(self, info: dict) -> None:
        key = info["key"].encode() if isinstance(info["key"], str) else info["key"]
        self.session = Session(key=key, signature_scheme=info.get("signature_scheme", "hmac-sha256"))
        self.context = zmq.Context()
        self.info = info
        self.shell = self._socket(_address(info, "shell_port"))
        self.control = self._socket(_address(info, "control_port"))
        self.broken = ""
        self.wire: agent.Wire | None = None      # while the agent serves: the socket to it
        self.served = self.sent = 0

    def _socket(self, address: str):
        dealer = self.context.socket(zmq.DEALER)
        dealer.linger = 0
        dealer.connect(address)
        return dealer

    def close(self) -> None:
        self.pause()
        self.context.destroy(linger=0)

    def _send(self, msg_type: str, content: dict, seconds: float) -> dict:
        """Send one shell message; return its reply's content (or raise ``NoAnswer``)."""
        message = self.session.send(self.shell, msg_type, content)
        reply = self._reply(message["header"]["msg_id"], seconds)
        if reply is None:
            self.session.send(self.control, "interrupt_request", {})
            reply = self._reply(message["header"]["msg_id"], GRACE_SECONDS)
            if reply is None:
                self.broken = "the kernel stopped answering"
            raise NoAnswer(f"no answer within {seconds:g} s")
        return reply["content"]

    def _reply(self, msg_id: str, seconds: float) -> dict | None:
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            if not self.shell.poll(int(left * 1000) + 1):
                continue
            _, parts = self.session.feed_identities(self.shell.recv_multipart())
            reply = self.session.deserialize(parts)
            if reply["parent_header"].get("msg_id") == msg_id:
                return reply
        return None

    def install(self, seconds: float = 30.0) -> None:
        """Put the agent in the kernel (its source, compiled under a name of its own), with the
        doubles it builds for the grader (``doubles.py``)."""
        source = Path(agent.__file__).read_text(encoding="utf-8")
        made = Path(doubles.__file__).read_text(encoding="utf-8")
        code = (f"exec(compile({made!r}, {agent.DOUBLES_FILE!r}, 'exec'), _made := {{}})\n"
                f"exec(compile({source!r}, {agent.AGENT_FILE!r}, 'exec'), _ns := {{}})\n"
                f"{AGENT_NAME} = _ns['Agent'](get_ipython().user_ns, _made['DOUBLES'])\n"
                f"_ns['serve'](get_ipython().kernel, {AGENT_NAME}); del _ns, _made")
        content = self._send("execute_request", {
            "code": code, "silent": True, "store_history": False, "allow_stdin": False,
            "stop_on_error": False}, seconds)
        if content.get("status") != "ok":
            raise ChannelError(f"the agent could not start: {content.get('ename')}: "
                               f"{content.get('evalue')}")

    def request(self, op: str, args: dict, frames: list[bytes], seconds: float,
                cpu: float) -> tuple[dict, list[memoryview]]:
        """One operation on ``args`` (encoded into ``frames``); the agent's reply (``ok`` or
        ``error``, and the kernel's CPU time) and its frames."""
        if self.broken:
            raise ChannelError(self.broken)
        if self.wire is None:
            self._serve(seconds)
        self.sent += 1
        try:
            self.wire.send(agent.pack({"op": op, "args": args, "cpu": cpu, "id": self.sent},
                                      frames), seconds)
        except OSError as error:       # TimeoutError included: the agent does not read
            self._break(f"the kernel's agent took no request ({error})")
        answer = self._answer(self.sent, seconds)
        if answer is None:
            self.session.send(self.control, "interrupt_request", {})
            if self._answer(self.sent, GRACE_SECONDS) is None:
                self.broken = "the kernel stopped answering"
            raise NoAnswer(f"no answer within {seconds:g} s")
        if not ("ok" in answer[0] or "error" in answer[0]):
            raise ChannelError("an unreadable reply from the kernel")
        return answer

    def pause(self) -> None:
        """Let the kernel run cells again: the agent stops serving (a no-op if it is not)."""
        if self.wire is not None:
            try:
                self.wire.send(agent.END, 0.1)
            except OSError:       # the agent is gone, or reads nothing: nothing to stop
                pass
            self.wire.socket.close()
            self.wire = None

    def _break(self, why: str) -> NoReturn:
        """The channel cannot be used again (the stream lost its place, or the kernel is gone)."""
        self.broken = why
        if self.wire is not None:
            self.wire.socket.close()
            self.wire = None
        raise ChannelError(why)

    def _serve(self, seconds: float) -> None:
        """Listen on a socket of the grader's; have the agent connect to it and serve there."""
        self.served += 1
        if self.info["transport"] == "ipc":
            path = f"{_ipc_path(self.info, 'shell_port')}-grader-{self.served}"
            listener, where = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM), path
        else:
            listener, path = socket.socket(socket.AF_INET, socket.SOCK_STREAM), None
            where = (self.info["ip"], 0)
        bound = False
        with listener:
            try:
                try:
                    listener.bind(where)
                    bound = True
                    listener.listen(1)
                except OSError as error:    # e.g. a path over a Unix socket's 107 bytes
                    raise GraderFault(f"the grader could not listen at {where!r} ({error})") from None
                endpoint = (f"ipc://{path}" if path is not None else
                            f"tcp://{self.info['ip']}:{listener.getsockname()[1]}")
                connected = self._accept(listener, endpoint, seconds)
            finally:
                if bound and path is not None:
                    os.unlink(path)
        self.wire = agent.Wire(connected, MAX_REPLY_CHARS)

    def _accept(self, listener: socket.socket, endpoint: str, seconds: float) -> socket.socket:
        """Send ``SERVE`` naming ``endpoint``, where ``listener`` is bound; the agent's
        connection to it."""
        content = self._send(agent.SERVE, {"endpoint": endpoint}, seconds)
        if content.get("status") != "ok":
            raise ChannelError(f"the kernel's agent could not connect to the grader "
                               f"({content.get('error')})")
        listener.settimeout(seconds)
        try:
            connected, _ = listener.accept()   # it connected before it answered SERVE
        except TimeoutError:
            raise ChannelError("the kernel's agent said it connected, and did not") from None
        return connected

    def _answer(self, number: int, seconds: float) -> tuple[dict, list[memoryview]] | None:
        """The agent's reply to request ``number`` and its frames, or None if none came within
        ``seconds``. A reply to an earlier request (one that ran out of time) is dropped."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                message = self.wire.receive(left)
            except (OSError, ValueError) as error:   # ConnectionError: the kernel is gone
                self._break(f"the kernel broke its connection to the grader ({error})")
            if message is None:
                return None
            try:
                reply, frames = agent.unpack(message)
            except (ValueError, RecursionError) as error:   # too deep, too big, not JSON
                raise ChannelError(f"an unreadable reply from the kernel ({error})") from None
            if reply.get("id") == number:
                return reply, frames
        return None
