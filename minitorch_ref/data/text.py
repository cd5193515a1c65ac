"""Text as integers: a character tokenizer and the (context, next character) samples of a
character-level language model."""
from __future__ import annotations

from typing import Iterable

import numpy as np

from minitorch_ref.nn._checks import check_indices


class CharTokenizer:
    """One token per character, plus a boundary token that marks where a word starts and ends.

    The vocabulary is the boundary token first (index 0), then every character of the
    training words in sorted order, so the same words always give the same indices (for
    lowercase names: ``'.'`` is 0, ``'a'`` is 1, ..., ``'z'`` is 26).

    Args:
        words: the texts whose characters make the vocabulary (e.g. the training names).
        boundary: the boundary token, a single character that occurs in no word.

    Attributes:
        itos: the vocabulary, index to character (a list).
        stoi: character to index (a dict).
    """

    def __init__(self, words: Iterable[str], boundary: str = ".") -> None:
        words = list(words)
        if not isinstance(boundary, str) or len(boundary) != 1:
            raise ValueError(f"boundary must be a single character, got {boundary!r}")
        chars = sorted(set("".join(words)))
        if boundary in chars:
            word = next(w for w in words if boundary in w)
            raise ValueError(
                f"the boundary token {boundary!r} occurs in the word {word!r}: choose another "
                "boundary character (e.g. CharTokenizer(words, boundary='#'))"
            )
        self.boundary = boundary
        self.itos = [boundary, *chars]
        self.stoi = {char: index for index, char in enumerate(self.itos)}

    @property
    def vocab_size(self) -> int:
        return len(self.itos)

    @property
    def boundary_index(self) -> int:
        return 0

    def encode(self, text: str) -> np.ndarray:
        """The indices of ``text``'s characters, an int64 array of shape ``(len(text),)``.

        Raises:
            ValueError: for a character that is not in the vocabulary, naming it and where
                it is (a KeyError's message would be printed in quotes).
        """
        unknown = next((i for i, char in enumerate(text) if char not in self.stoi), None)
        if unknown is not None:
            raise ValueError(
                f"character {text[unknown]!r} at position {unknown} of {text!r} is not in the "
                f"vocabulary of {self.vocab_size} tokens ({''.join(self.itos)!r})"
            )
        return np.array([self.stoi[char] for char in text], dtype=np.int64)

    def decode(self, indices: Iterable[int] | np.ndarray) -> str:
        """The characters of ``indices`` (shape ``(L,)``), boundary tokens included."""
        indices = np.asarray(indices)
        if indices.size == 0:
            return ""
        indices = check_indices("CharTokenizer.decode", indices, self.vocab_size)
        return "".join(self.itos[i] for i in indices.reshape(-1))

    def __repr__(self) -> str:
        return f"CharTokenizer(vocab_size={self.vocab_size}, boundary={self.boundary!r})"


def context_windows(words: Iterable[str], tokenizer: CharTokenizer,
                    block_size: int) -> tuple[np.ndarray, np.ndarray]:
    """Every (context, next character) pair of ``words``, as Bengio et al.'s MLP reads them.

    Each word is framed by boundary tokens: the context starts as ``block_size`` boundary
    tokens, and after the word's last character the target is the boundary (the word ends).
    ``"emma"`` with ``block_size=3`` gives 5 samples: ``...`` -> ``e``, ``..e`` -> ``m``,
    ``.em`` -> ``m``, ``emm`` -> ``a``, ``mma`` -> ``.``.

    Returns:
        ``X`` of shape ``(N, block_size)`` and ``y`` of shape ``(N,)``, int64, with
        ``N = sum(len(word) + 1)``.
    """
    check_block_size(block_size)
    contexts, targets = [], []
    pad = np.full(block_size, tokenizer.boundary_index, dtype=np.int64)
    for word in words:
        tokens = tokenizer.encode(word)
        stream = np.concatenate([pad, tokens, pad[:1]])
        windows = np.lib.stride_tricks.sliding_window_view(stream[:-1], block_size)
        contexts.append(windows)
        targets.append(stream[block_size:])
    if not contexts:
        return np.empty((0, block_size), dtype=np.int64), np.empty(0, dtype=np.int64)
    return np.concatenate(contexts), np.concatenate(targets)


def check_block_size(block_size: object) -> None:
    """ValueError unless ``block_size`` is a positive integer."""
    if isinstance(block_size, bool) or not isinstance(block_size, (int, np.integer)) \
            or block_size < 1:
        raise ValueError(f"block_size must be a positive integer, got {block_size!r}")
