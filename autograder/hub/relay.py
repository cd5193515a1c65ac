"""The hub's API as a student's server reaches it: a Unix socket per sandbox, outside it.

A student's server runs in a network namespace of its own (``sandbox``), where nothing of the
machine's loopback exists: not the hub's API, not the proxy's, no other user's server. It
still needs a few of the hub's API routes, and JupyterHub's HTTP client speaks ``http+unix://``:
the spawner points ``JUPYTERHUB_API_URL`` at a socket in her sandbox, served here, in the hub's
process, which passes on only

- ``GET <api>`` and ``GET <api>/`` (the server checks the hub's version as it starts),
- ``GET <api>/user`` (who a token belongs to: her OAuth logins),
- ``POST <api>/oauth2/token`` (the OAuth code exchange of her login),
- ``POST <api>/users/<her>/activity`` (her activity, read by the idle culler),

each with the token it carries: whatever holds her server's token (her kernels too) can do
through it only what that token may, on these routes. Each connection carries one request
(``Connection: close`` is what the hub sees; bytes after the request's body are never read),
its head and body bounded, within ``TIMEOUT`` seconds; at most ``CONNECTIONS`` connections of
one sandbox are accepted at once, the next ones wait in the socket's queue (as long), and past
it her connect fails: a flood from her kernels holds at most that many of the hub's open files.
"""
from __future__ import annotations

import asyncio
import contextlib
import os
import socket
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

HEAD_BYTES = 16 << 10
BODY_BYTES = 64 << 10
CONNECTIONS = 16
TIMEOUT = 30.0
DROPPED = (b"connection", b"keep-alive", b"proxy-connection", b"upgrade")


class Refused(ValueError):
    """A request the relay does not pass on, with the status it answers."""

    def __init__(self, status: str) -> None:
        super().__init__(status)
        self.status = status


def routes(api_url: str, user: str) -> frozenset[tuple[str, str]]:
    """The (method, target) pairs passed on for ``user``'s server, ``api_url`` the hub's API."""
    api = urlsplit(api_url).path.rstrip("/")
    return frozenset({("GET", api), ("GET", f"{api}/"), ("GET", f"{api}/user"),
                      ("POST", f"{api}/oauth2/token"), ("POST", f"{api}/users/{user}/activity")})


def request(head: bytes, allowed: frozenset[tuple[str, str]]) -> tuple[bytes, int]:
    """The head to send the hub for ``head`` (a request's lines and the blank line ending
    them) and the length of its body; ``Refused`` if it is not one of ``allowed``."""
    line, *fields = head[:-4].split(b"\r\n")
    parts = line.split(b" ")
    if len(parts) != 3 or not parts[2].startswith(b"HTTP/1."):
        raise Refused("400 Bad Request")
    if (parts[0].decode("latin-1"), parts[1].decode("latin-1")) not in allowed:
        raise Refused("403 Forbidden")
    kept, lengths = [], []
    for field in fields:
        name, colon, value = field.partition(b":")
        if not colon or not name or name != name.strip() or b" " in name or b"\t" in name:
            raise Refused("400 Bad Request")
        key = name.lower()
        if key == b"transfer-encoding":
            raise Refused("411 Length Required")
        if key == b"content-length":
            lengths.append(value.strip())
        if key not in DROPPED:
            kept.append(field)
    if len(lengths) > 1 or (lengths and not lengths[0].isdigit()):
        raise Refused("400 Bad Request")
    length = int(lengths[0]) if lengths else 0
    if length > BODY_BYTES:
        raise Refused("413 Content Too Large")
    return b"\r\n".join([line, *kept, b"Connection: close", b"", b""]), length


@dataclass
class Relay:
    """Serves ``path`` for ``user``'s server, passing her allowed requests to ``api_url``."""

    path: Path
    user: str
    api_url: str
    most: int = CONNECTIONS

    def __post_init__(self) -> None:
        self.allowed = routes(self.api_url, self.user)
        self.open = 0
        self._free = asyncio.Semaphore(self.most)
        self._tasks: set[asyncio.Task] = set()

    async def start(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(self.path))
        os.chmod(self.path, 0o666)    # her account connects; only her sandbox shows the path
        listener.listen(self.most)
        listener.setblocking(False)
        self._keep(self._accept(listener))

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    def _keep(self, work) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _accept(self, listener: socket.socket) -> None:
        """Accept a connection only while fewer than ``most`` are open: the others wait in
        the listening queue (``most`` long; past it, her connect fails), holding none of the
        hub's files."""
        loop = asyncio.get_running_loop()
        with listener:
            while True:
                await self._free.acquire()
                connection, _ = await loop.sock_accept(listener)
                self._keep(self._serve(connection))

    async def _serve(self, connection: socket.socket) -> None:
        self.open += 1
        writer = None
        try:
            reader, writer = await asyncio.open_unix_connection(sock=connection, limit=HEAD_BYTES)
            await asyncio.wait_for(self._relay(reader, writer), TIMEOUT)
        except Refused as refused:
            writer.write(f"HTTP/1.1 {refused.status}\r\nContent-Length: 0\r\n"
                         "Connection: close\r\n\r\n".encode())
        except (OSError, EOFError, asyncio.LimitOverrunError, asyncio.TimeoutError):
            pass
        finally:
            self.open -= 1
            self._free.release()
            (writer or connection).close()

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """One request from her server to the hub, and the hub's answer back."""
        head, length = request(await reader.readuntil(b"\r\n\r\n"), self.allowed)
        body = await reader.readexactly(length)
        hub = urlsplit(self.api_url)
        upstream, sending = await asyncio.open_connection(hub.hostname, hub.port)
        try:
            sending.write(head + body)
            while chunk := await upstream.read(1 << 16):
                writer.write(chunk)
                await writer.drain()
        finally:
            sending.close()
