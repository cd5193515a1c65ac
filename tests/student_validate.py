"""Validate release notebooks once each in the student environment, as JupyterLab's Validate
button does, and report what each reader of that one run needs (a line of JSON per notebook).

``python student_validate.py NOTEBOOK...`` with the student environment's Python. The button's
handler loads the Jupyter configuration (the student wheel's ``nbgrader_config.py``:
``validate_all``) and runs nbgrader's ``Validator``, which runs every cell even after one
fails. From that run come: the button's verdict, the inverted verdict (which cells would
pass as they are: only the empty hidden-test cells may), the first error a cell raised (a
stub's ``NotImplementedError``, every cell before it having run), and what a first cell
found of the kernel's interpreter and of the instructor's packages. Only the student
environment's packages are importable here: no ``autograder``, no pytest.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import nbformat
from nbconvert.preprocessors import Preprocessor
from nbgrader.preprocessors import CheckCellMetadata
from nbgrader.server_extensions.validate_assignment.handlers import ValidateAssignmentHandler
from nbgrader.validator import Validator

PROBE = ("import importlib.util, json, sys\n"
         "print(json.dumps({'prefix': sys.prefix, 'instructor': [name for name in "
         "('minitorch_ref', 'autograder') if importlib.util.find_spec(name)]}))")


class Keep(Preprocessor):
    """The last of the Validator's preprocessors: writes the notebook as it ran to ``path``."""

    path = ""

    def preprocess(self, nb, resources):
        nbformat.write(nb, self.path)
        return nb, resources


def first_error(nb) -> str | None:
    return next((out.ename for cell in nb.cells for out in cell.get("outputs", ())
                 if out.output_type == "error"), None)


def main(notebook: Path) -> dict:
    config = ValidateAssignmentHandler.load_config(None)
    probed, ran = (notebook.with_name(f".{kind}-{notebook.name}") for kind in ("probed", "ran"))
    nb = nbformat.read(str(notebook), as_version=4)
    nb.cells.insert(0, nbformat.v4.new_code_cell(PROBE))
    nbformat.write(nb, str(probed))
    Keep.path = str(ran)
    button = Validator(config=config)
    button.preprocessors = [*button.preprocessors, Keep]
    verdict = button.validate(str(probed))
    executed = nbformat.read(str(ran), as_version=4)
    return {"unit": notebook.parent.name, "validate_all": config.Validator.validate_all,
            "button": verdict,
            "inverted": Validator(invert=True, preprocessors=[CheckCellMetadata]).validate(str(ran)),
            "first_error": first_error(executed),
            "probe": json.loads(executed.cells[0].outputs[0].text)}


if __name__ == "__main__":
    for path in sys.argv[1:]:
        print(json.dumps(main(Path(path).resolve())), flush=True)
