"""Sequential (and the Module methods it inherits) with one classic student bug each."""
from __future__ import annotations

from collections import OrderedDict

import numpy as np

from autograder.mutants import Mutant
from minitorch_ref import nn


class BackwardForwardOrder(nn.Sequential):
    def backward(self, grad_output):
        for module in self:
            grad_output = module.backward(grad_output)
        return grad_output


class BackwardNoReturn(nn.Sequential):
    def backward(self, grad_output):
        for module in reversed(list(self)):
            grad_output = module.backward(grad_output)


class BackwardSameGradient(nn.Sequential):
    def backward(self, grad_output):
        grads = [module.backward(grad_output) for module in reversed(list(self))]
        return grads[-1]


class ForwardReturnInLoop(nn.Sequential):
    def forward(self, x):
        for module in self:
            x = module(x)
            return x


class ParametersOwnOnly(nn.Sequential):
    def parameters(self):
        return list(self._parameters.values())


class GradsReversed(nn.Sequential):
    def grads(self):
        return [param.grad for param in reversed(self.parameters())]


class NamesWithoutIndex(nn.Sequential):
    def named_parameters(self):
        return [(name.split(".")[-1], param) for name, param in super().named_parameters()]


class NamedParametersSorted(nn.Sequential):
    """Within each module the parameters sorted by name: bias before weight."""

    def named_parameters(self):
        return [(f"{prefix}.{name}" if prefix else name, param)
                for prefix, module in self.named_modules()
                for name, param in sorted(module._parameters.items())]


class NamedModulesBreadthFirst(nn.Sequential):
    def named_modules(self, prefix=""):
        queue = [(prefix, self)]
        while queue:
            name, module = queue.pop(0)
            yield name, module
            queue += [(f"{name}.{child}" if name else child, module._modules[child])
                      for child in module._modules]


class ZeroGradOwnOnly(nn.Sequential):
    def zero_grad(self):
        for param in self._parameters.values():
            param.zero_grad()


class ModeNotPropagated(nn.Sequential):
    def train(self, mode=True):
        object.__setattr__(self, "training", mode)
        return self


class GradsCopied(nn.Sequential):
    def grads(self):
        return [grad.copy() for grad in super().grads()]


class LoadReplacesBuffers(nn.Sequential):
    def load_state_dict(self, state_dict, strict=True):
        super().load_state_dict(state_dict, strict)
        for _, module in self.named_modules():       # the right values, in new arrays
            for name in list(module._buffers):
                module._buffers[name] = np.array(module._buffers[name], copy=True)


class TrainReturnsNothing(nn.Sequential):
    def train(self, mode=True):
        super().train(mode)


class StateDictBuffersFirst(nn.Sequential):
    def state_dict(self):
        state = super().state_dict()
        buffers = [name for name, _ in self.named_buffers()]
        return OrderedDict([(k, state[k]) for k in buffers]
                           + [(k, v) for k, v in state.items() if k not in buffers])


class LoadNothingWhenNotStrict(nn.Sequential):
    def load_state_dict(self, state_dict, strict=True):
        if strict:
            super().load_state_dict(state_dict, strict)


class StateDictReferences(nn.Sequential):
    def state_dict(self):
        state = OrderedDict((name, p.data) for name, p in self.named_parameters())
        state.update(self.named_buffers())
        return state


class SetattrKeepsRegistration(nn.Sequential):
    def __setattr__(self, name, value):
        registries = [self.__dict__.get(r, {}) for r in ("_parameters", "_modules")]
        if value is None and any(name in registry for registry in registries):
            object.__setattr__(self, name, value)       # the old entry stays registered
            return
        super().__setattr__(name, value)


class StateDictSharesBuffers(nn.Sequential):
    def state_dict(self):
        state = OrderedDict((name, p.data.copy()) for name, p in self.named_parameters())
        state.update(self.named_buffers())          # the buffers' own arrays
        return state


class StateDictWithoutBuffers(nn.Sequential):
    def state_dict(self):
        return OrderedDict((name, p.data.copy()) for name, p in self.named_parameters())

    def load_state_dict(self, state_dict, strict=True):
        super().load_state_dict(state_dict, strict=False)


class LoadReplacesArrays(nn.Sequential):
    def load_state_dict(self, state_dict, strict=True):
        super().load_state_dict(state_dict, strict)
        for _, param in self.named_parameters():     # the right values, in new arrays
            param.data = param.data.copy()


class LoadReplacesParameters(nn.Sequential):
    def load_state_dict(self, state_dict, strict=True):
        super().load_state_dict(state_dict, strict)
        for prefix, module in self.named_modules():   # the right values, in new Parameters
            for name in list(module._parameters):
                key = f"{prefix}.{name}" if prefix else name
                if key in state_dict:
                    setattr(module, name, nn.Parameter(np.array(state_dict[key], copy=True)))


class StateDictStaleBuffers(nn.Sequential):
    """A reassigned buffer left the registry as it was (``__setattr__`` does not store the new
    value in ``_buffers``): state_dict() saves the values the buffers were registered with."""

    def __init__(self, *modules):
        super().__init__(*modules)
        object.__setattr__(self, "_registered", [
            (f"{prefix}.{name}" if prefix else name, np.array(buffer, copy=True))
            for prefix, module in self.named_modules() for name, buffer in module._buffers.items()])

    def state_dict(self):
        state = OrderedDict((name, p.data.copy()) for name, p in self.named_parameters())
        state.update(self._registered)
        return state


class ReprWithoutChildren(nn.Sequential):
    def __repr__(self):
        return "Sequential()"


class ReprExtraLeftOutWithChildren(nn.Sequential):
    def __repr__(self):
        lines = [f"({name}): " + repr(child).replace("\n", "\n  ")
                 for name, child in self._modules.items()]
        if not lines:
            return f"{type(self).__name__}({self.extra_repr()})"
        return f"{type(self).__name__}(\n  " + "\n  ".join(lines) + "\n)"


class ReprNotIndented(nn.Sequential):
    def __repr__(self):
        lines = [f"  ({name}): {child!r}" for name, child in self._modules.items()]
        return "\n".join([f"{type(self).__name__}("] + lines + [")"])


MUTANTS = [
    Mutant("sequential_backward_forward_order", "Sequential", BackwardForwardOrder,
           "runs in forward order", "backward loops over the layers first to last"),
    Mutant("sequential_backward_no_return", "Sequential", BackwardNoReturn, "forget a `return`",
           "backward computes dL/dx but does not return it"),
    Mutant("sequential_backward_same_gradient", "Sequential", BackwardSameGradient,
           "received the wrong gradient", "every layer's backward gets the model's grad_output"),
    Mutant("sequential_forward_return_in_loop", "Sequential", ForwardReturnInLoop,
           "`return` inside the loop", "forward returns the first layer's output"),
    Mutant("sequential_parameters_own_only", "Sequential", ParametersOwnOnly,
           "parameters of its children", "parameters() ignores the children",
           also=(
                 ('sequential_grads',
                  "grads() goes through parameters(): when it lists none of the children's "
                  'parameters there are none to judge it on'),
                 ('sequential_zero_grad',
                  'zero_grad() goes through parameters(): when it lists none of the '
                  "children's parameters none is reset"),)),
    Mutant("sequential_grads_reversed", "Sequential", GradsReversed,
           "same order as parameters()", "grads() in reverse order"),
    Mutant("sequential_names_without_index", "Sequential", NamesWithoutIndex, "the child's index",
           "named_parameters() without the child's index",
           also=(
                 ('sequential_state_dict',
                  "names without the child's index collide ('weight' for every layer): a "
                  "state dict keyed by them keeps one layer's parameters"),
                 ('sequential_state_dict_buffers',
                  "names without the child's index collide: a state dict keyed by them keeps "
                  "one layer's parameters"),)),
    Mutant("sequential_named_parameters_sorted", "Sequential", NamedParametersSorted,
           "in the order they were assigned", "bias before weight within each layer"),
    Mutant("sequential_named_modules_breadth_first", "Sequential", NamedModulesBreadthFirst,
           "depth first", "named_modules() lists every child before any grandchild"),
    Mutant("sequential_zero_grad_own_only", "Sequential", ZeroGradOwnOnly,
           "zero_grad must reset", "zero_grad() leaves the children's gradients"),
    Mutant("sequential_mode_not_propagated", "Sequential", ModeNotPropagated,
           "propagated to every child", "train()/eval() only set the model's own flag"),
    Mutant("sequential_grads_copied", "Sequential", GradsCopied, "returned copies",
           "grads() returns copies of the gradients"),
    Mutant("sequential_load_replaces_buffers", "Sequential", LoadReplacesBuffers,
           "copy the saved values into the buffer", "buffers replaced by new arrays on load"),
    Mutant("sequential_train_returns_nothing", "Sequential", TrainReturnsNothing,
           "return self", "train() and eval() return None"),
    Mutant("sequential_state_dict_buffers_first", "Sequential", StateDictBuffersFirst,
           "then the buffers", "buffers before parameters in state_dict()"),
    Mutant("sequential_load_nothing_when_not_strict", "Sequential", LoadNothingWhenNotStrict,
           "the common keys are still copied", "strict=False loads nothing"),
    Mutant("sequential_state_dict_references", "Sequential", StateDictReferences, "no copies",
           "state_dict() returns the parameters' own arrays",
           also=(
                 ('sequential_state_dict_buffers',
                  'the mistake is made for the buffers too: state_dict() returns their own '
                  'arrays as well'),)),
    Mutant("sequential_setattr_keeps_registration", "Sequential", SetattrKeepsRegistration,
           "must first remove the name", "__setattr__ does not pop a reassigned name"),
    Mutant("sequential_state_dict_shares_buffers", "Sequential", StateDictSharesBuffers,
           "buffers' own arrays", "state_dict() copies the parameters but not the buffers"),
    Mutant("sequential_state_dict_without_buffers", "Sequential", StateDictWithoutBuffers,
           "are buffers", "state_dict() forgets BatchNorm's running statistics"),
    Mutant("sequential_load_replaces_arrays", "Sequential", LoadReplacesArrays,
           "copy the values into the arrays the model has",
           "load_state_dict: param.data = value.copy()"),
    Mutant("sequential_load_replaces_parameters", "Sequential", LoadReplacesParameters,
           "replaced the Parameter objects", "load_state_dict assigns new Parameters"),
    Mutant("sequential_state_dict_stale_buffers", "Sequential", StateDictStaleBuffers,
           "was registered with", "state_dict() saves the buffers' values at registration"),
    Mutant("sequential_repr_without_children", "Sequential", ReprWithoutChildren, None,
           "print(model) does not show the layers"),
    Mutant("sequential_repr_extra_left_out", "Sequential", ReprExtraLeftOutWithChildren,
           "extra_repr() is left out", "a module with children prints no extra_repr()"),
    Mutant("sequential_repr_not_indented", "Sequential", ReprNotIndented, "not indented",
           "a nested Sequential's lines are not indented"),
]
