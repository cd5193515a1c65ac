"""Make a submitted notebook gradable, saying what was changed and why.

nbgrader restores edited read-only cells and (with ``add_missing_cells``) deleted
grade cells, but it cannot grade a notebook it cannot read, a folder without the
notebook, or a notebook whose deleted read-only cell (the imports, a provided
class) breaks everything after it; and it fails outright (KeyError) when a deleted
grade cell follows a read-only cell. ``prepare`` handles those cases before nbgrader runs:

- unreadable JSON, or no notebook of the expected name (and not exactly one other
  notebook to take instead): the unchanged release notebook is graded instead,
  which scores what the release scores (zero, apart from free points);
- an older nbformat (v3): converted to v4;
- a deleted read-only cell (set-up, provided code, visible or hidden test): put
  back from the release notebook, after the cell that preceded it; nbgrader then
  restores its exact source from the gradebook, hidden tests included.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
from nbformat import NotebookNode


def _key(cell: NotebookNode) -> str | None:
    grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
    return f"grade:{grade_id}" if grade_id else (f"id:{cell['id']}" if cell.get("id") else None)


def _locked(cell: NotebookNode) -> bool:
    return bool(cell.get("metadata", {}).get("nbgrader", {}).get("locked"))


def restore_locked_cells(nb: NotebookNode, release: NotebookNode) -> list[str]:
    """Insert the release's read-only cells that ``nb`` lacks; return their grade ids."""
    restored = []
    for position, cell in enumerate(release.cells):
        key = _key(cell)
        present = {_key(c): i for i, c in enumerate(nb.cells)}
        if not _locked(cell) or key in present:
            continue
        earlier = [present[_key(c)] for c in release.cells[:position] if _key(c) in present]
        nb.cells.insert(max(earlier) + 1 if earlier else 0, nbformat.from_dict(dict(cell)))
        restored.append(cell.metadata.nbgrader.grade_id)
    return restored


def _read(path: Path) -> tuple[NotebookNode | None, int | None, str]:
    """The notebook as v4, the nbformat it was saved in, and why it could not be read."""
    try:
        with open(path, encoding="utf-8") as stream:
            version = nbformat.reader.reads(stream.read()).get("nbformat")
        nb = nbformat.read(str(path), as_version=4)
    except Exception as error:  # noqa: BLE001 - any unreadable file is reported the same way
        return None, None, f"{type(error).__name__}: {str(error)[:200]}"
    return nb, version, ""


def _candidate(folder: Path, name: str) -> Path | None:
    """The one other notebook in ``folder`` to grade when ``name.ipynb`` is missing."""
    others = [p for p in folder.glob("*.ipynb") if p.name != f"{name}.ipynb"]
    readable = [p for p in others if _read(p)[0] is not None]
    return readable[0] if len(readable) == 1 else None


def prepare(folder: Path, name: str, release: Path) -> list[str]:
    """Make ``folder/name.ipynb`` gradable in place; return notes for the student."""
    path, notes = folder / f"{name}.ipynb", []
    if not path.exists():
        other = _candidate(folder, name)
        if other is not None:
            other.rename(path)
            notes.append(f"There was no {name}.ipynb; your {other.name} was graded in its place.")
        else:
            shutil.copy(release, path)
            return [f"Your submission has no {name}.ipynb, so the unchanged release notebook "
                    "was graded in its place."]
    nb, version, error = _read(path)
    if nb is None:
        shutil.copy(release, path)
        return notes + [f"{name}.ipynb could not be read ({error}); the unchanged release "
                        "notebook was graded in its place."]
    if version is not None and version < 4:
        notes.append(f"{name}.ipynb was saved in the old nbformat {version}; it was converted to 4.")
    restored = restore_locked_cells(nb, nbformat.read(str(release), as_version=4))
    if restored:
        notes.append("Read-only cells were missing and were put back: " + ", ".join(restored) + ".")
    nbformat.write(nb, str(path))
    return notes
