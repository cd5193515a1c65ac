"""The grader's half of the data-only channel: requests to the agent in a running kernel.

A ``Channel`` has its own ZeroMQ sockets to the kernel's shell and control ports (from the
kernel's connection info), signs messages with the kernel's key, and sends each request as
a silent ``execute_request`` whose one line calls the agent; the reply comes back in
``user_expressions`` as the text of a Python string literal, read with
``ast.literal_eval`` (literals only) and then ``json``. Every wait has a deadline on the
clock; past it the kernel is interrupted (a control message) and the request fails.
"""
from __future__ import annotations

import ast
import json
import time
from pathlib import Path

import zmq
from jupyter_client.session import Session

from autograder.remote import agent

AGENT_NAME = "_minitorch_grader_agent"
REPLY_NAME = "_minitorch_grader_reply"
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

    def _execute(self, code: str, seconds: float) -> dict:
        """Run ``code`` silently; return ``user_expressions``' reply text (or raise)."""
        message = self.session.send(self.shell, "execute_request", {
            "code": code, "silent": True, "store_history": False, "allow_stdin": False,
            "stop_on_error": False, "user_expressions": {"r": REPLY_NAME}})
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
        """Put the agent in the kernel (its source, compiled under a name of its own)."""
        source = Path(agent.__file__).read_text(encoding="utf-8")
        code = (f"exec(compile({source!r}, {agent.AGENT_FILE!r}, 'exec'), _ns := {{}})\n"
                f"{AGENT_NAME} = _ns['Agent'](get_ipython().user_ns); del _ns\n"
                f"{REPLY_NAME} = ''")
        content = self._execute(code, seconds)
        if content.get("status") != "ok":
            raise ChannelError(f"the agent could not start: {content.get('ename')}: "
                               f"{content.get('evalue')}")

    def request(self, op: str, args: list, seconds: float, cpu: float) -> dict:
        """One operation; the agent's reply (``ok`` or ``error``, and the kernel's CPU time)."""
        if self.broken:
            raise ChannelError(self.broken)
        text = json.dumps({"op": op, "args": args, "cpu": cpu})
        content = self._execute(f"{REPLY_NAME} = {AGENT_NAME}.handle({text!r})", seconds)
        expression = content.get("user_expressions", {}).get("r", {})
        plain = expression.get("data", {}).get("text/plain", "")
        if content.get("status") != "ok" or expression.get("status") != "ok" or \
                len(plain) > MAX_REPLY_CHARS:
            raise ChannelError("the kernel's agent did not answer properly")
        try:
            reply = json.loads(ast.literal_eval(plain))
        except (ValueError, SyntaxError) as error:
            raise ChannelError(f"an unreadable reply from the kernel ({error})") from None
        if not isinstance(reply, dict) or not ("ok" in reply or "error" in reply):
            raise ChannelError("an unreadable reply from the kernel")
        return reply
