"""The exact family and scikit-learn's incremental estimators on CI Split Iris and Wine.

Every row learns the training sequence one task at a time with
``partial_fit``, at its defaults, with no validation sequence; the paper's
methods run at their defaults too, with the column's training settings
(softmax regression, the paper's learning rate, epochs and batch size).
Prints the test final average accuracy (%), mean ± sample sd over seeds
(the seed draws the exact family's held-out rows, SGD's order, and the
paper methods' initialisation and minibatches), as the markdown table of
the docs' "When the recursion is exact" page, with the versions that
produced it.

Run::

    PYTHONPATH=. python benchmarks/bench_exact_classical.py --seeds 5
"""

import argparse
import os
import platform

import numpy as np
from sklearn.base import clone
from sklearn.linear_model import SGDClassifier
from sklearn.naive_bayes import GaussianNB
from sklearn.preprocessing import StandardScaler

from skcl import GaussianDiscriminantClassifier, LeastSquaresClassifier
from skcl import reproduce as rp
from skcl.feature_extraction import RandomFeatures
from skcl.metrics import final_average_accuracy


def rows(seed, settings):
    """Name → (origin, estimator, transformers fitted on the first task)."""
    out = {
        "Gaussian classes, shared covariance": (
            "skcl", GaussianDiscriminantClassifier(random_state=seed), []),
        "Gaussian classes, per-class covariance": (
            "skcl", GaussianDiscriminantClassifier(covariance="per_class", random_state=seed), []),
        "Least squares": ("skcl", LeastSquaresClassifier(random_state=seed), []),
        "Least squares, 2,000 random ReLU features": (
            "skcl", LeastSquaresClassifier(random_state=seed),
            [StandardScaler(), RandomFeatures(2000, random_state=seed)]),
        "GaussianNB": ("scikit-learn", GaussianNB(), []),
        "SGDClassifier(log_loss)": (
            "scikit-learn", SGDClassifier(loss="log_loss", random_state=seed), []),
    }
    for method in rp.METHODS:
        cls = method.resolve()
        params = cls().get_params()
        out[f"{method.name}, defaults"] = (
            "paper", cls(random_state=seed, **{k: v for k, v in settings.items() if k in params}),
            [])
    return out


def run(estimator, transformers, data):
    estimator = clone(estimator)
    Z, fitted = data.train[0][0], []
    for step in transformers:  # fitted on the first task, then frozen
        step = clone(step).fit(Z)
        Z = step.transform(Z)
        fitted.append(step)

    def prepare(X):
        for step in fitted:
            X = step.transform(X)
        return X

    for X, y in data.train:
        estimator.partial_fit(prepare(X), y, classes=data.classes)
    return 100 * final_average_accuracy(estimator, [(prepare(X), y) for X, y in data.test])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--no-paper", action="store_true", help="leave out the paper's methods")
    args = parser.parse_args()
    import jax
    import sklearn

    columns = {"ci-split-iris": "CI Split Iris", "ci-split-wine": "CI Split Wine"}
    table = {}
    for key, label in columns.items():
        seq = rp.SEQUENCES[key]
        data = seq.loader()
        for seed in range(args.seeds):
            for name, (origin, estimator, transformers) in rows(seed, seq.settings("sr")).items():
                if args.no_paper and origin == "paper":
                    continue
                table.setdefault((name, origin), {}).setdefault(label, []).append(
                    run(estimator, transformers, data))
    print(f"Test final average accuracy (%), mean ± sd over seeds 0–{args.seeds - 1}, at "
          f"defaults, no validation sequence. skcl with numpy {np.__version__}, scikit-learn "
          f"{sklearn.__version__}, jax {jax.__version__}, Python {platform.python_version()}, "
          f"{platform.machine()}, {os.cpu_count()} cores.\n")
    print("| method | origin | " + " | ".join(columns.values()) + " |")
    print("|---|---|" + "---|" * len(columns))
    for (name, origin), cells in table.items():
        shown = [f"{np.mean(v):.1f} ± {np.std(v, ddof=1) if len(v) > 1 else 0:.1f}"
                 for v in (cells[label] for label in columns.values())]
        print(f"| {name} | {origin} | " + " | ".join(shown) + " |")


if __name__ == "__main__":
    main()
