"""The paper's image task sequences and pre-training tasks.

Files are read natively (numpy, and pillow for ISIC) from one data folder,
:func:`get_data_home`, laid out as torchvision lays it out, so the folder
can be shared with ``torchvision.datasets``. torchvision is needed only to
download (``download=True``); ISIC collections are downloaded by hand.

Splits follow the paper (appendix A): for datasets that come with an
official test split (MNIST, Fashion-MNIST, EMNIST, CIFAR), validation is a
stratified 20 % of the official training split and the test split is the
official one; the ISIC collections have none, so they are split like Iris:
a stratified 20 % test split, then 20 % of the rest for validation. Task
sequences are then cut by class groups (:func:`split_by_class`) and, for
domain-incremental ones, relabelled (:func:`relabel`).

Images are uint8: (n, 28, 28) for the grayscale datasets and
(n, 32, 32, 3), channels last, for the colour ones; labels are int64.
"""

import numpy as np

from ._image_bunches import pretraining_bunch, sequence_bunch
from ._image_docs import (
    CIFAR10_LAYOUT,
    COLOUR,
    FASHION_LAYOUT,
    GRAY,
    ISIC_PARAMETERS,
    MNIST_LAYOUT,
    PARAMETERS,
    PRETRAINING_RETURNS,
    SEQUENCE_RETURNS,
    fill_doc,
)
from ._image_readers import read_cifar_dataset, read_idx_dataset
from ._image_splits import ISIC_SUMMARY, OFFICIAL_SUMMARY, isic_splits, official_splits
from ._split import PAPER_SEED

__all__ = [
    "load_mnist",
    "load_fashion_mnist",
    "load_emnist_letters",
    "load_cifar100",
    "load_bcn12",
    "load_ci_split_mnist",
    "load_di_split_mnist",
    "load_ci_split_fashion_mnist",
    "load_di_split_fashion_mnist",
    "load_ci_split_cifar10",
    "load_di_split_cifar8",
    "load_ci_split_ham8",
    "load_di_split_ham6",
]

_PAIRS = [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9]]


# ---------------------------------------------------------------------------
# ISIC collections (HAM10000, BCN20000): a folder of JPEGs and metadata.csv.

_HAM8_CLASSES = [
    "actinic keratosis", "basal cell carcinoma", "dermatofibroma", "melanoma",
    "nevus", "pigmented benign keratosis", "squamous cell carcinoma",
    "vascular lesion",
]
_BCN12_CLASSES = [
    "actinic keratosis", "basal cell carcinoma", "dermatofibroma", "melanoma",
    "melanoma metastasis", "nevus", "other", "scar", "seborrheic keratosis",
    "solar lentigo", "squamous cell carcinoma", "vascular lesion",
]

# ---------------------------------------------------------------------------
# Pre-training tasks.


@fill_doc(PARAMETERS, PRETRAINING_RETURNS, layout=MNIST_LAYOUT, shape="(n, 28, 28)", last=9)
def load_mnist(root=None, *, download=False, random_state=PAPER_SEED):
    """MNIST as one 10-class task (offline stand-in for pre-training).

    Handwritten digits, 60,000 training and 10,000 test images of 28×28.
    Used to pre-train a feature extractor for Split Fashion-MNIST, standing
    in for the paper's pairing of a similar pre-training task.
    {sections}
    Examples
    --------
    >>> from skcl.datasets import load_mnist  # doctest: +SKIP
    >>> data = load_mnist()  # reads $SKCL_DATA_DIR/MNIST/raw  # doctest: +SKIP
    >>> data.train[0].shape, data.validation[0].shape, data.test[0].shape  # doctest: +SKIP
    ((48000, 28, 28), (12000, 28, 28), (10000, 28, 28))
    """
    parts, names = official_splits(read_idx_dataset, "MNIST", root, download, random_state)
    return pretraining_bunch("MNIST", parts, names, OFFICIAL_SUMMARY, random_state)


@fill_doc(PARAMETERS, PRETRAINING_RETURNS, layout=FASHION_LAYOUT, shape="(n, 28, 28)", last=9)
def load_fashion_mnist(root=None, *, download=False, random_state=PAPER_SEED):
    """Fashion-MNIST as one 10-class task (offline stand-in for pre-training).

    Grayscale 28×28 images of clothing, 60,000 training and 10,000 test.
    Used here to pre-train a feature extractor for Split MNIST when EMNIST
    Letters (the paper's choice) is not available.
    {sections}
    Examples
    --------
    >>> from skcl.datasets import load_fashion_mnist  # doctest: +SKIP
    >>> data = load_fashion_mnist()  # reads $SKCL_DATA_DIR/FashionMNIST/raw  # doctest: +SKIP
    >>> data.train[0].shape, data.validation[0].shape, data.test[0].shape  # doctest: +SKIP
    ((48000, 28, 28), (12000, 28, 28), (10000, 28, 28))
    """
    parts, names = official_splits(
        read_idx_dataset, "Fashion-MNIST", root, download, random_state
    )
    return pretraining_bunch("Fashion-MNIST", parts, names, OFFICIAL_SUMMARY, random_state)


@fill_doc(
    PARAMETERS, PRETRAINING_RETURNS, shape="(n, 28, 28)", last=25,
    layout="``EMNIST/raw/emnist-letters-{train,test}-{images-idx3,labels-idx1}-ubyte`` (or ``.gz``)",
)
def load_emnist_letters(root=None, *, download=False, random_state=PAPER_SEED):
    """EMNIST Letters: the paper's pre-training task for Split MNIST.

    26 classes of handwritten letters (upper and lower case merged),
    124,800 training and 20,800 test images of 28×28. The files number the
    letters 1..26; here ``y`` is 0..25 (``target_names`` ``'a'`` to ``'z'``),
    as in the paper's code. The files store each image transposed; here the
    images are transposed back so letters stand upright like MNIST digits
    (the paper's code used them as stored).
    {sections}
    Examples
    --------
    >>> from skcl.datasets import load_emnist_letters  # doctest: +SKIP
    >>> data = load_emnist_letters()  # reads $SKCL_DATA_DIR/EMNIST/raw  # doctest: +SKIP
    >>> data.train[0].shape, data.test[0].shape  # doctest: +SKIP
    ((99840, 28, 28), (20800, 28, 28))
    >>> data.target_names[:3].tolist()  # doctest: +SKIP
    ['a', 'b', 'c']
    """
    parts, names = official_splits(
        read_idx_dataset, "EMNIST Letters", root, download, random_state
    )
    return pretraining_bunch("EMNIST Letters", parts, names, OFFICIAL_SUMMARY, random_state)


@fill_doc(
    PARAMETERS, PRETRAINING_RETURNS, shape="(n, 32, 32, 3)", last=99,
    layout="``cifar-100-python/{train, test, meta}``",
)
def load_cifar100(root=None, *, download=False, random_state=PAPER_SEED):
    """CIFAR-100: the paper's pre-training task for Split CIFAR-10 / CIFAR-8.

    100 fine classes of natural objects, 50,000 training and 10,000 test
    colour images of 32×32, none of whose classes is in CIFAR-10. The
    files are CIFAR's pickled batches, read by a restricted unpickler
    (see the module ``skcl.datasets._cifar``): load only official files.
    {sections}
    Examples
    --------
    >>> from skcl.datasets import load_cifar100  # doctest: +SKIP
    >>> data = load_cifar100()  # reads $SKCL_DATA_DIR/cifar-100-python  # doctest: +SKIP
    >>> data.train[0].shape, data.test[0].shape  # doctest: +SKIP
    ((40000, 32, 32, 3), (10000, 32, 32, 3))
    """
    parts, names = official_splits(read_cifar_dataset, "CIFAR-100", root, download, random_state)
    return pretraining_bunch("CIFAR-100", parts, names, OFFICIAL_SUMMARY, random_state)


@fill_doc(ISIC_PARAMETERS, folder="BCN20000")
def load_bcn12(root=None, *, download=False, random_state=PAPER_SEED, cache=False):
    """BCN-12: the paper's pre-training task for Split HAM-8 / HAM-6.

    Dermatoscopic images of the BCN20000 collection (Hospital Clínic de
    Barcelona) in 12 diagnoses: actinic keratosis, basal cell carcinoma,
    dermatofibroma, melanoma, melanoma metastasis, nevus, other, scar,
    seborrheic keratosis, solar lentigo, squamous cell carcinoma and
    vascular lesion (labels 0..11 in that order, the paper code's). Strongly
    imbalanced, hence the class weights of the paper's weighted cross
    entropy (appendix D).
    {sections}
    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``train``, ``validation``, ``test``: one ``(X, y)`` pair each, ``X``
        uint8 of shape (n, 32, 32, 3), ``y`` int64 in 0..11; ``classes``,
        ``target_names``, ``name``, ``DESCR`` and ``class_weight``: a dict
        ``{class: m / n_class}`` from the training split, with ``n_class``
        the class's number of training samples and ``m`` the smallest of
        them (pass it as sample weights when pre-training).

    Examples
    --------
    >>> from skcl.datasets import load_bcn12  # doctest: +SKIP
    >>> data = load_bcn12(cache=True)  # reads $SKCL_DATA_DIR/BCN20000  # doctest: +SKIP
    >>> data.train[0].shape[1:], len(data.classes)  # doctest: +SKIP
    ((32, 32, 3), 12)
    >>> min(data.class_weight.values()) > 0  # doctest: +SKIP
    True
    """
    classes = np.array(_BCN12_CLASSES)
    parts = isic_splits(
        "BCN20000", classes, np.arange(len(classes)), root, download, random_state, cache
    )
    counts = np.bincount(parts[0][1], minlength=len(classes))
    class_weight = {int(c): float(counts.min() / n) for c, n in enumerate(counts)}
    return pretraining_bunch(
        "BCN-12", parts, classes, ISIC_SUMMARY, random_state, class_weight=class_weight
    )


# ---------------------------------------------------------------------------
# Task sequences.


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
