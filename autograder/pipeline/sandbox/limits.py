"""What one student's server (or one grading job) may use: memory, processes, CPU and disk,
as one frozen record, enforced by a control group (``cgroups``).

The defaults suit a course of notebooks that train small numpy networks (unit 10's MLP on
MNIST peaks near 600 MB): ``MINITORCH_HUB_LIMITS`` overrides any of them, e.g.
``memory=4G,processes=512,cpus=2,disk=5G,inbound=512M``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, fields, replace

VARIABLE = "MINITORCH_HUB_LIMITS"
UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?", re.IGNORECASE)


@dataclass(frozen=True)
class Limits:
    """One student's server and everything it starts (kernels, terminals), together.

    Args:
        memory: bytes of RAM (the kernel kills the largest process beyond it);
        processes: processes and threads at once (a fork bomb stops there);
        cpus: CPU time, in cores (``0.5``: half of one core at most, however busy the rest);
        disk: bytes in the home (a file system image of that size);
        inbound: bytes in what she hands in through the exchange (an image of its own, so
            files are bounded too, by its inodes: mkfs.ext4 makes one per 4 KiB below 512M).
    """

    memory: int = 2 << 30
    processes: int = 256
    cpus: float = 1.0
    disk: int = 2 << 30
    inbound: int = 256 << 20

    def describe(self) -> str:
        return (f"memory {_size(self.memory)}, {self.processes} processes, "
                f"{self.cpus:g} CPU, disk {_size(self.disk)}, inbound {_size(self.inbound)}")


def parse(text: str | None, base: Limits = Limits()) -> Limits:
    """``base`` with the ``name=value`` pairs of ``text`` (``None`` or ``""``: ``base``)."""
    known = {field.name: field.type for field in fields(Limits)}
    changes = {}
    for item in filter(None, (part.strip() for part in (text or "").split(","))):
        name, _, value = item.partition("=")
        name = name.strip().lower()
        if name not in known or not value.strip():
            raise ValueError(f"{VARIABLE}: {item!r} is not one of "
                             f"{', '.join(f'{n}=VALUE' for n in known)}")
        changes[name] = _value(name, value.strip())
    return replace(base, **changes)


def _value(name: str, value: str) -> int | float:
    if name == "cpus":
        number = float(value) if re.fullmatch(r"\d+(\.\d+)?", value) else 0.0
        if not 0.01 <= number <= 1024:
            raise ValueError(f"{VARIABLE}: cpus={value!r} must be a number of cores, e.g. 1 or 0.5")
        return number
    if name == "processes":
        if not value.isdigit() or not 16 <= int(value) <= 1 << 20:
            raise ValueError(f"{VARIABLE}: processes={value!r} must be a whole number, 16 or more")
        return int(value)
    match = SIZE.fullmatch(value)
    if not match:
        raise ValueError(f"{VARIABLE}: {name}={value!r} must be a size such as 512M or 2G")
    size = int(float(match.group(1)) * UNITS[match.group(2).upper()])
    if size < 64 << 20:
        raise ValueError(f"{VARIABLE}: {name}={value!r} is less than 64M, too little for JupyterLab")
    return size


def _size(size: int) -> str:
    for unit in ("T", "G", "M", "K"):
        if size >= UNITS[unit] and size % UNITS[unit] == 0:
            return f"{size // UNITS[unit]}{unit}"
    return f"{size}B"
