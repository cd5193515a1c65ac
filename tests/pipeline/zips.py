"""Hand-made zip archives for the LMS tests: entries with any name, Unix mode and file type
(as a hostile upload would encode them), and nested zip bombs.

(Imported as ``zips``: pytest puts this folder on ``sys.path``.)
"""
from __future__ import annotations

import io
import struct
import zipfile


def zip_bytes(entries: dict[str, bytes | tuple[bytes, int]]) -> bytes:
    """A zip of ``entries``: name → content, or (content, Unix mode with its file type,
    e.g. ``stat.S_IFLNK | 0o777`` for a symbolic link whose target is the content)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for name, content in entries.items():
            data, mode = content if isinstance(content, tuple) else (content, 0)
            info = zipfile.ZipInfo(name)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = mode << 16
            zf.writestr(info, data)
    return out.getvalue()


def nested_bomb(levels: int, copies: int, zeros: int) -> bytes:
    """``levels`` zips, each holding ``copies`` of the one below; the innermost holds
    ``copies`` files of ``zeros`` zero bytes: ``copies ** levels * zeros`` bytes in all."""
    inner = {f"zeros{i}.bin": bytes(zeros) for i in range(copies)}
    for level in range(levels - 1):
        inner = {f"level{level}-{i}.zip": zip_bytes(inner) for i in range(copies)}
    return zip_bytes(inner)


def understate(archive: bytes, name: str, size: int) -> bytes:
    """``archive`` with entry ``name`` declaring ``size`` uncompressed bytes (in its local
    header and its central directory record), whatever its data inflates to."""
    data = bytearray(archive)
    with zipfile.ZipFile(io.BytesIO(archive)) as zf:
        local = zf.getinfo(name).header_offset
    struct.pack_into("<I", data, local + 22, size)
    central = data.find(b"PK\x01\x02")
    while central >= 0:
        length = struct.unpack_from("<H", data, central + 28)[0]
        if data[central + 46:central + 46 + length] == name.encode():
            struct.pack_into("<I", data, central + 24, size)
        central = data.find(b"PK\x01\x02", central + 4)
    return bytes(data)
