"""(input, target) token sequences for a GPT: the target at position ``t`` is token ``t + 1``,
and ``IGNORE_INDEX`` marks the positions whose loss does not count (CrossEntropyLoss's
``ignore_index``, -100 as in PyTorch)."""
from __future__ import annotations

from typing import Iterable

import numpy as np

from minitorch_ref.data.text import CharTokenizer, check_block_size

IGNORE_INDEX = -100


def sort_examples(problems: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The training sequences of a sorting task: each problem followed by its sorted digits.

    For a problem of ``L`` tokens the sequence is ``problem + sorted(problem)`` (``2L``
    tokens); the input is its first ``2L - 1`` tokens, the target its last ``2L - 1``, and the
    first ``L - 1`` targets (the rest of the problem, which cannot be predicted) are
    ``IGNORE_INDEX``: only the ``L`` sorted tokens count. ``[3, 1, 2]`` gives the input
    ``[3, 1, 2, 1, 2]`` and the target ``[-100, -100, 1, 2, 3]``.

    Shape:
        - problems: ``(N, L)`` integer tokens ``>= 0``
        - Output: ``X`` and ``Y``, each ``(N, 2L - 1)``, int64
    """
    problems = np.asarray(problems)
    if problems.ndim != 2 or problems.shape[1] < 1 or problems.dtype.kind not in "iu":
        raise ValueError(f"sort_examples expected integer problems of shape (N, L), got "
                         f"{problems.dtype} {problems.shape}. Did you forget the batch dimension?")
    if problems.size and problems.min() < 0:
        raise ValueError(f"sort_examples: tokens must be >= 0, got {problems.min()}")
    sequences = np.concatenate([problems, np.sort(problems, axis=1)], axis=1).astype(np.int64)
    X, Y = sequences[:, :-1], sequences[:, 1:].copy()
    Y[:, :problems.shape[1] - 1] = IGNORE_INDEX
    return X, Y


def name_sequences(words: Iterable[str], tokenizer: CharTokenizer,
                   block_size: int) -> tuple[np.ndarray, np.ndarray]:
    """One training sequence per word, framed by boundary tokens as ``.emma.``.

    The input is the first ``block_size`` tokens of ``.word.`` without its last, padded with
    the boundary token; the target at each position is the next token, and
    ``IGNORE_INDEX`` after the closing boundary (padding is not text). A word longer than
    ``block_size - 1`` characters is cut: its last targets do not fit. ``"emma"`` with
    ``block_size=8`` gives ``[0, 5, 13, 13, 1, 0, 0, 0]`` and ``[5, 13, 13, 1, 0, -100, -100, -100]``.

    Shape:
        - Output: ``X`` and ``Y``, each ``(len(words), block_size)``, int64
    """
    check_block_size(block_size)
    words = list(words)
    boundary = tokenizer.boundary_index
    X = np.full((len(words), block_size), boundary, dtype=np.int64)
    Y = np.full((len(words), block_size), IGNORE_INDEX, dtype=np.int64)
    for row, word in enumerate(words):
        tokens = np.concatenate([[boundary], tokenizer.encode(word), [boundary]])
        inputs, targets = tokens[:-1][:block_size], tokens[1:][:block_size]
        X[row, :len(inputs)], Y[row, :len(targets)] = inputs, targets
    return X, Y
