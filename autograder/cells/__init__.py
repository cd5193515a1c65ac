"""A notebook's test cells, graded by the grader's process instead of the student's kernel.

``hidden`` grades a hidden test cell (its one ``check.NAME(...)`` line run here, on
``Remote`` stand-ins); ``visible`` scores the visible cells that carry points from the
grader's own run of the notebook. It imports the checks and what they stand on (the registry,
``autograder.remote``); the pipeline's job calls it for every test cell it executes.
"""
