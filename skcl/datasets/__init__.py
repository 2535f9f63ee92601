"""Task sequences: the paper's benchmarks and helpers to build your own.

Every loader returns a :class:`~sklearn.utils.Bunch` whose ``train``,
``validation`` and ``test`` entries are task sequences: lists of
``(X, y)`` pairs to learn one after another with ``partial_fit``.
Pre-training tasks (``load_mnist``, ``load_emnist_letters``, ...) return
one ``(X, y)`` pair per split instead.

The image loaders read one data folder, :func:`get_data_home` (argument
``root``, else the environment variable ``SKCL_DATA_DIR``, else
``~/skcl_data``), laid out as torchvision lays it out.
"""

from ._classical import (
    load_ci_split_2d_iris,
    load_ci_split_digits,
    load_ci_split_iris,
    load_ci_split_wine,
    load_di_split_digits,
)
from ._home import get_data_home
from ._image_pretraining import (
    load_bcn12,
    load_cifar100,
    load_emnist_letters,
    load_fashion_mnist,
    load_mnist,
)
from ._image_sequences import (
    load_ci_split_cifar10,
    load_ci_split_fashion_mnist,
    load_ci_split_ham8,
    load_ci_split_mnist,
    load_di_split_cifar8,
    load_di_split_fashion_mnist,
    load_di_split_ham6,
    load_di_split_mnist,
)
from ._scenario_sequences import load_permuted_mnist, load_rotated_mnist, load_split_mnist
from ._split import (
    PAPER_SEED,
    make_task_sequences,
    relabel,
    split_by_class,
    train_validation_test_split,
)

__all__ = [
    "PAPER_SEED",
    "load_ci_split_iris",
    "load_ci_split_2d_iris",
    "load_ci_split_wine",
    "load_ci_split_digits",
    "load_di_split_digits",
    "get_data_home",
    "load_ci_split_mnist",
    "load_di_split_mnist",
    "load_split_mnist",
    "load_permuted_mnist",
    "load_rotated_mnist",
    "load_ci_split_fashion_mnist",
    "load_di_split_fashion_mnist",
    "load_ci_split_cifar10",
    "load_di_split_cifar8",
    "load_ci_split_ham8",
    "load_di_split_ham6",
    "load_mnist",
    "load_fashion_mnist",
    "load_emnist_letters",
    "load_cifar100",
    "load_bcn12",
    "make_task_sequences",
    "relabel",
    "split_by_class",
    "train_validation_test_split",
]
