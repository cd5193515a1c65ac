"""Pairs of students whose solution cells are near-identical: leads for the class report.

For each solution cell of a unit, every two students' versions of it are compared with the
copy flag's detector (``autograder.pipeline.term.fingerprints``: copydetect's k-grams on
Python's normal form, so renaming, layout, comments, annotations and added code hide
nothing), leaving out the k-grams the release notebook holds. A pair is near-identical when
each cell's own code is covered at least ``copies.THRESHOLD`` by the other's, and each holds
``MIN_SIZE`` characters of lexed code or more beyond the release's k-grams (short canonical
code is everyone's). Two students whose cells both copy the reference are
listed under the copies already, not again here. Nothing here changes a score.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

from autograder.pipeline.term import copies
from autograder.pipeline.term.fingerprints import Print, containment

SHOWN = 20_000     # characters of a cell shown in the report (the rest is cut)
SIDE_BY_SIDE = 50  # the most similar pairs shown with their code; the others in a table
MIN_SIZE = 120     # about copies.MIN_NODES syntax nodes: unit 06's Sequential (65) lexes to 109


@dataclass(frozen=True)
class Pair:
    unit: str
    cell: str
    students: tuple[str, str]
    share: float                 # the smaller of the two cells' coverage by the other's
    code: tuple[str, str]        # as the two students wrote it


def pairs(unit: str, cell: str, versions: dict[str, str], known: set[int],
          copied: set[str] = frozenset()) -> list[Pair]:
    """The near-identical pairs among ``versions`` (student: their code of ``cell``); ``known``:
    the release notebook's k-grams; ``copied``: students whose cell copies the reference."""
    prints: dict[str, Print] = {
        student: copies.cell_print(code).without(known) for student, code in sorted(versions.items())}
    prints = {student: found for student, found in prints.items() if found.size >= MIN_SIZE}
    found = []
    for a, b in combinations(prints, 2):
        if (a in copied and b in copied) or not prints[a].grams.keys() & prints[b].grams.keys():
            continue
        share = min(containment([prints[a]], prints[b].hashes),
                    containment([prints[b]], prints[a].hashes))
        if share >= copies.THRESHOLD:
            found.append(Pair(unit, cell, (a, b), share,
                              (versions[a][:SHOWN], versions[b][:SHOWN])))
    return found
