"""Growing classes vs declaring them, AQC over λ, on scikit-learn's digits.

A second, bundled check of ``grow_classes=True`` beside
``bench_grow_classes.py``'s reduced CI Split MNIST: CI Split digits
(``load_ci_split_digits``: the bundled 8×8 digits, pixels / 16, the
paper's stratified splits), five tasks of two digits,
softmax regression. For each λ of the grid, the final average test
accuracy (%) of AQC with every class declared on the first call against
AQC with the classes grown task by task. 50 epochs, minibatches of 32,
learning rate 0.01, seed 0. No validation split: the table shows the
whole λ curve, and its best is each mode's best over λ.

    PYTHONPATH=. python benchmarks/accuracy/bench_grow_digits.py [--alphas 1 3 10 30 100]
"""

import numpy as np

from benchmarks import _harness as harness
from skcl import AQCClassifier
from skcl.datasets import load_ci_split_digits


def final_accuracy(alpha, grow, train, test):
    clf = AQCClassifier(alpha=alpha, n_epochs=50, batch_size=32, learning_rate=0.01,
                        grow_classes=grow, random_state=0)
    for X, y in train:
        clf.partial_fit(X, y, classes=None if grow else np.arange(10))
    return 100 * np.mean([clf.score(X, y) for X, y in test])


def main():
    parser = harness.parser(__doc__)
    parser.add_argument("--alphas", type=float, nargs="+", default=[1, 3, 10, 30, 100])
    args = parser.parse_args()
    print(harness.machine_line())
    data = load_ci_split_digits()
    table = harness.Table({"λ": ">6g", "declared": ">9.2f", "grown": ">7.2f"}, args.csv)
    best = {False: 0.0, True: 0.0}
    for alpha in args.alphas:
        acc = {grow: final_accuracy(alpha, grow, data.train, data.test) for grow in (False, True)}
        best = {grow: max(best[grow], acc[grow]) for grow in acc}
        table.row(alpha, acc[False], acc[True])
    table.row("best", best[False], best[True])
    table.close()

if __name__ == "__main__":
    main()
