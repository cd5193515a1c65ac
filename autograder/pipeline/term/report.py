"""The class report: what the class got right, and what to teach again.

``python -m autograder report`` writes one self-contained HTML file (plots
embedded as PNG) from the gradebook and the graded notebooks:

- the score distribution of each unit;
- the pass rate of every graded cell, named by the check it runs;
- the most frequent diagnosed mistakes: the ``Likely mistake:`` lines of failing
  cells' messages, grouped (numbers ignored), with how many students made each;
- the cells left without a score, waiting for an instructor (``flags``: the grader failed on
  them), kept out of the distributions and pass rates;
- the submissions the grader had to repair or stop (its notes);
- the solution cells that copy the reference (``copies``, flagged by the grader);
- the pairs of students whose solution cells are near-identical, side by side (``similar``).
"""
from __future__ import annotations

import base64
import html
import io
import re
import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook

from autograder.notebooks.units import is_solution
from autograder.pipeline import flags
from autograder.pipeline.course import Course
from autograder.pipeline.term import copies
from autograder.pipeline.term import similar

LIKELY = re.compile(r"Likely mistake:\s*(.+?)(?=\n\s*\n|\n\S|\Z)", re.DOTALL)
CHECK = re.compile(r"^\s*check\.(\w+)\(", re.MULTILINE)
NUMBER = re.compile(r"-?\d+(\.\d+)?(e-?\d+)?")


@dataclass
class ClassData:
    units: list[str]
    scores: dict[str, list[float]] = field(default_factory=dict)      # unit: percentages
    cells: dict[tuple[str, str], list[bool]] = field(default_factory=dict)   # (unit, label): passed
    mistakes: Counter = field(default_factory=Counter)                # (label, text): students
    examples: dict[tuple[str, str], str] = field(default_factory=dict)
    notes: list[tuple[str, str, str]] = field(default_factory=list)   # student, unit, note
    unsandboxed: list[tuple[str, str]] = field(default_factory=list)  # graded with --no-sandbox
    copies: list[tuple[str, str, str]] = field(default_factory=list)  # student, unit, cell
    versions: dict[tuple[str, str, str], dict[str, str]] = field(default_factory=dict)  # (unit,
    #                                        notebook, cell): student: their solution cell's code
    similar: list[similar.Pair] = field(default_factory=list)
    awaiting: dict[str, int] = field(default_factory=dict)           # unit: submissions left out
    unscored: list[tuple[str, str, str, str, str]] = field(default_factory=list)  # student, unit,
    #                                                   cell, flag, reason: cells without a score


def _label(gb: Gradebook, grade_id: str, notebook: str, unit: str) -> str:
    source = gb.find_source_cell(grade_id, notebook, unit).source
    found = CHECK.search(source) if "BEGIN HIDDEN TESTS" in source else None
    return f"check.{found.group(1)}" if found else f"visible test {grade_id}"


def mistakes_in(nb: nbformat.NotebookNode) -> list[tuple[str, str]]:
    """``(grade id, likely mistake)`` for every failing grade cell of a graded notebook."""
    found = []
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if not (cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("grade")):
            continue
        for output in cell.outputs:
            if output.output_type == "error":
                for match in LIKELY.finditer(output.evalue):
                    found.append((grade_id, " ".join(match.group(1).split())))
    return found


def collect(root: Path) -> ClassData:
    course = Course(Path(root).resolve())
    with Gradebook(course.db_url) as gb:
        known = {a.name for a in gb.assignments}
        data = ClassData([u for u in course.units() if u in known])
        for unit in data.units:
            assignment = gb.find_assignment(unit)
            labels = {(cell.name, nb.name): _label(gb, cell.name, nb.name, unit)
                      for nb in assignment.notebooks for cell in nb.grade_cells}
            labels.update({(cell.name, nb.name): f"task {cell.name} (graded by hand)"
                           for nb in assignment.notebooks for cell in nb.task_cells})
            data.scores[unit], data.awaiting[unit] = [], 0
            for submission in assignment.submissions:
                _submission(data, course, unit, submission, labels)
    data.similar = _similar(data, course)
    return data


def _submission(data: ClassData, course: Course, unit: str, submission, labels: dict) -> None:
    """One submission's score, cells, mistakes, notes; a submission with cells still waiting
    for an instructor (``flags``) is left out of the distribution and those cells out of the
    pass rates: they are neither earned nor failed yet."""
    student, record = submission.student.id, course.record(submission.student.id, unit)
    unscored = flags.from_record(record)
    waiting = False
    for nb in submission.notebooks:
        for grade in nb.grades:
            why = unscored.get(nb.name, {}).get(grade.name)
            label = labels[(grade.name, nb.name)]
            if why is not None and grade.manual_score is None:
                data.unscored.append((student, unit, label, why.flag.label, why.reason))
                waiting = True
            else:
                data.cells.setdefault((unit, label), []).append(
                    (grade.score or 0) >= grade.max_score)
        _read_notebook(data, course, student, unit, nb.name, labels)
    if waiting:
        data.awaiting[unit] += 1
    elif submission.max_score:
        data.scores[unit].append(100 * submission.score / submission.max_score)
    data.notes += [(student, unit, note) for note in record.get("notes", [])]
    if record.get("sandbox") is False:
        data.unsandboxed.append((student, unit))
    data.copies += _copies(record, student, unit)


def _read_notebook(data: ClassData, course: Course, student: str, unit: str, name: str,
                   labels: dict) -> None:
    path = course.autograded(student, unit) / f"{name}.ipynb"
    if not path.exists():
        return
    seen, nb = set(), nbformat.read(str(path), as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code" and is_solution(cell):
            grade_id = cell.metadata.nbgrader.get("grade_id", "?")
            data.versions.setdefault((unit, name, grade_id), {})[student] = cell.source
    for grade_id, text in mistakes_in(nb):
        key = (f"{unit} {labels.get((grade_id, name), grade_id)}", NUMBER.sub("#", text))
        if key not in seen:   # count students, not messages
            seen.add(key)
            data.mistakes[key] += 1
            data.examples.setdefault(key, text)


def _copies(record: dict, student: str, unit: str) -> list[tuple[str, str, str]]:
    """The reference solution cells the grader found copied in one submission (its record)."""
    return [(student, unit, str(found.get("cell"))) for found in record.get("copies", [])
            if isinstance(found, dict)]


def _similar(data: ClassData, course: Course) -> list[similar.Pair]:
    """The near-identical pairs of every solution cell the class handed in (the copies of the
    reference left to the copies section)."""
    found, known = [], {}
    for (unit, name, grade_id), versions in sorted(data.versions.items()):
        release = course.release(unit) / f"{name}.ipynb"
        if not release.exists():
            continue
        if (unit, name) not in known:
            known[unit, name] = copies.given(nbformat.read(str(release), as_version=4))
        copied = {s for s, u, c in data.copies if u == unit and c == grade_id}
        found += similar.pairs(unit, grade_id, versions, known[unit, name], copied)
    return sorted(found, key=lambda pair: -pair.share)


def similar_section(data: ClassData) -> str:
    """The report's pairs of near-identical solution cells, each pair's two cells side by side
    (what the students wrote, escaped): leads to review, scores unchanged."""
    pairs = "".join(
        f"<h3>{html.escape(p.unit)}, cell {html.escape(p.cell)}: {html.escape(p.students[0])} and "
        f"{html.escape(p.students[1])} ({p.share:.0%})</h3>\n<table class=\"pair\"><tr>"
        + "".join(f"<th>{html.escape(s)}</th>" for s in p.students) + "</tr><tr>"
        + "".join(f"<td><pre>{html.escape(code)}</pre></td>" for code in p.code) + "</tr></table>"
        for p in data.similar[:similar.SIDE_BY_SIDE])
    more = "".join(f"<tr><td>{html.escape(p.unit)}</td><td>{html.escape(p.cell)}</td><td>"
                   f"{html.escape(p.students[0])}</td><td>{html.escape(p.students[1])}</td>"
                   f"<td>{p.share:.0%}</td></tr>" for p in data.similar[similar.SIDE_BY_SIDE:])
    if more:
        pairs += ("<h3>The other pairs</h3>\n<table><tr><th>unit</th><th>cell</th><th>student</th>"
                  "<th>student</th><th>similarity</th></tr>" + more + "</table>")
    return ("<h2>Students whose solution cells are near-identical</h2>\n<p>"
            f"{len(data.similar)} pair(s). Each cell's code is covered {copies.THRESHOLD:.0%} or "
            "more by the other's (copydetect's fingerprints, names, layout, comments and "
            "annotations aside, the release's own code left out); pairs that both copy the "
            "reference are listed above instead. Scores are unchanged. Review them.</p>\n" + pairs)


def copies_section(data: ClassData) -> str:
    """The report's list of solution cells that copy the reference: leads to review, since a
    copy scores what the reference scores (``autograder.pipeline.term.copies``)."""
    rows = "".join(f"<tr><td>{html.escape(s)}</td><td>{html.escape(u)}</td><td>{html.escape(c)}</td></tr>"
                   for s, u, c in data.copies)
    return ("<h2>Solution cells that copy the reference</h2>\n<p>What the student wrote covers "
            f"{copies.THRESHOLD:.0%} or more of the cell's solution regions as the reference (and "
            "every later unit's provided cells) has them, names, layout, comments and "
            "annotations aside; scores are unchanged. Review them.</p>"
            "\n<table><tr><th>student</th><th>unit</th><th>cell</th></tr>" + rows + "</table>")


def _png(fig) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90, bbox_inches="tight")
    return f'<img alt="" src="data:image/png;base64,{base64.b64encode(buffer.getvalue()).decode()}">'


def _plots(data: ClassData) -> tuple[str, str]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    columns = min(3, max(1, len(data.units)))
    rows = -(-len(data.units) // columns) or 1
    fig, axes = plt.subplots(rows, columns, figsize=(3.2 * columns, 2.4 * rows), squeeze=False)
    for ax, unit in zip(axes.flat, data.units):
        ax.hist(data.scores[unit], bins=range(0, 101, 10), color="#0072B2", edgecolor="white")
        ax.set_title(f"{unit} (n={len(data.scores[unit])})", fontsize=9)
        ax.set_xlabel("score (%)")
    for ax in list(axes.flat)[len(data.units):]:
        ax.axis("off")
    fig.tight_layout()
    distribution = _png(fig)
    plt.close(fig)
    keys = list(data.cells)
    rates = [100 * sum(data.cells[k]) / len(data.cells[k]) for k in keys]
    fig, ax = plt.subplots(figsize=(8, 0.28 * len(keys) + 1))
    ax.barh(range(len(keys)), rates, color=["#D55E00" if r < 50 else "#009E73" for r in rates])
    ax.set_yticks(range(len(keys)), [f"{u}  {label}" for u, label in keys], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel("students with full marks on the cell (%)")
    fig.tight_layout()
    passes = _png(fig)
    plt.close(fig)
    return distribution, passes


def render(data: ClassData) -> str:
    distribution, passes = _plots(data) if data.units else ("", "")
    rows = "".join(f"<tr><td>{count}</td><td>{html.escape(where)}</td>"
                   f"<td>{html.escape(data.examples[(where, text)])}</td></tr>"
                   for (where, text), count in data.mistakes.most_common(20))
    summary = "".join(
        f"<tr><td>{html.escape(u)}</td><td>{len(v)}</td><td>{statistics.median(v):.0f}%</td>"
        f"<td>{sum(x >= 100 for x in v)}</td><td>{data.awaiting.get(u, 0)}</td></tr>"
        for u, v in data.scores.items() if v)
    unscored = "".join("<tr>" + "".join(f"<td>{html.escape(v)}</td>" for v in row) + "</tr>"
                       for row in data.unscored)
    notes = "".join(f"<tr><td>{html.escape(s)}</td><td>{html.escape(u)}</td><td>{html.escape(n)}</td></tr>"
                    for s, u, n in data.notes)
    warning = (f'<p class="warning"><strong>{len(data.unsandboxed)} submission(s) were graded '
               "with --no-sandbox</strong>: their code ran with the grader's rights, so their "
               "scores are not proof against tampering.</p>") if data.unsandboxed else ""
    return f"""<!DOCTYPE html><html><head><meta charset="utf-8"><title>Class report</title>
<style>body{{font-family:sans-serif;max-width:60em;margin:2em auto}}td,th{{padding:.3em .6em;
border-bottom:1px solid #ddd;text-align:left;vertical-align:top}}table{{border-collapse:collapse}}
img{{max-width:100%}}.pair td{{width:50%}}.pair pre{{white-space:pre-wrap;font-size:80%}}.warning{{background:#fde;padding:.5em;border:1px solid #D55E00}}</style>
</head><body><h1>Class report</h1>{warning}
<h2>Score distribution per unit</h2>
<table><tr><th>unit</th><th>submissions</th><th>median</th><th>full marks</th>
<th>awaiting review (not counted)</th></tr>{summary}</table>
{distribution}
<h2>Pass rate per graded cell</h2>{passes}
<h2>Most frequent diagnosed mistakes</h2>
<p>From the "Likely mistake" lines of failing checks; each student is counted once per mistake.</p>
<table><tr><th>students</th><th>unit and check</th><th>likely mistake</th></tr>{rows}</table>
<h2>Cells without a score, waiting for an instructor</h2>
<p>{len(data.unscored)} cell(s). The grader failed on them, not the student's code: they count
neither as earned nor as failed until a manual score is given (Formgrader's manual grading, or
<code>python -m autograder manual-grades</code>).</p>
<table><tr><th>student</th><th>unit</th><th>cell</th><th>flag</th><th>reason</th></tr>{unscored}</table>
<h2>Submissions the grader repaired or stopped</h2>
<table><tr><th>student</th><th>unit</th><th>note</th></tr>{notes}</table>
{copies_section(data)}
{similar_section(data)}
</body></html>"""


def write_report(root: Path, out: Path | None = None) -> Path:
    course = Course(Path(root).resolve())
    target = out or course.root / "reports" / "class-report.html"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(render(collect(course.root)), encoding="utf-8")
    return target
