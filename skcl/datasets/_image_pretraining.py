"""The image pre-training tasks: one task of all classes per dataset.

The paper pre-trains a feature extractor on a similar dataset before each
image task sequence: EMNIST Letters before Split MNIST, CIFAR-100 before
Split CIFAR-10 / CIFAR-8, BCN-12 before Split HAM-8 / HAM-6. MNIST and
Fashion-MNIST stand in for one another when EMNIST is not at hand. Each
loader returns one ``(X, y)`` pair per split, with the splits of
:mod:`._image_splits`; images are uint8, (n, 28, 28) for the grayscale
datasets and (n, 32, 32, 3), channels last, for the colour ones; labels
are int64.
"""

import numpy as np

from ._image_bunches import pretraining_bunch
from ._image_docs import (
    FASHION_LAYOUT,
    ISIC_PARAMETERS,
    MNIST_LAYOUT,
    PARAMETERS,
    PRETRAINING_RETURNS,
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
]

# BCN20000's diagnoses, in the paper code's label order.
_BCN12_CLASSES = [
    "actinic keratosis", "basal cell carcinoma", "dermatofibroma", "melanoma",
    "melanoma metastasis", "nevus", "other", "scar", "seborrheic keratosis",
    "solar lentigo", "squamous cell carcinoma", "vascular lesion",
]


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
    layout="``EMNIST/raw/emnist-letters-{train,test}-{images-idx3,labels-idx1}-ubyte``"
           " (or ``.gz``)",
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

