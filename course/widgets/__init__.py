"""Notebook widgets for the course; they train (or sample from) the student's own classes and
functions, passed in by name."""
from course.widgets.config import Config
from course.widgets.framework import Framework
from course.widgets.interaction import Interactive, interact, interact_manual
from course.widgets.playground import Playground
from course.widgets.sampler import sampler
from course.widgets.trainer import Trainer, TrainingError

__all__ = ["Playground", "Config", "Framework", "Trainer", "TrainingError",
           "Interactive", "interact", "interact_manual", "sampler"]
