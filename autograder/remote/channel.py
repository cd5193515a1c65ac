"""The grader's half of the data-only channel: requests to the agent in a running kernel.

A ``Channel`` has its own ZeroMQ sockets to the kernel's shell and control ports (from the
kernel's connection info) and signs messages with the kernel's key. It installs the agent
with one silent ``execute_request``, which also registers the agent's handler for a
message type of its own (``agent.REQUEST``); each request is then such a message, and its
reply (``agent.REPLY``) holds the agent's answer as JSON text, read with ``json`` alone.
Every wait has a deadline on the clock; past it the kernel is interrupted (a control
message) and the request fails.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

import zmq
from jupyter_client.session import Session

from autograder.remote import agent, doubles

AGENT_NAME = "_minitorch_grader_agent"
MAX_REPLY_CHARS = 64 << 20
GRACE_SECONDS = 5.0          # after an interrupt, for the kernel to answer


class ChannelError(RuntimeError):
    """The kernel did not answer a request properly (no agent, a broken reply)."""


class NoAnswer(ChannelError):
    """The kernel did not answer within the time given (it was interrupted)."""


def _address(info: dict, port: str) -> str:
    if info["transport"] == "ipc":
        return f"ipc://{info['ip']}-{info[port]}"
    return f"tcp://{info['ip']}:{info[port]}"


class Channel:
    """Requests to the agent in the kernel described by ``info`` (its connection info)."""

    def __init__(self, info: dict) -> None:
        key = info["key"].encode() if isinstance(info["key"], str) else info["key"]
        self.session = Session(key=key, signature_scheme=info.get("signature_scheme", "hmac-sha256"))
        self.context = zmq.Context()
        self.shell = self._socket(_address(info, "shell_port"))
        self.control = self._socket(_address(info, "control_port"))
        self.broken = ""

    def _socket(self, address: str):
        socket = self.context.socket(zmq.DEALER)
        socket.linger = 0
        socket.connect(address)
        return socket

    def close(self) -> None:
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

    def request(self, op: str, args: list, seconds: float, cpu: float) -> dict:
        """One operation; the agent's reply (``ok`` or ``error``, and the kernel's CPU time)."""
        if self.broken:
            raise ChannelError(self.broken)
        text = json.dumps({"op": op, "args": args, "cpu": cpu})
        content = self._send(agent.REQUEST, {"request": text}, seconds)
        plain = content.get("reply")
        if not isinstance(plain, str) or len(plain) > MAX_REPLY_CHARS:
            raise ChannelError("the kernel's agent did not answer properly")
        try:
            reply = json.loads(plain)
        except ValueError as error:
            raise ChannelError(f"an unreadable reply from the kernel ({error})") from None
        if not isinstance(reply, dict) or not ("ok" in reply or "error" in reply):
            raise ChannelError("an unreadable reply from the kernel")
        return reply
