"""A larger text that ships offline: the help topics of CPython's own documentation.

CPython installs ``pydoc_data.topics``, the text ``help("assert")``, ``help("for")``, ...
print: about 80 topics of the language reference, some 465,000 characters of English prose,
grammar and code (for comparison, nanoGPT's Shakespeare has 1.1 million). Unit 16's optional
stretch run trains a character-level GPT on it. Nothing is downloaded; the text is the one of
the Python that runs the notebook, so the same Python always gives the same text and split.
"""
from __future__ import annotations

import importlib
from typing import NamedTuple

from course.datasets._checks import check_fraction

TOPICS_MODULE = "pydoc_data.topics"


class TextSplits(NamedTuple):
    """A text and its split: ``train`` is the first part of ``text``, ``val`` the rest."""
    text: str
    train: str
    val: str


def _topics() -> dict[str, str]:
    try:
        module = importlib.import_module(TOPICS_MODULE)
    except ImportError as exc:
        raise ModuleNotFoundError(
            f"This Python has no {TOPICS_MODULE}, the text of help()'s topics that CPython "
            "installs with its standard library. Some Linux distributions ship it apart (on "
            "Debian and Ubuntu it is in the package libpython3.X-stdlib); run the notebook "
            "with a full CPython installation, such as the course's environment.") from exc
    topics = getattr(module, "topics", None)
    if not isinstance(topics, dict) or not topics:
        raise ValueError(f"{TOPICS_MODULE}.topics should be a non-empty dict of help texts, "
                         f"got {type(topics).__name__}")
    return topics


def load_python_docs(val_size: float = 0.1) -> TextSplits:
    """The help topics of CPython's documentation as one text, split for training.

    The topics are joined in the order of their names, each followed by a blank line; the
    first ``1 - val_size`` of the characters are for training and the last ``val_size`` for
    validation, as nanoGPT splits Shakespeare (so the validation text is prose the model never
    read, not a shuffle of the same sentences).

    Args:
        val_size: the fraction of the characters kept for validation, strictly between 0 and 1.

    Returns:
        ``TextSplits(text, train, val)`` with ``train + val == text``.

    Raises:
        ModuleNotFoundError: if this Python has no ``pydoc_data.topics``.
    """
    val_size = check_fraction("val_size", val_size)
    topics = _topics()
    text = "".join(topics[name].strip("\n") + "\n\n" for name in sorted(topics))
    cut = len(text) - round(val_size * len(text))
    return TextSplits(text=text, train=text[:cut], val=text[cut:])
