"""Grading checks that hidden test cells call; compares student classes with
``minitorch_ref`` and with finite differences. Never shipped to students."""
