"""Reaching the student's objects from outside their process: the lowest part of the grader.

``agent`` (sent into the kernel) and ``channel`` carry requests and data-only replies;
``proxy`` gives checks ``Remote`` stand-ins for the student's classes; ``errors`` names what
a check meets that is not its verdict; ``doubles`` are the grader's own objects, built in the
kernel. It imports nothing else of ``autograder``: the check machinery, the checks and
``autograder.cells`` (which grades a test cell with these) build on it. See
docs/how-it-works.md and the threat model, docs/security.md.
"""
