"""``interact`` for the course: ipywidgets' ``interact``, safe to execute without a browser.

ipywidgets' ``interact`` shows the function's output by *capturing* it in an
``Output`` widget (``with out: f(...)``). Executed headless (``jupyter nbconvert
--execute``, nbval, CI), nbclient plays the browser's Output widget: on each
captured output it sends the widget's new state back to the kernel, on the shell
channel, while the same shell socket is awaiting the cell's ``execute_reply``.
jupyter_client sends on a blocking shadow of that asyncio socket, which consumes
its edge-triggered readiness: if the reply has already arrived (likely when the
CPU is busy), pyzmq's poll is never woken and nbconvert, which has no timeout by
default, waits forever.

Here the function runs with its output captured *in the kernel*
(``IPython.utils.capture``) and the outputs are set as the Output widget's state
(what ``Output.append_display_data`` does). A front end only renders that state,
so nbclient never writes to the shell channel during the cell. In a notebook it
behaves as ipywidgets' ``interact``: same arguments, decorator forms,
``interact.options(...)`` and ``interact_manual``.
"""
from __future__ import annotations

import base64
import sys
from typing import Any

from IPython import get_ipython
from IPython.display import display
from IPython.utils.capture import capture_output
from ipywidgets import interactive
from ipywidgets.widgets.interaction import show_inline_matplotlib_plots


def _jsonable(data: dict) -> dict:
    """Display data as JSON: binary payloads (an image's bytes) base64-encoded."""
    return {key: base64.b64encode(value).decode("ascii") if isinstance(value, (bytes, bytearray))
            else value for key, value in data.items()}


def _error_output(exc: BaseException) -> dict:
    """``exc`` as an nbformat error output, with IPython's coloured traceback when there is one.
    The traceback starts in the student's function, below ``Interactive.update``."""
    tb = exc.__traceback__
    tb = tb.tb_next or tb if tb is not None else None
    shell = get_ipython()
    if shell is not None:
        lines = shell.InteractiveTB.structured_traceback(type(exc), exc, tb)
    else:
        import traceback
        lines = traceback.format_exception(type(exc), exc, tb)
    return {"output_type": "error", "ename": type(exc).__name__, "evalue": str(exc),
            "traceback": list(lines)}


class Interactive(interactive):
    """ipywidgets' ``interactive``, writing the function's outputs into ``self.out.outputs``."""

    def update(self, *args: Any) -> None:
        """Call the function with the controls' values and show what it printed and displayed."""
        self.kwargs = {}
        if self.manual:
            self.manual_button.disabled = True
        error = None
        try:
            show_inline_matplotlib_plots()  # figures from before belong to the cell, not to us
            with capture_output() as captured:
                try:
                    for widget in self.kwargs_widgets:
                        self.kwargs[widget._kwarg] = widget.get_interact_value()
                    self.result = self.f(**self.kwargs)
                    show_inline_matplotlib_plots()  # the figures it drew and did not show
                    if self.auto_display and self.result is not None:
                        display(self.result)
                except Exception as exc:  # noqa: BLE001 - shown in the widget, as ipywidgets does
                    error = _error_output(exc)
            outputs = [{"output_type": "stream", "name": name, "text": text}
                       for name, text in (("stdout", captured.stdout), ("stderr", captured.stderr))
                       if text]
            outputs += [{"output_type": "display_data", "data": _jsonable(out.data),
                         "metadata": out.metadata or {}} for out in captured.outputs]
            if error:
                outputs.append(error)
            kept = () if self.clear_output else tuple(self.out.outputs)
            self.out.outputs = kept + tuple(outputs)
        finally:
            if self.manual:
                self.manual_button.disabled = False


interact = Interactive.factory()
"""``interact(f, **abbreviations)`` or ``@interact(...)``: controls for ``f``'s arguments."""

interact_manual = interact.options(manual=True, manual_name="Run Interact")
"""``interact`` with a button: ``f`` runs on a click only."""

__all__ = ["Interactive", "interact", "interact_manual"]
