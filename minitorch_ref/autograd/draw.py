"""A picture of the computation graph of a small expression, with matplotlib only.

Tensors are boxes in layers, inputs on the left and the result on the right (a
tensor's layer is one more than its deepest parent's); arrows follow the data from
parent to result, the opposite of the way ``backward()`` walks them.
"""
from __future__ import annotations

from collections import defaultdict

from minitorch_ref.autograd.graph import topological_order
from minitorch_ref.autograd.tensor import Tensor

# Box colours: what the optimizer learns, what is computed, what is fixed.
COLORS = {"leaf": "#cfe2f3", "op": "#fce5cd", "constant": "#eeeeee"}


def draw_graph(root: Tensor, ax=None, labels: dict[Tensor, str] | None = None,
               max_nodes: int = 60):
    """Draw the graph that computed ``root`` and return the Axes.

    Each box shows the tensor's name from ``labels`` and the operation that
    produced it (``leaf`` or ``constant`` for the others), and its shape; one-element tensors
    show their value, and their gradient once ``backward()`` has run.

    Args:
        root: the result (usually the loss).
        ax: where to draw; a new figure sized to the graph if None.
        labels: optional names for some tensors, e.g. ``{x: "x", w: "w"}``.
        max_nodes: refuse larger graphs, which would be unreadable.

    Raises:
        ValueError: if the graph has more than ``max_nodes`` tensors.
    """
    import matplotlib.pyplot as plt

    nodes = topological_order(root, follow=lambda t: True)
    if len(nodes) > max_nodes:
        raise ValueError(
            f"draw_graph is meant for small expressions: this graph has {len(nodes)} tensors "
            f"(max_nodes={max_nodes}). Draw a smaller expression, or raise max_nodes."
        )
    positions = _layered_layout(nodes)
    n_layers = 1 + max(x for x, _ in positions.values())
    height = max(abs(y) for _, y in positions.values())
    if ax is None:
        _, ax = plt.subplots(figsize=(1 + 2.2 * n_layers, 1.5 + 2.0 * height))
    boxes = {id(n): _draw_node(ax, n, positions[id(n)], labels or {}, n is root) for n in nodes}
    for node in nodes:
        for i, parent in enumerate(node.parents):
            # A tensor used twice (x * x) gets a second, curved arrow.
            bend = 0.3 if any(p is parent for p in node.parents[:i]) else 0.0
            ax.annotate("", xy=(0, 0.5), xycoords=boxes[id(node)], xytext=(1, 0.5),
                        textcoords=boxes[id(parent)],
                        arrowprops=dict(arrowstyle="->", color="0.35", shrinkA=7, shrinkB=7,
                                        connectionstyle=f"arc3,rad={bend}"))
    ax.set_xlim(-0.6, n_layers - 0.4)
    ax.set_ylim(-height - 0.7, height + 0.7)
    ax.set_axis_off()
    return ax


def _layered_layout(nodes: list[Tensor]) -> dict[int, tuple[float, float]]:
    """``id(tensor) -> (layer, height)``: inputs in layer 0, each layer centred on 0."""
    layer = {}
    for node in nodes:  # parents come first, so their layers are known
        layer[id(node)] = 1 + max((layer[id(p)] for p in node.parents), default=-1)
    columns = defaultdict(list)
    for node in nodes:
        columns[layer[id(node)]].append(id(node))
    return {
        key: (x, (len(column) - 1) / 2 - i)
        for x, column in columns.items()
        for i, key in enumerate(column)
    }


def _draw_node(ax, node: Tensor, xy: tuple[float, float], labels: dict, is_root: bool):
    kind = "op" if node.grad_fn is not None else "leaf" if node.requires_grad else "constant"
    name = node.grad_fn.name if node.grad_fn is not None else kind
    if node in labels:
        name = f"{labels[node]} = {name}" if kind == "op" else labels[node]
    lines = [name, f"shape {node.shape}" if node.ndim else "scalar"]
    if node.size == 1:
        lines.append(f"data {node.data.item():.4g}")
        if node.grad is not None:
            lines.append(f"grad {node.grad.item():.4g}")
    return ax.text(*xy, "\n".join(lines), ha="center", va="center", fontsize=8,
                   bbox=dict(boxstyle="round,pad=0.5", fc=COLORS[kind],
                             ec="black", lw=2 if is_root else 0.8))
