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
  restores its exact source from the gradebook, hidden tests included;
- tampered nbgrader metadata (points, a grade cell's type, a cell turned markdown, a
  grade cell of the student's own): every cell the release knows, by grade id or cell
  id, gets the release's type and metadata back; any other cell loses its nbgrader
  metadata, so nbgrader grades exactly the release's cells with their real points;
- nbgrader's marker text (``BEGIN HIDDEN TESTS``) typed into a cell of the student's:
  defused, since feedback would otherwise stop at the unmatched marker.
"""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import nbformat
from nbformat import NotebookNode


def _nbgrader(cell: NotebookNode) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def _key(cell: NotebookNode) -> str | None:
    grade_id = _nbgrader(cell).get("grade_id")
    return f"grade:{grade_id}" if grade_id else (f"id:{cell['id']}" if cell.get("id") else None)


MARKER = re.compile(r"(BEGIN|END)( HIDDEN TESTS)")
GRADING_FIELDS = ("grade", "grade_id", "locked", "points", "solution", "task")


def _as_type(cell: NotebookNode, cell_type: str) -> None:
    """Make ``cell`` a cell of ``cell_type`` (code cells have outputs, markdown cells none)."""
    cell.cell_type = cell_type
    if cell_type == "code":
        cell.setdefault("outputs", [])
        cell.setdefault("execution_count", None)
    else:
        cell.pop("outputs", None)
        cell.pop("execution_count", None)


def restore_metadata(nb: NotebookNode, release: NotebookNode) -> list[str]:
    """Give every cell the release knows its release type and nbgrader metadata; strip the
    nbgrader metadata of any other cell. Return the grade ids whose metadata changed."""
    known = {_key(c): c for c in release.cells if _nbgrader(c)}
    known.update({f"id:{c['id']}": c for c in release.cells if _nbgrader(c) and c.get("id")})
    changed = []
    for cell in nb.cells:
        origin = known.get(_key(cell)) or known.get(f"id:{cell.get('id')}")
        if origin is None:
            if _nbgrader(cell):
                changed.append(_nbgrader(cell).get("grade_id") or "?")
                del cell.metadata["nbgrader"]
        elif (any(_nbgrader(cell).get(f) != _nbgrader(origin).get(f) for f in GRADING_FIELDS)
              or cell.cell_type != origin.cell_type):
            changed.append(_nbgrader(origin).get("grade_id") or "?")
            cell.metadata["nbgrader"] = nbformat.from_dict(dict(_nbgrader(origin)))
            _as_type(cell, origin.cell_type)
    return changed


def defuse_markers(nb: NotebookNode) -> bool:
    """Break nbgrader's marker words in the student's own cells; whether any was found."""
    found = False
    for cell in nb.cells:
        if not _locked(cell) and MARKER.search(cell.source):
            cell.source, found = MARKER.sub(r"\1 (marker removed)\2", cell.source), True
    return found


def _locked(cell: NotebookNode) -> bool:
    return bool(_nbgrader(cell).get("locked"))


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
    released = nbformat.read(str(release), as_version=4)
    tampered = restore_metadata(nb, released)
    if tampered:
        notes.append("The grader restored the cell types and nbgrader metadata (points, grade "
                      "ids) that were changed or added: " + ", ".join(tampered) + ".")
    if defuse_markers(nb):
        notes.append("A cell of yours contained nbgrader's marker words (BEGIN/END HIDDEN "
                     "TESTS); they were defused so that grading and feedback work.")
    restored = restore_locked_cells(nb, released)
    if restored:
        notes.append("Read-only cells were missing and were put back: " + ", ".join(restored) + ".")
    nbformat.write(nb, str(path))
    return notes
