"""Notebook widgets for the course; they train the student's own classes, passed in by name."""
from course.widgets.config import Config
from course.widgets.framework import Framework
from course.widgets.interaction import Interactive, interact, interact_manual
from course.widgets.playground import Playground
from course.widgets.trainer import Trainer, TrainingError

__all__ = ["Playground", "Config", "Framework", "Trainer", "TrainingError",
           "Interactive", "interact", "interact_manual"]
