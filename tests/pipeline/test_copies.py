"""Solution cells that copy the reference are flagged for review and listed in the class report,
and pairs of near-identical solution cells are shown side by side.

The attack: unit 03's ``Linear``, ``xavier_normal_`` and ``kaiming_normal_`` are in release/04's
provided cell (and every later release's); pasted into unit 03's solution cells they score full
marks with no code written, and with one type annotation added per cell the old flag (every
normal-form statement present) missed them. The grade stays (a student may write what the
reference writes); the ledger flags the cells.

Measured (``copies.THRESHOLD`` = 0.7): the pastes from every later release, disguised in every
way of ``disguises``, cover all of the reference cell (1.0); the honest solutions of
``honest`` at most 0.47.
"""
from __future__ import annotations

import ast
import copy
import functools
import html
import json
from pathlib import Path

import nbformat
import pytest

import disguises
import honest
from autograder.notebooks.units import ROOT, Unit, minitorch, nbgrader, read, units
from autograder.pipeline.term import copies, fingerprints
from autograder.pipeline.term import report
from autograder.pipeline.demo.scenario import make_course
from autograder.pipeline.ledger.grade import grade
from autograder.pipeline.job.job import Limits

UNIT = "03_module_linear"
SOURCE, RELEASE = read(Unit(UNIT).source), read(Unit(UNIT).release)
# A Linear written without the reference at hand: its backward is the textbook's (as the
# reference's), its constructor and forward are not.
HONEST_LINEAR = '''
class Linear(Module):
    def __init__(self, in_features, out_features, bias=True, rng=None, dtype=np.float64):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        rng = rng or default_rng()
        limit = np.sqrt(1 / in_features)
        draw = lambda *shape: Parameter(rng.uniform(low=-limit, high=limit, size=shape).astype(dtype))
        self.weight = draw(in_features, out_features)
        self.bias = draw(out_features) if bias else None
        self.input = None

    def forward(self, x):
        self.input = x
        return x @ self.weight.data + (0 if self.bias is None else self.bias.data)

    def backward(self, grad_output):
        self.weight.grad += self.input.T @ grad_output
        if self.bias is not None:
            self.bias.grad += grad_output.sum(axis=0)
        return grad_output @ self.weight.data.T
'''


# The honest Linear, its variables renamed, handed in by a friend (with markup in a comment).
FRIEND = disguises.renamed(HONEST_LINEAR) + "\n# </pre><script>alert('friend')</script>\n"
COPIERS = ("annotator", "hider", "paster")


def provided_by_release_04() -> dict[str, str]:
    """What a student copies out of release/04's provided cell, as it is there: unit 03's
    ``Linear`` for the ``linear`` cell, the two initialisers for the ``init`` cell."""
    cell = next(c.source for c in read(Unit("04_activations").release).cells
                if minitorch(c).get("provided_from"))
    tree = ast.parse(cell)
    code = {node.name: ast.get_source_segment(cell, node) for node in tree.body
            if isinstance(node, (ast.ClassDef, ast.FunctionDef))}
    return {"linear": code["Linear"], "init": code["xavier_normal_"] + "\n\n\n" + code["kaiming_normal_"]}


def without_comments_and_docstrings(code: str) -> str:
    """The same code as a student hiding the paste would leave it."""
    tree = ast.parse(code)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and fingerprints.is_bare_string(body[0]):
            node.body = body[1:] or [ast.Pass()]
    return ast.unparse(tree).replace("    ", "  ")


def handed_in(cells: dict[str, str], release: nbformat.NotebookNode = RELEASE) -> nbformat.NotebookNode:
    """The release notebook with the solution cells ``cells`` (grade id: code) filled in."""
    nb = copy.deepcopy(release)
    for cell in nb.cells:
        if nbgrader(cell).get("solution") and nbgrader(cell).get("grade_id") in cells:
            cell.source = cells[nbgrader(cell)["grade_id"]]
    return nb


def flagged(nb: nbformat.NotebookNode) -> list[str]:
    return copies.copied(nb, RELEASE, SOURCE)


# ------------------------------------------------------------------------ the comparison
def test_a_paste_from_release_04_is_flagged_cell_by_cell():
    assert flagged(handed_in(provided_by_release_04())) == ["linear", "init"]
    assert flagged(handed_in({"linear": provided_by_release_04()["linear"]})) == ["linear"]


def test_comments_docstrings_layout_and_a_cell_magic_do_not_hide_it():
    hidden = {cell: "%%time\n" + without_comments_and_docstrings(code)
              for cell, code in provided_by_release_04().items()}
    assert flagged(handed_in(hidden)) == ["linear", "init"]


def test_a_paste_into_a_cell_of_ones_own_is_flagged_too():
    nb = copy.deepcopy(RELEASE)
    nb.cells.append(nbformat.v4.new_code_cell(provided_by_release_04()["linear"]))
    assert flagged(nb) == ["linear"]


def test_the_untouched_release_and_an_honest_solution_are_not_flagged():
    assert flagged(RELEASE) == []
    assert flagged(handed_in({"linear": HONEST_LINEAR})) == []


def test_the_annotated_paste_from_a_later_release_is_flagged():
    """The issue's attack: unit 03's reference from release/13's provided cell, one type
    annotation added per cell."""
    pasted = {cell: disguises.annotated(code) for cell, code in carried(UNIT, "13_conv").items()}
    assert flagged(handed_in(pasted)) == ["linear", "init"]


@pytest.mark.parametrize("disguise", sorted(disguises.DISGUISES))
def test_renamed_reordered_and_padded_pastes_are_flagged(disguise):
    hide = disguises.DISGUISES[disguise]
    assert flagged(handed_in({cell: hide(code) for cell, code in provided_by_release_04().items()})) \
        == ["linear", "init"]


def _shapes(code: str) -> dict[tuple, str]:
    """The top-level functions and classes of ``code`` by name (a class: and its methods)."""
    return {(n.name, tuple(m.name for m in n.body if isinstance(m, ast.FunctionDef))
             if isinstance(n, ast.ClassDef) else ()): ast.get_source_segment(code, n)
            for n in ast.parse(code).body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}


@functools.cache
def _provided(later: str) -> dict[tuple, str]:
    return {shape: code for cell in read(Unit(later).release).cells
            if minitorch(cell).get("provided_from") for shape, code in _shapes(cell.source).items()}


@functools.cache
def _solutions(unit: str) -> dict[str, dict[tuple, str]]:
    """The shapes of each solution cell of some size of ``unit``'s source."""
    sizes = {cell: found.nodes for cell, found in copies.reference(read(Unit(unit).source)).items()}
    return {nbgrader(cell)["grade_id"]: _shapes(cell.source) for cell in read(Unit(unit).source).cells
            if nbgrader(cell).get("solution") and sizes[nbgrader(cell)["grade_id"]] >= copies.MIN_NODES}


def carried(unit: str, later: str) -> dict[str, str]:
    """The solution cells of ``unit`` of some size that release ``later``'s provided cells
    carry (grade id: their code there): the same top-level functions and classes, a class
    with the same methods (unit 06's cells each extend ``Module`` with a few)."""
    provided = _provided(later)
    return {cell: "\n\n\n".join(provided[shape] for shape in wanted)
            for cell, wanted in _solutions(unit).items()
            if wanted and all(shape in provided for shape in wanted)}


def pastes() -> list[tuple[str, str, str, str]]:
    """(unit, later release, cell, code) for every cell of some size a later release carries."""
    names = [unit.name for unit in units()]
    return [(unit, later, cell, code) for i, unit in enumerate(names) for later in names[i + 1:]
            for cell, code in carried(unit, later).items()]


def test_every_paste_from_every_later_release_is_flagged_however_disguised():
    """Every later release's provided cells, every carried cell, all the disguises at once.
    Only the pasted cell's code is read: the rest of the notebook is the release's, whose
    k-grams the comparison leaves out."""
    found = pastes()
    assert len({(unit, cell) for unit, _, cell, _ in found}) >= 25 and len(found) >= 150
    solutions = {unit: copies.reference(read(Unit(unit).source), copies.given(read(Unit(unit).release)))
                 for unit in {unit for unit, *_ in found}}
    shares = {(unit, later, cell): copies.similarities(
                  copies.cell_print(disguises.everything(code)).hashes, solutions[unit])[cell]
              for unit, later, cell, code in found}
    assert min(shares.values()) == 1.0


def test_honest_solutions_are_not_flagged_and_stay_clear_of_the_threshold():
    """Written from the notebooks' text alone (``honest``): at most 0.47 of a reference cell
    (unit 03's Linear, whose backward is the textbook's as the reference's), 0.23 below the
    threshold."""
    shares = {}
    for unit in sorted({unit for unit, _ in honest.STUBS}):
        solutions = copies.reference(read(Unit(unit).source), copies.given(read(Unit(unit).release)))
        for i, nb in enumerate(honest.notebooks(unit)):
            assert copies.copied(nb, read(Unit(unit).release), read(Unit(unit).source)) == []
            shares.update({(unit, cell, i): share for cell, share in
                           copies.similarities(copies.written(nb), solutions).items()
                           if i < len(honest.STUBS.get((unit, cell), []))})
    assert len(shares) == sum(map(len, honest.STUBS.values())) - 1   # MSELoss: under MIN_NODES
    assert max(shares.values()) <= copies.THRESHOLD - 0.15


def test_short_canonical_cells_are_never_flagged():
    """Unit 06's Sequential is three two-line loops an honest student writes as the reference
    does: under ``MIN_NODES``, even a verbatim copy is not flagged."""
    source, release = read(Unit("06_sequential").source), read(Unit("06_sequential").release)
    sizes = {cell: found.nodes for cell, found in copies.reference(source).items()}
    assert sizes["sequential"] < copies.MIN_NODES <= sizes["registration"]
    assert "sequential" not in copies.copied(source, release, source)


def test_a_notebook_of_code_that_is_not_python_flags_nothing_and_does_not_fail():
    nb = handed_in({"linear": "class Linear(:\n" + "(" * 500, "init": "x" * (copies.MAX_CELL + 1)})
    assert flagged(nb) == []


# ------------------------------------------------------------------------ through the grader
@pytest.fixture(scope="module")
def pasted(tmp_path_factory, isolated_jupyter) -> tuple[Path, object]:
    """A scratch course with units 02-03; unit 03 handed in by a student who pasted release/04's
    provided code, one who pasted it without comments or docstrings, one who pasted it with a
    type annotation per cell, an honest one, a friend who handed in the honest one's Linear
    renamed (with markup in a comment) and one who handed in the release."""
    root = tmp_path_factory.mktemp("copies") / "course"
    assert make_course(root, ["02_gradients", UNIT]) == ["02_gradients", UNIT]
    release = read(Unit(UNIT, root).release)
    paste = provided_by_release_04()
    notebooks = {
        "paster": handed_in(paste, release),
        "hider": handed_in({cell: without_comments_and_docstrings(code) for cell, code in paste.items()},
                           release),
        "annotator": handed_in({cell: disguises.annotated(code) for cell, code in paste.items()},
                               release),
        "honest": handed_in({"linear": HONEST_LINEAR}, release),
        "friend": handed_in({"linear": FRIEND}, release),
        "untouched": release,
    }
    for student, nb in notebooks.items():
        folder = root / "submitted" / student / UNIT
        folder.mkdir(parents=True)
        nbformat.write(nb, str(folder / f"{UNIT}.ipynb"))
    summary = grade(root, [UNIT], workers=2, limits=Limits(cell_timeout=30), progress=False)
    return root, summary


@pytest.mark.pipeline
def test_the_grader_flags_the_pasted_cells_and_keeps_their_score(pasted):
    root, summary = pasted
    assert sorted(summary.copies) == sorted(f"{student}/{UNIT} ({cell})" for student in
                                            COPIERS for cell in ("linear", "init"))
    assert "6 solution cell(s) copy the reference, for review" in str(summary)
    scores = {r.outcome.student: sum(s or 0 for s in r.outcome.scores[UNIT].values())
              for r in summary.results}
    # a flag, not a score: every point but the two questions', which the paste leaves unanswered
    assert scores["paster"] == scores["hider"] == scores["annotator"] == 18.0
    record = json.loads((root / "autograded" / "paster" / UNIT / ".grading.json").read_text())
    assert record["copies"] == [{"notebook": f"{UNIT}.ipynb", "cell": "linear"},
                                {"notebook": f"{UNIT}.ipynb", "cell": "init"}]
    assert "copies" not in json.loads((root / "autograded" / "honest" / UNIT / ".grading.json")
                                      .read_text())


@pytest.mark.pipeline
def test_the_class_report_lists_the_copied_cells(pasted, tmp_path):
    root, _ = pasted
    assert sorted(report.collect(root).copies) == [
        (student, UNIT, cell) for student in sorted(COPIERS) for cell in ("init", "linear")]
    page = report.write_report(root, tmp_path / "report.html").read_text()
    section = page[page.index("Solution cells that copy the reference"):]
    assert "<td>paster</td><td>03_module_linear</td><td>linear</td>" in section
    copies_only = section[:section.index("Students whose solution cells are near-identical")]
    assert "honest" not in copies_only and "untouched" not in copies_only


@pytest.mark.pipeline
def test_the_class_report_shows_near_identical_cells_side_by_side_escaped(pasted, tmp_path):
    """The friend's renamed copy of the honest Linear is the one pair: the copiers' cells
    are all the reference's (listed as copies), the release's stubs are everyone's."""
    root, _ = pasted
    data = report.collect(root)
    assert [(p.cell, p.students) for p in data.similar] == [("linear", ("friend", "honest"))]
    assert data.similar[0].share >= copies.THRESHOLD
    page = report.write_report(root, tmp_path / "report.html").read_text()
    section = page[page.index("Students whose solution cells are near-identical"):]
    assert "1 pair(s)" in section and "<th>friend</th><th>honest</th>" in section
    assert html.escape("lambda *my_shape: Parameter(") in section      # the friend's cell
    assert "draw = lambda *shape: Parameter(" in section               # beside the honest one's
    assert "<script>" not in page and "&lt;/pre&gt;&lt;script&gt;" in section
