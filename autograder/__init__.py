"""Grading checks that hidden test cells call; compares student classes with
``minitorch_ref`` and with finite differences. Never shipped to students."""
import sys

# jsonschema, under nbformat, imports rfc3987_syntax for its "iri" format checker, and that
# module builds dozens of Lark parsers as it is imported: 1 to 2.4 s of CPU in every process
# that reads a notebook (jsonschema issue 1428). No schema that nbformat, nbgrader or the
# course validates uses that format, so every process of ours goes without it (the grader, its
# Dask workers, the nbgrader commands it runs, the audits), whichever module it imports first:
# a None entry makes the import fail, and jsonschema then leaves "iri" unchecked.
sys.modules.setdefault("rfc3987_syntax", None)
