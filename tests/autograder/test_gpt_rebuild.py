"""The grader's own GPT on a trained model's weights (``autograder.checks.gpt_rebuild``): the
notebook's names map onto the reference's, its forward is the same to rounding, and weights
that do not fit say which name or shape."""
from __future__ import annotations

import numpy as np
import pytest

from autograder.checks import gpt_rebuild
from autograder.checks.graded_training import Run
from minitorch_ref import manual_seed
from minitorch_ref.models.gpt import GPT, GPTConfig

CONFIG = GPTConfig(vocab_size=10, block_size=11, n_layer=2, n_head=4, n_embd=16)


def notebook_state(model: GPT) -> dict[str, np.ndarray]:
    """``model``'s state under the notebook's names (``blocks.i``, ``feed_forward.linearK``)."""
    renamed = {}
    for key, value in model.state_dict().items():
        key = key.replace("h.", "blocks.", 1) if key.startswith("h.") else key
        for linear in ("linear1", "linear2"):
            key = key.replace(f".{linear}.", f".feed_forward.{linear}.")
        renamed[key] = value
    return renamed


@pytest.fixture(scope="module")
def model() -> GPT:
    manual_seed(0)
    return GPT(CONFIG, dtype=np.float32).eval()


def test_the_notebooks_names_rebuild_the_same_forward_in_the_students_dtype(model):
    state = notebook_state(model)
    assert "blocks.1.feed_forward.linear2.weight" in state
    rebuilt = gpt_rebuild.rebuild(gpt_rebuild.Trained(state, n_head=4))
    idx = np.random.default_rng(0).integers(0, 10, (3, 11))
    assert rebuilt.config == CONFIG and rebuilt.wte.weight.data.dtype == np.float32
    assert np.array_equal(rebuilt(idx), model(idx))


@pytest.mark.parametrize("change, message", [
    (lambda s: s.update({"blocks.0.attn.bias": np.zeros(3)}),
     "blocks.0.attn.bias has no place in GPT-2's parameters for vocab_size=10, block_size=11, "
     "n_layer=2, n_head=4, n_embd=16"),
    (lambda s: s.update({"ln_f.weight": np.ones(5)}),
     "ln_f.weight (5,) (GPT-2's (16,)) does not have GPT-2's shape"),
    (lambda s: s.pop("blocks.1.norm2.bias"), "h.1.norm2.bias is missing"),
    (lambda s: s.pop("wpe.weight"), "it has no wpe.weight of shape (rows, n_embd)"),
])
def test_weights_that_do_not_fit_say_which(model, change, message):
    state = notebook_state(model)
    change(state)
    with pytest.raises(gpt_rebuild.CannotRebuild, match=message.replace("(", r"\(")
                       .replace(")", r"\)")):
        gpt_rebuild.rebuild(gpt_rebuild.Trained(state, n_head=4))


def test_a_head_count_that_does_not_divide_the_width_cannot_rebuild(model):
    assert gpt_rebuild.rebuilt_score(gpt_rebuild.Trained(notebook_state(model), n_head=None),
                                     lambda logits_of: 1.0) == {"not_rebuilt": (
        "its attention modules (self_attn) do not give one num_heads that divides n_embd=16")}


@pytest.mark.parametrize("better_by, flagged", [(0.0, False), (0.01, False), (0.5, True),
                                                (float("nan"), True)])
def test_only_an_own_forward_clearly_better_than_the_rebuilt_one_is_flagged(better_by, flagged):
    review = gpt_rebuild.review(Run(figures={"rebuilt": 0.0}), better_by, 0.02, "scores 50%")
    assert (review is not None) == flagged
    if flagged:
        assert review.startswith("the model's own forward scores 50%: check whether its forward")


class Odd:
    """A kernel's model as the grader sees it, whose named_modules() are not pairs."""

    def state_dict(self) -> dict:
        return {}

    def named_modules(self) -> list:
        return [1, 2]


def test_a_model_that_answers_oddly_is_a_reason_for_review_not_a_crash():
    trained = gpt_rebuild.fetch(Odd())
    assert trained.problem.startswith("the trained model's named_modules() are not")
    assert "not_rebuilt" in gpt_rebuild.rebuilt_score(trained, lambda logits_of: 1.0)
