"""Every socket listening in the network namespaces of some processes, read on the machine's
side: ``/proc/<pid>/net/{tcp,tcp6,unix}`` are the tables of the namespace ``pid`` is in, so
one process per namespace shows all of it (the hub's and the instructor's: the machine's; each
student's sandbox: its own)."""
from __future__ import annotations

import ipaddress
import os
import sys
from dataclasses import dataclass

import psutil

LISTEN, ACCEPTING = "0A", "00010000"      # a TCP socket's state; a Unix socket's flags


@dataclass(frozen=True)
class Listener:
    namespace: str         # the network namespace, as /proc/<pid>/ns/net names it
    family: str            # "inet", "inet6" or "unix"
    address: str           # an IP address, a socket's path, or "@" and an abstract name
    port: int = 0


def tree(pid: int) -> list[int]:
    """``pid`` and every process it started."""
    return [pid] + [child.pid for child in psutil.Process(pid).children(recursive=True)]


def namespace(pid: int) -> str:
    return os.readlink(f"/proc/{pid}/ns/net")


def listeners(pids: list[int]) -> set[Listener]:
    """What listens in the namespaces of ``pids`` (one table read per namespace)."""
    found: set[Listener] = set()
    done: set[str] = set()
    for pid in pids:
        try:
            net = namespace(pid)
            if net not in done:
                found |= _tables(pid, net)
                done.add(net)
        except (FileNotFoundError, ProcessLookupError):
            pass       # ended meanwhile
    return found


def _tables(pid: int, net: str) -> set[Listener]:
    found = set()
    for family in ("inet", "inet6"):
        table = f"/proc/{pid}/net/tcp" + ("6" if family == "inet6" else "")
        for line in open(table).read().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            if state == LISTEN:
                ip, port = local.split(":")
                found.add(Listener(net, family, str(_ip(ip)), int(port, 16)))
    for line in open(f"/proc/{pid}/net/unix").read().splitlines()[1:]:
        fields = line.split(maxsplit=7)
        if len(fields) == 8 and fields[3] == ACCEPTING:
            found.add(Listener(net, "unix", fields[7]))
    return found


def _ip(hexed: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """The kernel's hex of an address: 32-bit words in the machine's byte order."""
    raw = bytes.fromhex(hexed)
    step = -1 if sys.byteorder == "little" else 1
    words = b"".join(raw[i:i + 4][::step] for i in range(0, len(raw), 4))
    return ipaddress.ip_address(words)
