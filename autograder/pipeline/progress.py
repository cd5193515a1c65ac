"""A one-line progress bar on a terminal; one line per step elsewhere (logs, pytest)."""
from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    """``with Progress(total, "grading") as bar: bar.step("alice 03_module_linear")``."""

    WIDTH = 28

    def __init__(self, total: int, label: str, stream: TextIO | None = None,
                 enabled: bool = True) -> None:
        self.total, self.label, self.done = total, label, 0
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.tty = self.stream.isatty()
        self.started = time.monotonic()

    def __enter__(self) -> "Progress":
        self._draw("")
        return self

    def __exit__(self, *exc) -> None:
        if self.enabled and self.tty:
            self.stream.write("\n")
            self.stream.flush()

    def step(self, text: str = "") -> None:
        self.done += 1
        self._draw(text)

    def _draw(self, text: str) -> None:
        if not self.enabled or (not self.tty and not text):
            return
        filled = int(self.WIDTH * self.done / max(self.total, 1))
        elapsed = time.monotonic() - self.started
        line = (f"{self.label} [{'#' * filled}{'.' * (self.WIDTH - filled)}] "
                f"{self.done}/{self.total} {elapsed:5.0f} s  {text}")
        if self.tty:
            self.stream.write("\r" + line[:120].ljust(120))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
