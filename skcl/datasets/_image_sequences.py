"""The paper's image task sequences, and Split Fashion-MNIST.

Each loader reads one dataset (:mod:`._image_readers`), splits it as the
paper does (:mod:`._image_splits`), then cuts every split into tasks by
class groups (:func:`split_by_class`) and, for domain-incremental
sequences, relabels the tasks (:func:`relabel`). Images are uint8:
(n, 28, 28) for the grayscale datasets and (n, 32, 32, 3), channels last,
for the colour ones; labels are int64.
"""

import numpy as np

from ._image_bunches import sequence_bunch
from ._image_docs import (
    CIFAR10_LAYOUT,
    COLOUR,
    FASHION_LAYOUT,
    GRAY,
    ISIC_PARAMETERS,
    MNIST_LAYOUT,
    PARAMETERS,
    SEQUENCE_RETURNS,
    fill_doc,
)
from ._image_readers import read_cifar_dataset, read_idx_dataset
from ._image_splits import ISIC_SUMMARY, OFFICIAL_SUMMARY, isic_splits, official_splits
from ._split import PAPER_SEED

__all__ = [
    "load_ci_split_mnist",
    "load_di_split_mnist",
    "load_ci_split_fashion_mnist",
    "load_di_split_fashion_mnist",
    "load_ci_split_cifar10",
    "load_di_split_cifar8",
    "load_ci_split_ham8",
    "load_di_split_ham6",
]

# The tasks of the ten-class datasets: consecutive pairs of labels.
_PAIRS = [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9]]

# HAM10000's diagnoses, in the paper code's label order.
_HAM8_CLASSES = [
    "actinic keratosis", "basal cell carcinoma", "dermatofibroma", "melanoma",
    "nevus", "pigmented benign keratosis", "squamous cell carcinoma",
    "vascular lesion",
]


@fill_doc(PARAMETERS, SEQUENCE_RETURNS, layout=MNIST_LAYOUT, n_tasks=5, shape=GRAY)
def load_ci_split_mnist(root=None, *, download=False, random_state=PAPER_SEED):
    """CI Split MNIST: 5 tasks of 2 digits, (0, 1), (2, 3), ..., (8, 9).

    Class-incremental: after the last task, all 10 digits must be told
    apart (labels 0..9).
    {sections}
    Examples
    --------
    >>> from skcl.datasets import load_ci_split_mnist  # doctest: +SKIP
    >>> data = load_ci_split_mnist()  # reads $SKCL_DATA_DIR/MNIST/raw  # doctest: +SKIP
    >>> [sorted(set(y.tolist())) for _, y in data.train]  # doctest: +SKIP
    [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9]]
    """
    parts, names = official_splits(read_idx_dataset, "MNIST", root, download, random_state)
    return sequence_bunch(
        "CI Split MNIST", parts, _PAIRS, target_names=names, group_names=names,
        classes=range(10), summary=OFFICIAL_SUMMARY, random_state=random_state,
    )


@fill_doc(PARAMETERS, SEQUENCE_RETURNS, layout=MNIST_LAYOUT, n_tasks=5, shape=GRAY)
def load_di_split_mnist(root=None, *, download=False, random_state=PAPER_SEED):
    """DI Split MNIST: even (0) vs odd (1) digits, 5 tasks of 2 digits.

    Domain-incremental: the tasks hold the digits (0, 1), (2, 3), ...,
    (8, 9) of CI Split MNIST, each labelled by parity (``y = digit % 2``),
    so every task asks the same binary question.
    {sections}
    Examples
    --------
    >>> from skcl.datasets import load_di_split_mnist  # doctest: +SKIP
    >>> data = load_di_split_mnist()  # doctest: +SKIP
    >>> [sorted(set(y.tolist())) for _, y in data.train]  # doctest: +SKIP
    [[0, 1], [0, 1], [0, 1], [0, 1], [0, 1]]
    >>> data.target_names.tolist()  # doctest: +SKIP
    ['even', 'odd']
    """
    parts, names = official_splits(read_idx_dataset, "MNIST", root, download, random_state)
    return sequence_bunch(
        "DI Split MNIST", parts, _PAIRS, target_names=["even", "odd"],
        group_names=names, classes=[0, 1], mapping={d: d % 2 for d in range(10)},
        summary=OFFICIAL_SUMMARY, random_state=random_state,
    )


@fill_doc(PARAMETERS, SEQUENCE_RETURNS, layout=FASHION_LAYOUT, n_tasks=5, shape=GRAY)
def load_ci_split_fashion_mnist(root=None, *, download=False, random_state=PAPER_SEED):
    """CI Split Fashion-MNIST: 5 tasks of 2 classes, (0, 1), ..., (8, 9).

    The tasks are (T-shirt/top, Trouser), (Pullover, Dress), (Coat,
    Sandal), (Shirt, Sneaker), (Bag, Ankle boot); labels 0..9 as in
    Fashion-MNIST. Not in the paper: it mirrors CI Split MNIST so that an
    extractor pre-trained on MNIST can be tried the other way round.
    {sections}
    Examples
    --------
    >>> from skcl.datasets import load_ci_split_fashion_mnist  # doctest: +SKIP
    >>> data = load_ci_split_fashion_mnist()  # doctest: +SKIP
    >>> [sorted(set(y.tolist())) for _, y in data.train]  # doctest: +SKIP
    [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9]]
    >>> data.train[0][0].shape  # doctest: +SKIP
    (9600, 28, 28)
    """
    parts, names = official_splits(
        read_idx_dataset, "Fashion-MNIST", root, download, random_state
    )
    return sequence_bunch(
        "CI Split Fashion-MNIST", parts, _PAIRS, target_names=names,
        group_names=names, classes=range(10), summary=OFFICIAL_SUMMARY,
        random_state=random_state,
    )


@fill_doc(PARAMETERS, SEQUENCE_RETURNS, layout=FASHION_LAYOUT, n_tasks=5, shape=GRAY)
def load_di_split_fashion_mnist(root=None, *, download=False, random_state=PAPER_SEED):
    """DI Split Fashion-MNIST: first (0) vs second (1) class of each pair.

    Not in the paper; built exactly like DI Split MNIST so the two can be
    compared: the tasks hold the classes (0, 1), (2, 3), ..., (8, 9) of
    CI Split Fashion-MNIST and each sample is labelled by its class's
    position in the pair, ``y = class % 2``. Label 0 means T-shirt/top,
    Pullover, Coat, Shirt or Bag; label 1 means Trouser, Dress, Sandal,
    Sneaker or Ankle boot. Unlike parity of digits this binary question
    has no meaning of its own: it is what the task sequence's shape
    dictates.
    {sections}
    Examples
    --------
    >>> from skcl.datasets import load_di_split_fashion_mnist  # doctest: +SKIP
    >>> data = load_di_split_fashion_mnist()  # doctest: +SKIP
    >>> [sorted(set(y.tolist())) for _, y in data.train]  # doctest: +SKIP
    [[0, 1], [0, 1], [0, 1], [0, 1], [0, 1]]
    """
    parts, names = official_splits(
        read_idx_dataset, "Fashion-MNIST", root, download, random_state
    )
    return sequence_bunch(
        "DI Split Fashion-MNIST", parts, _PAIRS,
        target_names=["first of pair", "second of pair"], group_names=names,
        classes=[0, 1], mapping={c: c % 2 for c in range(10)},
        summary=OFFICIAL_SUMMARY, random_state=random_state,
    )


@fill_doc(PARAMETERS, SEQUENCE_RETURNS, layout=CIFAR10_LAYOUT, n_tasks=5, shape=COLOUR)
def load_ci_split_cifar10(root=None, *, download=False, random_state=PAPER_SEED):
    """CI Split CIFAR-10: 5 tasks of 2 classes, (0, 1), ..., (8, 9).

    The tasks are (airplane, automobile), (bird, cat), (deer, dog),
    (frog, horse), (ship, truck); labels 0..9 as in CIFAR-10. The files are
    CIFAR's pickled batches, read by a restricted unpickler (see the module
    ``skcl.datasets._cifar``): load only official files.
    {sections}
    Examples
    --------
    >>> from skcl.datasets import load_ci_split_cifar10  # doctest: +SKIP
    >>> data = load_ci_split_cifar10()  # reads $SKCL_DATA_DIR/cifar-10-batches-py  # doctest: +SKIP
    >>> [sorted(set(y.tolist())) for _, y in data.train]  # doctest: +SKIP
    [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9]]
    >>> data.train[0][0].shape  # doctest: +SKIP
    (8000, 32, 32, 3)
    """
    parts, names = official_splits(read_cifar_dataset, "CIFAR-10", root, download, random_state)
    return sequence_bunch(
        "CI Split CIFAR-10", parts, _PAIRS, target_names=names, group_names=names,
        classes=range(10), summary=OFFICIAL_SUMMARY, random_state=random_state,
    )


# Each vehicle with an animal, both in label order (the paper code's pairs).
_CIFAR8_PAIRS = [[0, 3], [1, 4], [8, 5], [9, 7]]


@fill_doc(PARAMETERS, SEQUENCE_RETURNS, layout=CIFAR10_LAYOUT, n_tasks=4, shape=COLOUR)
def load_di_split_cifar8(root=None, *, download=False, random_state=PAPER_SEED):
    """DI Split CIFAR-8: vehicle (0) vs animal (1), 4 tasks.

    CIFAR-10 without bird and frog leaves 4 vehicles and 4 animals; each
    task pairs a vehicle with an animal, both taken in label order:
    (airplane, cat), (automobile, deer), (ship, dog), (truck, horse), as in
    the paper's code, which also labels vehicles 0 and animals 1. The
    validation split is drawn from all of CIFAR-10's training split before
    bird and frog are dropped.
    {sections}
    Examples
    --------
    >>> from skcl.datasets import load_di_split_cifar8  # doctest: +SKIP
    >>> data = load_di_split_cifar8()  # doctest: +SKIP
    >>> len(data.train), data.target_names.tolist()  # doctest: +SKIP
    (4, ['vehicle', 'animal'])
    """
    parts, names = official_splits(read_cifar_dataset, "CIFAR-10", root, download, random_state)
    mapping = {vehicle: 0 for vehicle, _ in _CIFAR8_PAIRS}
    mapping.update({animal: 1 for _, animal in _CIFAR8_PAIRS})
    return sequence_bunch(
        "DI Split CIFAR-8", parts, _CIFAR8_PAIRS, target_names=["vehicle", "animal"],
        group_names=names, classes=[0, 1], mapping=mapping, summary=OFFICIAL_SUMMARY,
        random_state=random_state,
    )


@fill_doc(ISIC_PARAMETERS, SEQUENCE_RETURNS, folder="HAM10000", n_tasks=4, shape=COLOUR)
def load_ci_split_ham8(root=None, *, download=False, random_state=PAPER_SEED, cache=False):
    """CI Split HAM-8: 4 tasks of 2 skin conditions from HAM10000.

    The ISIC archive's HAM10000 collection has 8 diagnoses, labelled 0..7
    in the paper code's order: actinic keratosis, basal cell carcinoma,
    dermatofibroma, melanoma, nevus, pigmented benign keratosis, squamous
    cell carcinoma, vascular lesion; the tasks are (0, 1), (2, 3), (4, 5),
    (6, 7).
    {sections}
    Examples
    --------
    >>> from skcl.datasets import load_ci_split_ham8  # doctest: +SKIP
    >>> data = load_ci_split_ham8(cache=True)  # reads $SKCL_DATA_DIR/HAM10000  # doctest: +SKIP
    >>> [sorted(set(y.tolist())) for _, y in data.train]  # doctest: +SKIP
    [[0, 1], [2, 3], [4, 5], [6, 7]]
    >>> data.train[0][0].shape[1:]  # doctest: +SKIP
    (32, 32, 3)
    """
    classes = np.array(_HAM8_CLASSES)
    parts = isic_splits(
        "HAM10000", classes, np.arange(8), root, download, random_state, cache
    )
    return sequence_bunch(
        "CI Split HAM-8", parts, [[0, 1], [2, 3], [4, 5], [6, 7]],
        target_names=classes, group_names=classes, classes=range(8),
        summary=ISIC_SUMMARY, random_state=random_state,
    )


# Indices into the HAM-8 classes: (benign, malignant) per task.
_HAM6_PAIRS = [[5, 6], [2, 1], [4, 3]]


@fill_doc(ISIC_PARAMETERS, SEQUENCE_RETURNS, folder="HAM10000", n_tasks=3, shape=COLOUR)
def load_di_split_ham6(root=None, *, download=False, random_state=PAPER_SEED, cache=False):
    """DI Split HAM-6: benign (0) vs malignant (1), 3 tasks from HAM10000.

    HAM-8 without vascular lesion (benign) and actinic keratosis
    (indeterminate) leaves 3 benign and 3 malignant conditions; as in the
    paper's code the tasks are (pigmented benign keratosis, squamous cell
    carcinoma), (dermatofibroma, basal cell carcinoma), (nevus, melanoma),
    benign labelled 0 and malignant 1. The splits are those of
    :func:`load_ci_split_ham8` (drawn over all 8 classes), restricted to
    these 6.
    {sections}
    Examples
    --------
    >>> from skcl.datasets import load_di_split_ham6  # doctest: +SKIP
    >>> data = load_di_split_ham6(cache=True)  # doctest: +SKIP
    >>> len(data.train), data.target_names.tolist()  # doctest: +SKIP
    (3, ['benign', 'malignant'])
    """
    classes = np.array(_HAM8_CLASSES)
    used = np.concatenate(_HAM6_PAIRS)
    parts = isic_splits("HAM10000", classes, used, root, download, random_state, cache)
    mapping = {benign: 0 for benign, _ in _HAM6_PAIRS}
    mapping.update({malignant: 1 for _, malignant in _HAM6_PAIRS})
    return sequence_bunch(
        "DI Split HAM-6", parts, _HAM6_PAIRS, target_names=["benign", "malignant"],
        group_names=classes, classes=[0, 1], mapping=mapping, summary=ISIC_SUMMARY,
        random_state=random_state,
    )
