"""Playground: a TensorFlow-Playground-like notebook app that trains the student's own classes."""
from __future__ import annotations

import asyncio
import base64
import html
import sysconfig
import time
import traceback
from pathlib import Path
from typing import Any, Callable

import ipywidgets as widgets

from course.widgets import views
from course.widgets.config import Config
from course.widgets.controls import make_controls, read_config
from course.widgets.framework import Framework
from course.widgets.trainer import Trainer, TrainingError

RENDER_INTERVAL = 0.4
"""Least seconds between pictures while playing: drawing costs more than an epoch on toy data."""

DESCRIPTIONS = {"boundary": "the decision regions, with the train and test points",
                "curves": "the train and test loss and accuracy per epoch",
                "layers": "per layer, the gradient norm and the share of dead ReLUs"}
"""What each picture of the static copy shows, its ``alt`` text (feedback pages, screen readers)."""


_LIBRARIES = (str(Path(__file__).parents[1]), sysconfig.get_paths()["purelib"])
"""Frames from here (course/) and from installed packages are not where a student looks."""


def describe_error(exc: BaseException) -> str:
    """``'TypeError: message (in file.py, line 12, in forward)'``, naming the innermost frame
    outside course/ and installed packages: the student's code, usually. A
    ``TrainingError`` already says all there is to say."""
    if isinstance(exc, TrainingError):
        return f"{type(exc).__name__}: {exc}"
    frames = traceback.extract_tb(exc.__traceback__)
    theirs = [frame for frame in frames if not frame.filename.startswith(_LIBRARIES)] or frames
    where = f" (in {theirs[-1].filename}, line {theirs[-1].lineno}, in {theirs[-1].name})" if theirs else ""
    return f"{type(exc).__name__}: {exc}{where}"


class Playground:
    """Train a small network on 2-D data and watch it learn, with the student's classes.

    ``Playground(Linear=Linear, ReLU=ReLU, Sequential=Sequential,
    CrossEntropyLoss=CrossEntropyLoss, SGD=SGD, Adam=Adam)`` takes the classes by
    name (see ``Framework`` for all of them, or pass ``model_factory``). Every
    control starts a fresh run; Step trains one epoch, Play trains epoch after
    epoch in the background (the notebook stays usable) until Pause or
    ``max_epochs``. An exception from the student's code, a NaN loss or a wrongly
    shaped output stops training and shows its message instead of the statistics.

    On construction it trains ``initial_epochs``, so a notebook executed without a
    browser (nbconvert, nbval) still shows a trained picture.
    """

    def __init__(self, config: Config | None = None, *, initial_epochs: int = 20,
                 max_epochs: int = 300, **classes: Any) -> None:
        self.framework = Framework(**classes)
        self.max_epochs, self.trainer, self.error = max_epochs, None, None
        self._playing, self._task = False, None
        self.controls = make_controls(config or Config(), self.framework)
        button = {"layout": widgets.Layout(width="86px")}
        self.buttons = {
            "play": widgets.Button(description="Play", icon="play", button_style="success", **button),
            "step": widgets.Button(description="Step", icon="step-forward", **button),
            "reset": widgets.Button(description="Reset", icon="undo", **button),
        }
        self.status = widgets.HTML()
        self.progress = widgets.IntProgress(min=0, max=max_epochs, description="epochs",
                                            layout=widgets.Layout(width="270px"))
        self.images = {name: widgets.Image(format="png", layout=widgets.Layout(flex="none"))
                       for name in ("boundary", "curves", "layers")}  # shown at their own size
        self.widget = self._layout()
        self._connect()
        if self._guard(self._new_trainer):
            self._guard(lambda: self._train(initial_epochs))
        self._render()

    # ------------------------------------------------------------------ actions
    def step(self) -> None:
        """Train one epoch and redraw."""
        self.error = None
        self._guard(lambda: self._require_trainer().step())
        self._render()

    def reset(self) -> None:
        """Stop, and start a fresh run from the controls' settings (epoch 0)."""
        self.pause()
        self.error = None
        self._guard(self._new_trainer)
        self._render()

    def play(self) -> None:
        """Train epoch after epoch as a task on the kernel's event loop, until ``pause()``."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._fail("Play needs a running event loop (a Jupyter kernel); call step() instead")
            return
        self.error, self._playing = None, True
        self._sync_play_button()
        if self._task is None or self._task.done():
            self._task = loop.create_task(self._play_loop())

    def pause(self) -> None:
        """Stop playing after the current epoch."""
        self._playing = False
        self._sync_play_button()

    @property
    def playing(self) -> bool:
        return self._playing

    @property
    def config(self) -> Config:
        """The settings the controls show."""
        return read_config(self.controls)

    # ------------------------------------------------------------------ internals
    async def _play_loop(self) -> None:
        next_render = time.monotonic() + RENDER_INTERVAL
        try:
            while self._playing and self._guard(self._play_epoch):
                self._show_progress()
                if time.monotonic() >= next_render:
                    started = time.monotonic()
                    self._render()
                    # Drawing at most a third of the time keeps training and clicks going.
                    cost = time.monotonic() - started
                    next_render = time.monotonic() + max(RENDER_INTERVAL, 2 * cost)
                await asyncio.sleep(0.001)  # let the kernel handle clicks between epochs
        finally:
            self.pause()
            self._render()

    def _play_epoch(self) -> None:
        """One epoch of Play, or a pause once ``max_epochs`` are done."""
        trainer = self._require_trainer()
        if trainer.epoch >= self.max_epochs:
            self.pause()
        else:
            trainer.step()

    def _train(self, epochs: int) -> None:
        for _ in range(epochs):
            self.trainer.step()

    def _new_trainer(self) -> None:
        self.trainer = None  # a failed rebuild must not leave the old run on show
        self.trainer = Trainer(self.framework, self.config)

    def _require_trainer(self) -> Trainer:
        if self.trainer is None:
            self._new_trainer()
        return self.trainer

    def _guard(self, action: Callable[[], Any]) -> bool:
        """Run ``action``; on any exception stop playing and keep its message for the status line."""
        try:
            action()
        except Exception as exc:  # noqa: BLE001 - student code may raise anything
            self._fail(describe_error(exc))
            return False
        return True

    def _fail(self, message: str) -> None:
        self.pause()
        self.error = message
        self._show_progress()

    def _render(self) -> None:
        if self.trainer is not None:
            self._guard(self._draw)
        self._show_progress()

    def _draw(self) -> None:
        trainer = self.trainer
        self.images["boundary"].value = views.boundary_png(trainer)
        self.images["curves"].value = views.curves_png(trainer)
        self.images["layers"].value = views.layers_png(trainer.layers)

    def _show_progress(self) -> None:
        """The status line and the progress bar: cheap, so updated after every epoch."""
        self.progress.value = min(self.trainer.epoch, self.max_epochs) if self.trainer else 0
        if self.error:
            self.status.value = (f"<div style='color:#B00020;white-space:pre-wrap'><b>Error</b>: "
                                 f"{html.escape(self.error)}</div>")
        elif self.trainer is not None and self.trainer.epoch:
            h = self.trainer.history
            self.status.value = (f"epoch {self.trainer.epoch} &middot; loss train {h['train_loss'][-1]:.3f}, "
                                 f"test {h['test_loss'][-1]:.3f} &middot; accuracy train "
                                 f"{h['train_acc'][-1]:.1%}, test {h['test_acc'][-1]:.1%}")
        else:
            self.status.value = "epoch 0: press Step or Play"

    def _sync_play_button(self) -> None:
        button = self.buttons["play"]
        button.description, button.icon = ("Pause", "pause") if self._playing else ("Play", "play")

    def _toggle_play(self, _: widgets.Button) -> None:
        self.pause() if self._playing else self.play()

    def _connect(self) -> None:
        for control in self.controls.values():
            control.observe(lambda _: self.reset(), names="value")
        self.buttons["play"].on_click(self._toggle_play)
        self.buttons["step"].on_click(lambda _: self.step())
        self.buttons["reset"].on_click(lambda _: self.reset())

    def _layout(self) -> widgets.Box:
        controls = widgets.VBox([widgets.HBox(list(self.buttons.values())), self.progress,
                                 *self.controls.values()],
                                layout=widgets.Layout(flex="none", width="285px", margin="0 12px 0 0"))
        top = widgets.Layout(align_items="flex-start")  # no stretching the pictures to the controls' height
        pictures = widgets.HBox([self.images["boundary"],
                                 widgets.VBox([self.images["curves"], self.images["layers"]],
                                              layout=widgets.Layout(flex="none"))], layout=top)
        return widgets.VBox([widgets.HBox([controls, pictures], layout=top), self.status],
                            layout=widgets.Layout(border="1px solid #ddd", padding="6px"))

    # ------------------------------------------------------------------ display
    def _repr_mimebundle_(self, **kwargs: Any) -> dict:
        """The live widget, plus a static HTML copy of the pictures for viewers without widgets."""
        bundle = self.widget._repr_mimebundle_(**kwargs)
        pictures = "".join(
            f"<img src='data:image/png;base64,{base64.b64encode(image.value).decode()}' "
            f"alt='{DESCRIPTIONS[name]}'/>" for name, image in self.images.items() if image.value
        )
        bundle["text/html"] = f"<div>{pictures}<p>{self.status.value}</p></div>"
        return bundle
