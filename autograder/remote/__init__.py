"""Grading outside the student's process: hidden checks run in the grader, on stand-ins.

``agent`` (sent into the kernel) and ``channel`` carry requests and data-only replies;
``proxy`` gives checks ``Remote`` stand-ins for the student's classes; ``hidden`` grades a
hidden test cell with them. See docs/how-it-works.md and the threat model, docs/security.md.
"""
