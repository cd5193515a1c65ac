"""``save`` and ``load`` a state dict, as ``torch.save``/``torch.load``, in .npz or .json.

``.npz`` is numpy's compressed archive; ``.json`` is text a person (or another
language) can read, with every value written exactly (Python writes the
shortest decimal that reads back as the same float).
"""
from __future__ import annotations

import json
from collections import OrderedDict
from pathlib import Path

import numpy as np

FORMATS = (".npz", ".json")


def _format(path: str | Path) -> str:
    suffix = Path(path).suffix
    if suffix not in FORMATS:
        raise ValueError(f"save/load support {' and '.join(FORMATS)} files, got {str(path)!r}")
    return suffix


def save(state_dict: dict[str, np.ndarray], path: str | Path) -> None:
    """Write ``state_dict`` (e.g. ``model.state_dict()``) to ``path`` (.npz or .json)."""
    arrays = {key: np.asarray(value) for key, value in state_dict.items()}
    if _format(path) == ".npz":
        np.savez_compressed(path, **arrays)
        return
    document = {key: {"dtype": str(a.dtype), "shape": list(a.shape), "data": a.tolist()}
                for key, a in arrays.items()}
    Path(path).write_text(json.dumps(document, indent=1))


def load(path: str | Path) -> OrderedDict[str, np.ndarray]:
    """Read a state dict written by ``save``; pass it to ``model.load_state_dict``."""
    if _format(path) == ".npz":
        with np.load(path) as archive:
            return OrderedDict((key, archive[key]) for key in archive.files)
    document = json.loads(Path(path).read_text())
    return OrderedDict(
        (key, np.array(entry["data"], dtype=entry["dtype"]).reshape(entry["shape"]))
        for key, entry in document.items()
    )
