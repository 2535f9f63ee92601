"""The exact family and scikit-learn's incremental estimators on CI Split Iris and Wine.

Every row learns the training sequence one task at a time with
``partial_fit``, at its defaults, with no validation sequence; the paper's
methods run at their defaults too, with the column's training settings
(softmax regression, the paper's learning rate, epochs and batch size).
Prints the test final average accuracy (%), mean ± sample sd over seeds
(the seed draws the random features, SGD's order, and the
paper methods' initialisation and minibatches), as the markdown table of
the docs' "When the recursion is exact" page, with the versions that
produced it.

With ``--hyperparameters`` it prints instead the comparison that chose
the exact family's default rules: the ridge strength by GCV and the
covariance shrinkage by OAS (every row, nothing random) against the
held-out rule (``"heldout"``, mean ± sd over the seeds that draw its rows),
the Gaussian's ``components="auto"`` against one component per class, and
scikit-learn's ``RidgeClassifierCV`` and ``LinearDiscriminantAnalysis``
(``lsqr``, ``shrinkage="auto"``) fitted on all the training rows (‡, the
joint bound of those models), on CI Split Iris, Wine and digits and DI
Split digits (``load_ci_split_digits`` / ``load_di_split_digits``: the
bundled digits, pixels / 16, the paper's stratified splits; tasks of two
digits, DI labels their parity).

Run::

    PYTHONPATH=. python benchmarks/accuracy/bench_exact_classical.py --seeds 5
    PYTHONPATH=. python benchmarks/accuracy/bench_exact_classical.py --hyperparameters --seeds 5
"""

from types import SimpleNamespace

import numpy as np
from sklearn.base import clone
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.linear_model import RidgeClassifierCV, SGDClassifier
from sklearn.naive_bayes import GaussianNB
from sklearn.preprocessing import StandardScaler

from benchmarks import _harness as harness
from skcl import GaussianDiscriminantClassifier, LeastSquaresClassifier
from skcl import reproduce as rp
from skcl._exact.least_squares import RELATIVE_ALPHA_GRID
from skcl.datasets import load_ci_split_digits, load_di_split_digits
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
    # The paper's methods; the registry's other rows (the exact family,
    # scikit-learn's baselines) are above or take other settings.
    for method in (m for m in rp.METHODS if m.origin == "paper"):
        cls = method.resolve()
        params = cls().get_params()
        # Some registered baselines (GaussianNB) draw nothing: no random_state.
        given = {**settings, "random_state": seed}
        out[f"{method.name}, defaults"] = (
            "paper", cls(**{k: v for k, v in given.items() if k in params}), [])
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


def hyperparameters(seeds):
    """Name → column → accuracies: the default rules against the held-out rule and sklearn."""
    columns = {}
    for key, label in [("ci-split-iris", "CI Split Iris"), ("ci-split-wine", "CI Split Wine")]:
        data = rp.SEQUENCES[key].loader()
        columns[label] = (list(data.train), list(data.test), np.asarray(data.classes))
    for label, load in [("CI Split digits", load_ci_split_digits),
                        ("DI Split digits", load_di_split_digits)]:
        data = load()
        columns[label] = (list(data.train), list(data.test), np.asarray(data.classes))
    G, L = GaussianDiscriminantClassifier, LeastSquaresClassifier
    def features(seed):
        return [StandardScaler(), RandomFeatures(2000, random_state=seed)]

    rows = {
        "Least squares, α by GCV (default)": lambda seed: L(random_state=seed),
        "Least squares, α held out": lambda seed: L("heldout", random_state=seed),
        "Least squares on 2,000 random ReLU features, α by GCV (default)":
            lambda seed: (L(random_state=seed), features(seed)),
        "Least squares on 2,000 random ReLU features, α held out":
            lambda seed: (L("heldout", random_state=seed), features(seed)),
        "Gaussian, s by OAS, components auto (defaults)": lambda seed: G(random_state=seed),
        "Gaussian, s by OAS, components per class": lambda seed: G(components="class"),
        "Gaussian, s held out, components per class (old defaults)":
            lambda seed: G("heldout", components="class", random_state=seed),
        "Gaussian, s held out, components per (task, class)":
            lambda seed: G("heldout", components="task_class", random_state=seed),
    }
    table = {}
    for label, (train, test, classes) in columns.items():
        for name, make in rows.items():
            for seed in range(seeds):
                made = make(seed)
                clf, transformers = made if isinstance(made, tuple) else (made, [])
                sequence = SimpleNamespace(train=train, test=test, classes=classes)
                table.setdefault(name, {}).setdefault(label, []).append(
                    run(clf, transformers, sequence))
        X = np.concatenate([X for X, _ in train])
        y = np.concatenate([y for _, y in train])
        grid = np.asarray(RELATIVE_ALPHA_GRID) * ((X - X.mean(0)) ** 2).sum() / X.shape[1]
        for name, model in [("‡ RidgeClassifierCV (leave-one-out, same grid)",
                             RidgeClassifierCV(alphas=grid)),
                            ("‡ LinearDiscriminantAnalysis(lsqr, shrinkage=auto)",
                             LinearDiscriminantAnalysis(solver="lsqr", shrinkage="auto"))]:
            table.setdefault(name, {})[label] = [
                100 * final_average_accuracy(model.fit(X, y), test)]
    return table, list(columns)


def _cells(values):
    return f"{np.mean(values):.1f} ± {np.std(values, ddof=1) if len(values) > 1 else 0:.1f}"


def main():
    parser = harness.parser(__doc__)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--no-paper", action="store_true", help="leave out the paper's methods")
    parser.add_argument("--hyperparameters", action="store_true",
                        help="the comparison of the exact family's rules instead")
    args = parser.parse_args()
    print(harness.machine_line())
    if args.hyperparameters:
        table, columns = hyperparameters(args.seeds)
        out = harness.Table({"rule": "", **{c: "" for c in columns}}, args.csv, markdown=True,
                            title=f"Test final average accuracy (%), mean ± sd over seeds "
                                  f"0–{args.seeds - 1} (only the held-out rule depends on "
                                  f"them).\n")
        for name, cells in table.items():
            out.row(name, *(_cells(cells[c]) for c in columns))
        out.close()
        return

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
    out = harness.Table({"method": "", "origin": "", **{c: "" for c in columns.values()}},
                        args.csv, markdown=True,
                        title=f"Test final average accuracy (%), mean ± sd over seeds "
                              f"0–{args.seeds - 1}, at defaults, no validation sequence.\n")
    for (name, origin), cells in table.items():
        out.row(name, origin, *(_cells(cells[label]) for label in columns.values()))
    out.close()


if __name__ == "__main__":
    main()
