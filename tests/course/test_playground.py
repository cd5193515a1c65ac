"""course.widgets.Playground driven from Python: steps, resets, controls, errors, play/pause."""
from __future__ import annotations

import asyncio

import numpy as np
import pytest

from course.widgets import Config, Framework, Playground, Trainer
from course.widgets.playground import DESCRIPTIONS
from minitorch_ref import nn

FAST = Config(n_points=100)


@pytest.fixture
def playground(classes):
    return Playground(FAST, initial_epochs=2, max_epochs=40, **classes)


class ForwardRaises(nn.Linear):
    def forward(self, x):
        raise TypeError("unsupported operand type(s) for @: 'list' and 'int'")


class BackwardRaises(nn.Linear):
    def backward(self, grad_output):
        raise ValueError("shapes (8,2) and (3,8) not aligned")


class DropsTheBatch(nn.Linear):
    def forward(self, x):
        return super().forward(x)[:1]


class NanLoss(nn.CrossEntropyLoss):
    def forward(self, pred, target):
        super().forward(pred, target)
        return float("nan")


def test_construction_trains_a_few_epochs_and_draws_everything(playground):
    assert playground.error is None
    assert playground.trainer.epoch == 2 and len(playground.trainer.history["test_acc"]) == 2
    assert all(bytes(image.value).startswith(b"\x89PNG") for image in playground.images.values())
    assert playground.status.value.startswith("epoch 2 ")
    assert playground.progress.value == 2


def test_step_trains_one_epoch_and_changes_loss_and_pictures(playground):
    before = {name: image.value for name, image in playground.images.items()}
    loss_before = playground.trainer.history["train_loss"][-1]
    playground.step()
    assert playground.trainer.epoch == 3
    assert playground.trainer.history["train_loss"][-1] != loss_before
    assert playground.images["boundary"].value != before["boundary"]
    assert playground.images["curves"].value != before["curves"]
    playground.buttons["step"].click()
    assert playground.trainer.epoch == 4


def test_reset_starts_over_reproducibly(playground):
    first_weights = playground.trainer.model[0].weight.data.copy()  # after 2 epochs
    model = playground.trainer.model
    playground.buttons["reset"].click()
    assert playground.trainer.epoch == 0 and playground.trainer.history["train_loss"] == []
    assert playground.trainer.model is not model
    assert "press Step" in playground.status.value
    playground.step()
    playground.step()
    np.testing.assert_array_equal(playground.trainer.model[0].weight.data, first_weights)
    assert playground.status.value.startswith("epoch 2 ")


def test_changing_a_control_rebuilds_the_model(playground):
    model = playground.trainer.model
    playground.controls["hidden"].value = "4, 5, 6"
    assert playground.trainer.model is not model and playground.trainer.epoch == 0
    widths = [layer.out_features for layer in playground.trainer.model if isinstance(layer, nn.Linear)]
    assert widths == [4, 5, 6, 2]
    playground.controls["dataset"].value = "spiral"
    assert playground.trainer.n_classes == 3 and playground.trainer.model[-1].out_features == 3
    playground.controls["activation"].value = "Tanh"
    playground.controls["dropout"].value = 0.2
    kinds = [type(layer).__name__ for layer in playground.trainer.model]
    assert kinds[:3] == ["Linear", "Tanh", "Dropout"]
    playground.controls["optimizer"].value = "SGD + momentum"
    assert playground.trainer.optimizer.param_groups[0]["momentum"] == 0.9
    playground.controls["weight_decay"].value = 1e-3
    assert playground.trainer.optimizer.param_groups[0]["weight_decay"] == 1e-3


def test_a_malformed_hidden_layer_text_shows_an_error_until_fixed(playground):
    playground.controls["hidden"].value = "8, x"
    assert "hidden layers: write widths from 1 to 256" in playground.status.value
    assert playground.trainer is None
    playground.step()
    assert "hidden layers" in playground.status.value
    playground.controls["hidden"].value = "3"
    assert playground.error is None and playground.trainer.epoch == 0


@pytest.mark.parametrize("override, message", [
    ({"Linear": ForwardRaises}, "TypeError: unsupported operand type(s) for @"),
    ({"Linear": BackwardRaises}, "ValueError: shapes (8,2) and (3,8) not aligned"),
    ({"Linear": DropsTheBatch}, "TrainingError: the model returned shape (1, 2) for a batch of shape (70, 2)"),
    ({"CrossEntropyLoss": NanLoss}, "TrainingError: the loss became nan in epoch 1: lower the learning rate"),
])
def test_a_broken_student_class_shows_its_error_instead_of_crashing(classes, override, message):
    playground = Playground(FAST, initial_epochs=2, **{**classes, **override})
    assert message in playground.error
    if "TrainingError" not in message:
        assert "test_playground.py, line" in playground.error  # where in the student's code
    assert message.replace("'", "&#x27;") in playground.status.value
    playground.buttons["step"].click()  # the widget lives on, and says the same
    assert message in playground.error and not playground.playing
    playground.buttons["reset"].click()


def test_play_trains_in_the_background_until_pause(playground):
    async def scenario():
        playground.buttons["play"].click()
        assert playground.playing and playground.buttons["play"].description == "Pause"
        await asyncio.sleep(0.3)
        playground.buttons["play"].click()
        stopped_at = playground.trainer.epoch
        await asyncio.sleep(0.2)
        return stopped_at

    stopped_at = asyncio.run(scenario())
    assert 2 < stopped_at == playground.trainer.epoch
    assert not playground.playing and playground.buttons["play"].description == "Play"


def test_play_stops_at_max_epochs_and_on_an_error(classes):
    playground = Playground(FAST, initial_epochs=0, max_epochs=5, **classes)
    asyncio.run(_play_to_end(playground))
    assert playground.trainer.epoch == 5 and not playground.playing
    assert playground.buttons["play"].description == "Play"
    broken = Playground(FAST, initial_epochs=0, **{**classes, "CrossEntropyLoss": NanLoss})
    asyncio.run(_play_to_end(broken))
    assert "the loss became nan" in broken.error and not broken.playing


async def _play_to_end(playground):
    playground.play()
    await playground._task


def test_play_without_an_event_loop_explains_itself(playground):
    playground.play()
    assert "Play needs a running event loop" in playground.error and not playground.playing


def test_display_offers_the_widget_and_a_static_copy(playground):
    bundle = playground._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert bundle["text/html"].count("data:image/png;base64,") == 3
    assert all(f"alt='{words}'" in bundle["text/html"] for words in DESCRIPTIONS.values())


def test_only_the_given_classes_are_offered(classes):
    del classes["Adam"], classes["Tanh"], classes["Dropout"]
    playground = Playground(FAST, initial_epochs=1, **classes)
    assert playground.controls["optimizer"].options == ("SGD", "SGD + momentum")
    assert playground.controls["activation"].options == ("ReLU", "Sigmoid")
    assert playground.controls["dropout"].disabled


@pytest.mark.parametrize("drop, message", [
    (("SGD", "Adam"), "needs an optimizer class"),
    (("Linear",), "needs Linear=, Sequential="),
    (("TensorDataset",), "pass DataLoader= and TensorDataset= together"),
])
def test_missing_classes_are_named(classes, drop, message):
    for name in drop:
        del classes[name]
    with pytest.raises(ValueError, match=message):
        Framework(**classes)


def test_trainer_with_a_model_factory_and_plain_index_batches(classes):
    built = []

    def factory(config, n_inputs, n_classes):
        built.append((config.hidden, n_inputs, n_classes))
        return nn.Sequential(nn.Linear(n_inputs, 6), nn.ReLU(), nn.Linear(6, n_classes))

    framework = Framework(CrossEntropyLoss=nn.CrossEntropyLoss, Adam=classes["Adam"], model_factory=factory)
    trainer = Trainer(framework, FAST.replace(dataset="blobs", hidden=(9,)))
    trainer.step()
    assert built == [((9,), 2, 3)]
    assert [s.name for s in trainer.layers] == ["0: Linear", "1: ReLU", "2: Linear"]
    assert trainer.layers[1].dead_share is not None and trainer.layers[0].dead_share is None
    assert trainer.layers[0].grad_norm > 0 and trainer.layers[1].grad_norm is None
