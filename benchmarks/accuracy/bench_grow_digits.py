"""Growing classes vs declaring them, AQC over λ, on scikit-learn's digits.

A second, bundled check of ``grow_classes=True`` beside
``bench_grow_classes.py``'s reduced CI Split MNIST: scikit-learn's 8×8
digits (1,797 images, pixels scaled to [0, 1], a stratified 70/30 split
with ``random_state=0``) as CI Split digits, five tasks of two digits,
softmax regression. For each λ of the grid, the final average test
accuracy (%) of AQC with every class declared on the first call against
AQC with the classes grown task by task. 50 epochs, minibatches of 32,
learning rate 0.01, seed 0. No validation split: the table shows the
whole λ curve, and its best is each mode's best over λ.

    PYTHONPATH=. python benchmarks/accuracy/bench_grow_digits.py [--alphas 1 3 10 30 100]
"""

import argparse

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

from skcl import AQCClassifier

GROUPS = [(0, 1), (2, 3), (4, 5), (6, 7), (8, 9)]


def ci_split_digits():
    X, y = load_digits(return_X_y=True)
    X = (X / 16.0).astype(np.float32)
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.3, random_state=0, stratify=y)
    split = lambda X, y: [(X[np.isin(y, g)], y[np.isin(y, g)]) for g in GROUPS]  # noqa: E731
    return split(X_train, y_train), split(X_test, y_test)


def final_accuracy(alpha, grow, train, test):
    clf = AQCClassifier(alpha=alpha, n_epochs=50, batch_size=32, learning_rate=0.01,
                        grow_classes=grow, random_state=0)
    for X, y in train:
        clf.partial_fit(X, y, classes=None if grow else np.arange(10))
    return 100 * np.mean([clf.score(X, y) for X, y in test])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--alphas", type=float, nargs="+", default=[1, 3, 10, 30, 100])
    args = parser.parse_args()
    train, test = ci_split_digits()
    print(f"{'λ':>6} {'declared':>9} {'grown':>7}")
    best = {False: 0.0, True: 0.0}
    for alpha in args.alphas:
        acc = {grow: final_accuracy(alpha, grow, train, test) for grow in (False, True)}
        best = {grow: max(best[grow], acc[grow]) for grow in acc}
        print(f"{alpha:6g} {acc[False]:9.2f} {acc[True]:7.2f}", flush=True)
    print(f"{'best':>6} {best[False]:9.2f} {best[True]:7.2f}")


if __name__ == "__main__":
    main()
