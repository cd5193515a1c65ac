"""Solutions written without the reference at hand, for the copy detector's false positives.

Each entry fills the ``# YOUR CODE HERE`` stubs of one solution cell of a release notebook, in
order, with code a student could write from the notebook's text alone: the textbook formula
where there is one (so some lines are the reference's own), the student's own names, order and
structure elsewhere. ``tests/pipeline/test_copies.py`` measures their similarity to the
reference and keeps it under ``copies.THRESHOLD``. (Imported as ``honest``: pytest puts this
folder on ``sys.path``.)
"""
from __future__ import annotations

import copy
import re

import nbformat

from autograder.notebooks.units import Unit, nbgrader, read

STUB = re.compile(r"^( *)# YOUR CODE HERE\n\1raise NotImplementedError\(\)$", re.MULTILINE)

STUBS: dict[tuple[str, str], list[list[str]]] = {   # (unit, cell): variants, each one body per stub
    ("03_module_linear", "linear"): [
        ["limit = np.sqrt(1 / in_features)\n"
         "draw = lambda *shape: Parameter(rng.uniform(low=-limit, high=limit, size=shape).astype(dtype))\n"
         "self.weight = draw(in_features, out_features)\n"
         "self.bias = draw(out_features) if bias else None",
         "self.input = x\n"
         "return x @ self.weight.data + (0 if self.bias is None else self.bias.data)",
         "self.weight.grad += self.input.T @ grad_output\n"
         "if self.bias is not None:\n"
         "    self.bias.grad += grad_output.sum(axis=0)\n"
         "return grad_output @ self.weight.data.T"],
        ["k = 1 / in_features ** 0.5\n"
         "w = rng.random((in_features, out_features)) * 2 * k - k\n"
         "self.weight = Parameter(np.asarray(w, dtype=dtype))\n"
         "if not bias:\n"
         "    self.bias = None\n"
         "else:\n"
         "    self.bias = Parameter(np.asarray(rng.random(out_features) * 2 * k - k, dtype=dtype))",
         "out = np.dot(x, self.weight.data)\n"
         "if self.bias is not None:\n"
         "    out += self.bias.data\n"
         "self.input = x\n"
         "return out",
         "dx = np.dot(grad_output, self.weight.data.T)\n"
         "self.weight.grad = self.weight.grad + np.dot(self.input.T, grad_output)\n"
         "if self.bias is not None:\n"
         "    self.bias.grad = self.bias.grad + np.sum(grad_output, axis=0)\n"
         "return dx"],
    ],
    ("03_module_linear", "init"): [
        ["sigma = gain * (2 / (fan_in + fan_out)) ** 0.5\n"
         "data[:] = sigma * rng.standard_normal(data.shape)\n"
         "return tensor",
         "fan = {'fan_in': fan_in, 'fan_out': fan_out}[mode]\n"
         "sigma = calculate_gain(nonlinearity, a) * (1 / fan) ** 0.5\n"
         "data[:] = sigma * rng.standard_normal(data.shape)\n"
         "return tensor"],
    ],
    ("04_activations", "relu-classes"): [
        ["return x * (x > 0)", "return 1.0 * (self.input > 0)",
         "return np.maximum(x, 0) + self.negative_slope * np.minimum(x, 0)",
         "grad = np.ones_like(self.input)\n"
         "grad[self.input <= 0] = self.negative_slope\n"
         "return grad"],
    ],
    ("04_activations", "sigmoid-classes"): [
        ["out = np.empty_like(x, dtype=float)\n"
         "pos = x >= 0\n"
         "out[pos] = 1 / (1 + np.exp(-x[pos]))\n"
         "z = np.exp(x[~pos])\n"
         "out[~pos] = z / (1 + z)\n"
         "return out",
         "s = self.output\nreturn s - s * s",
         "return (np.exp(x) - np.exp(-x)) / (np.exp(x) + np.exp(-x))",
         "t = self.output\nreturn 1 - t * t"],
    ],
    ("04_activations", "softmax-class"): [
        ["z = x - np.max(x, axis=self.dim, keepdims=True)\n"
         "e = np.exp(z)\n"
         "total = np.sum(e, axis=self.dim, keepdims=True)\n"
         "return e / total",
         "s = self.output\n"
         "dot = (grad_output * s).sum(axis=self.dim, keepdims=True)\n"
         "return s * grad_output - s * dot"],
    ],
    ("05_losses", "mse-class"): [
        ["self.pred = pred\n"
         "self.diff = pred - target\n"
         "squared = self.diff * self.diff\n"
         "return self._reduce(squared)",
         "n = self.diff.size\n"
         "return self._scale(n) * 2 * self.diff"],
    ],
    ("05_losses", "cross-entropy-class"): [
        ["m = np.max(pred, axis=1, keepdims=True)\n"
         "lse = m + np.log(np.sum(np.exp(pred - m), axis=1, keepdims=True))\n"
         "rows = np.arange(pred.shape[0])\n"
         "self.pred, self.target = pred, target\n"
         "self.probs = np.exp(pred - lse)\n"
         "losses = lse[:, 0] - pred[rows, target]\n"
         "return self._reduce(losses)",
         "onehot = np.zeros_like(self.probs)\n"
         "onehot[np.arange(self.probs.shape[0]), self.target] = 1\n"
         "return (self.probs - onehot) * self._scale(self.probs.shape[0])"],
    ],
    ("07_optimizers", "sgd"): [
        ["g = param.grad + group['weight_decay'] * param.data\n"
         "mu = group['momentum']\n"
         "if mu != 0:\n"
         "    if 'momentum_buffer' in state:\n"
         "        b = mu * state['momentum_buffer'] + (1 - group['dampening']) * g\n"
         "    else:\n"
         "        b = np.array(g, copy=True)\n"
         "    state['momentum_buffer'] = b\n"
         "    if group['nesterov']:\n"
         "        g = g + mu * b\n"
         "    else:\n"
         "        g = b\n"
         "param.data -= group['lr'] * g"],
    ],
    ("07_optimizers", "adam"): [
        ["wd = group['weight_decay']\n"
         "return param.grad + wd * param.data if wd else param.grad",
         "if 'step' not in state:\n"
         "    state['step'] = 0\n"
         "    state['exp_avg'] = np.zeros(param.data.shape)\n"
         "    state['exp_avg_sq'] = np.zeros(param.data.shape)\n"
         "b1, b2 = group['betas']\n"
         "state['step'] = n = state['step'] + 1\n"
         "m = state['exp_avg'] = b1 * state['exp_avg'] + (1 - b1) * grad\n"
         "v = state['exp_avg_sq'] = b2 * state['exp_avg_sq'] + (1 - b2) * grad * grad\n"
         "step = group['lr'] * (m / (1 - b1 ** n)) / (np.sqrt(v / (1 - b2 ** n)) + group['eps'])\n"
         "param.data -= step"],
    ],
}


def filled(cell_source: str, bodies: list[str]) -> str:
    """A release solution cell with its stubs replaced by ``bodies``, indented as the stubs."""
    parts = iter(bodies)
    return STUB.sub(lambda m: "\n".join(m.group(1) + line for line in next(parts).splitlines()),
                    cell_source)


def notebooks(unit: str) -> list[nbformat.NotebookNode]:
    """Unit ``unit``'s release notebook handed in by each honest student: variant ``i`` of every
    cell that has one (the release's stub where a cell has fewer)."""
    release = read(Unit(unit).release)
    cells = {cell: variants for (name, cell), variants in STUBS.items() if name == unit}
    found = []
    for i in range(max(map(len, cells.values()))):
        nb = copy.deepcopy(release)
        for cell in nb.cells:
            variants = cells.get(nbgrader(cell).get("grade_id"), [])
            if i < len(variants):
                cell.source = filled(cell.source, variants[i])
        found.append(nb)
    return found
