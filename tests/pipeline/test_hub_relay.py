"""The relay between a student's sandbox and the hub's API (``autograder/hub/relay.py``),
against a stand-in hub on loopback that records every request it receives."""
from __future__ import annotations

import asyncio
import socket

import pytest

from autograder.hub import relay

API = "/hub/api"


async def _hub(heard: list[bytes]) -> tuple[asyncio.AbstractServer, str]:
    """A stand-in hub: records each connection's bytes until the blank line after the head and
    the body it announces, then answers 200 with the request line."""
    async def serve(reader, writer):
        head = await reader.readuntil(b"\r\n\r\n")
        length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                       if line.lower().startswith(b"content-length:")), 0)
        heard.append(head + await reader.readexactly(length))
        line = head.split(b"\r\n")[0]
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(line), line))
        await writer.drain()
        writer.close()
    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    return server, f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}{API}"


async def _ask(path, data: bytes) -> bytes:
    reader, writer = await asyncio.open_unix_connection(path)
    writer.write(data)
    answer = await reader.read()
    writer.close()
    return answer


def _run(tmp_path, check, most: int = relay.CONNECTIONS):
    async def main():
        heard: list[bytes] = []
        hub, url = await _hub(heard)
        gate = relay.Relay(tmp_path / "hub.sock", "ada", url, most)
        await gate.start()
        try:
            await check(gate, heard)
        finally:
            await gate.close()
            hub.close()
    asyncio.run(main())


def test_only_her_servers_routes_reach_the_hub_once_per_connection(tmp_path):
    async def check(gate, heard):
        passed = await _ask(gate.path, b"POST /hub/api/users/ada/activity HTTP/1.1\r\nHost: x\r\n"
                            b"Connection: keep-alive\r\nContent-Length: 2\r\n\r\n{}"
                            b"DELETE /hub/api/users/bob/server HTTP/1.1\r\n\r\n")
        assert passed.startswith(b"HTTP/1.1 200") and passed.endswith(b"POST /hub/api/users/ada/activity HTTP/1.1")
        assert heard == [b"POST /hub/api/users/ada/activity HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n"
                         b"Connection: close\r\n\r\n{}"]      # the pipelined DELETE never left
        for request in [b"GET /hub/api/users/bob HTTP/1.1\r\n\r\n",
                        b"POST /hub/api/users/bob/activity HTTP/1.1\r\n\r\n",
                        b"GET /hub/api/user/../users HTTP/1.1\r\n\r\n",
                        b"GET /hub/api/user?x=1 HTTP/1.1\r\n\r\n",
                        b"GET /hub/login HTTP/1.1\r\n\r\n", b"GET http://127.0.0.1:1/ HTTP/1.1\r\n\r\n",
                        b"DELETE /hub/api/user HTTP/1.1\r\n\r\n"]:
            assert (await _ask(gate.path, request)).startswith(b"HTTP/1.1 403"), request
        for request, status in [
                (b"POST /hub/api/oauth2/token HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", b"411"),
                (b"POST /hub/api/oauth2/token HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", b"400"),
                (b"POST /hub/api/oauth2/token HTTP/1.1\r\n folded: x\r\n\r\n", b"400"),
                (b"POST /hub/api/oauth2/token HTTP/1.1\r\nContent-Length: %d\r\n\r\n" % (1 << 20), b"413")]:
            assert (await _ask(gate.path, request)).startswith(b"HTTP/1.1 " + status), request
        assert len(heard) == 1
        for allowed in ("GET /hub/api", "GET /hub/api/", "GET /hub/api/user", "POST /hub/api/oauth2/token"):
            answer = await _ask(gate.path, allowed.encode() + b" HTTP/1.1\r\n\r\n")
            assert answer.endswith(allowed.encode() + b" HTTP/1.1"), answer
    _run(tmp_path, check)


def test_a_flood_holds_no_more_than_its_share_of_connections(tmp_path):
    """Two hundred idle connections: four are accepted (waiting for a head), a few wait in the
    socket's queue, the rest are refused at connect; once they go, a request passes."""
    async def check(gate, heard):
        flood = []
        for _ in range(200):
            probe = socket.socket(socket.AF_UNIX)
            probe.setblocking(False)
            try:
                probe.connect(str(gate.path))
                flood.append(probe)
            except BlockingIOError:       # the queue is full
                probe.close()
            await asyncio.sleep(0)
        await asyncio.sleep(0.2)
        assert gate.open == 4 and 4 < len(flood) <= 4 + 4 + 1, (gate.open, len(flood))
        for probe in flood:
            probe.close()
        await asyncio.sleep(0.2)
        assert (await _ask(gate.path, b"GET /hub/api/user HTTP/1.1\r\n\r\n")).startswith(b"HTTP/1.1 200")
        assert gate.open == 0
    _run(tmp_path, check, most=4)


@pytest.mark.parametrize("user", ["ada", "o-brien"])
def test_the_routes_name_her_and_the_hubs_prefix(user):
    assert relay.routes("http://127.0.0.1:8081/prefix/hub/api/", user) == {
        ("GET", "/prefix/hub/api"), ("GET", "/prefix/hub/api/"), ("GET", "/prefix/hub/api/user"),
        ("POST", "/prefix/hub/api/oauth2/token"), ("POST", f"/prefix/hub/api/users/{user}/activity")}
