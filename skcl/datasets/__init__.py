"""Task sequences: the paper's benchmarks and helpers to build your own.

Every loader returns a :class:`~sklearn.utils.Bunch` whose ``train``,
``validation`` and ``test`` entries are task sequences: lists of
``(X, y)`` pairs to learn one after another with ``partial_fit``.
"""

from ._classical import load_ci_split_2d_iris, load_ci_split_iris, load_ci_split_wine
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
    "make_task_sequences",
    "relabel",
    "split_by_class",
    "train_validation_test_split",
]
