"""``summary(model, input_shape)``: layers, output shapes and parameter counts, like torchinfo."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from minitorch_ref.nn.module import Module


@dataclass(frozen=True)
class LayerRow:
    name: str
    kind: str
    output_shape: tuple[int, ...]
    params: int


@dataclass(frozen=True)
class Summary:
    """The rows of the table and the totals; ``str()`` (or ``print``) shows the table."""

    input_shape: tuple[int, ...]
    rows: tuple[LayerRow, ...]
    total_params: int

    def __str__(self) -> str:
        header = ("Layer (type)", "Output shape", "Param #")
        cells = [(f"{r.name} ({r.kind})", str(r.output_shape), f"{r.params:,}") for r in self.rows]
        widths = [max(len(row[i]) for row in [header, *cells]) for i in range(3)]
        rule = "=" * (sum(widths) + 4)

        def line(row):
            return f"{row[0]:<{widths[0]}}  {row[1]:<{widths[1]}}  {row[2]:>{widths[2]}}"
        return "\n".join([rule, line(header), rule, *map(line, cells), rule,
                          f"Input shape: {self.input_shape}",
                          f"Total params: {self.total_params:,}", rule])

    def _repr_pretty_(self, printer, cycle) -> None:  # IPython shows the table
        printer.text(str(self))


def _leaves(model: Module) -> list[tuple[str, Module]]:
    return [(name or type(model).__name__, module) for name, module in model.named_modules()
            if not module._modules]


def summary(model: Module, input_shape: tuple[int, ...], dtype: type = np.float64) -> Summary:
    """Run one forward pass of zeros of ``input_shape`` (batch dimension included) in
    eval mode and record every leaf layer's output shape and parameter count.

    The model's mode and parameters are left as they were.
    """
    shapes: dict[int, tuple[int, ...]] = {}
    leaves = _leaves(model)
    for _, module in leaves:
        module.forward = _recording(module, shapes)
    was_training = model.training
    try:
        model.eval()
        model(np.zeros(input_shape, dtype=dtype))
    finally:
        for _, module in leaves:
            del module.forward  # back to the class's forward
        model.train(was_training)
    rows = tuple(
        LayerRow(name, type(module).__name__, shapes.get(id(module), ()),
                 sum(p.size for p in module._parameters.values()))
        for name, module in leaves
    )
    return Summary(tuple(input_shape), rows, sum(p.size for p in model.parameters()))


def _recording(module: Module, shapes: dict[int, tuple[int, ...]]):
    forward = type(module).forward.__get__(module)

    def record(*inputs):
        output = forward(*inputs)
        shapes[id(module)] = np.shape(output)
        return output
    return record
