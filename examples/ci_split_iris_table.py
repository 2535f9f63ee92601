"""
CI Split Iris: the paper's Table I(a), softmax regression column
=================================================================

Every method learns the three one-species tasks of CI Split Iris in
order. λ (and SI's ξ) are chosen from the paper's grids (appendix D) by the
final average accuracy on the *validation* sequence; the table shows the
*test* final average accuracy of that choice next to the paper's.
"""

import itertools
import time

import numpy as np

from skcl import AQCClassifier, EWCClassifier, FineTuningClassifier, JointClassifier, SIClassifier
from skcl.datasets import load_ci_split_iris
from skcl.metrics import final_average_accuracy

SETTINGS = dict(n_epochs=100, batch_size=16, learning_rate=0.1, random_state=1337)
LAMBDAS = [1, 10, 100, 1000, 10000]
METHODS = [
    # name, estimator, grid, the paper's Table I(a) number (%)
    ("Joint MAP training", JointClassifier, {}, 96.67),
    ("Fine-tuning", FineTuningClassifier, {}, 33.33),
    ("EWC", EWCClassifier, {"alpha": LAMBDAS}, 63.33),
    ("SI", SIClassifier, {"alpha": LAMBDAS, "damping": [0.1, 1.0, 10.0]}, 33.33),
    ("AQC", AQCClassifier, {"alpha": LAMBDAS}, 66.67),
]


def learn(estimator, tasks, classes):
    for X, y in tasks:
        estimator.partial_fit(X, y, classes=classes)
    return estimator


def main():
    data = load_ci_split_iris()
    print(f"{data.name}, softmax regression, paper settings {SETTINGS}\n")
    print(f"{'method':<20} {'chosen':<28} {'val %':>6} {'test %':>7} {'paper %':>8} {'time s':>7}")
    for name, cls, grid, paper in METHODS:
        start = time.perf_counter()
        candidates = [dict(zip(grid, values)) for values in itertools.product(*grid.values())]
        fitted = [learn(cls(**params, **SETTINGS), data.train, data.classes)
                  for params in candidates]
        scores = [final_average_accuracy(clf, data.validation) for clf in fitted]
        best = int(np.argmax(scores))  # first of the ties, in grid order
        test = final_average_accuracy(fitted[best], data.test)
        chosen = ", ".join(f"{k}={v}" for k, v in candidates[best].items()) or "-"
        elapsed = time.perf_counter() - start
        print(f"{name:<20} {chosen:<28} {100 * scores[best]:6.2f} {100 * test:7.2f} "
              f"{paper:8.2f} {elapsed:7.2f}")


if __name__ == "__main__":
    main()
