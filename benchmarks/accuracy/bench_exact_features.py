"""The exact family against the paper's methods on frozen image features.

Split MNIST and Split Fashion-MNIST (class- and domain-incremental), each
learned on the 64 features of a ``cnn4`` pre-trained (appendix C: 20
epochs, minibatches of 64, learning rate 0.01) on the other dataset and
frozen: Fashion-MNIST stands in for EMNIST Letters, the paper's
pre-training task for Split MNIST, which is not available offline.

Rows, each learning the training sequence one task at a time:

* the exact family at its defaults, no validation sequence (skcl, not in
  the paper): Gaussian classes with a shared covariance, one Gaussian per
  (task, class), least squares on the features and on 2,000 random ReLU
  features of them (standardised on the first task, then frozen);
* scikit-learn's incremental estimators by ``partial_fit``, at their
  defaults: ``GaussianNB`` and ``SGDClassifier(loss="log_loss")``;
* the paper's methods at their defaults (the column's training settings,
  the estimator's default λ, ξ, r), no validation sequence;
* the paper's methods with the paper's protocol (``skcl.reproduce``'s
  ``run_column``: appendix D's grid chosen on the validation sequence).

Prints the test final average accuracy (%) and time of each; ``--output``
writes them as JSON with the versions and machine that produced them.

Run (MNIST and Fashion-MNIST in torchvision's layout under --data-dir;
pre-trained weights cached in --cache and reused)::

    PYTHONPATH=. python benchmarks/accuracy/bench_exact_features.py --data-dir ../shared/data \\
        --cache weights --output exact_features.json

The tuned protocol with NC's 15 candidates takes most of an hour on two CPU
cores per column; ``--no-tuned`` leaves it out, ``--columns`` picks
columns.
"""

import json

from sklearn.base import clone
from sklearn.linear_model import SGDClassifier
from sklearn.naive_bayes import GaussianNB
from sklearn.preprocessing import StandardScaler

from benchmarks import _harness as harness
from skcl import GaussianDiscriminantClassifier, LeastSquaresClassifier
from skcl import reproduce as rp
from skcl.feature_extraction import RandomFeatures
from skcl.metrics import final_average_accuracy

#: (sequence, pre-training task): each image sequence on the other dataset's features.
COLUMNS = {
    "ci-mnist": ("ci-split-mnist", "fashion-mnist"),
    "di-mnist": ("di-split-mnist", "fashion-mnist"),
    "ci-fashion": ("ci-split-fashion-mnist", "mnist"),
    "di-fashion": ("di-split-fashion-mnist", "mnist"),
}


def baselines(seed):
    """Name → (origin, estimator, first-task transformer or None)."""
    scaled_features = [StandardScaler(), RandomFeatures(2000, random_state=seed)]
    return {
        "Gaussian classes, shared covariance": (
            "skcl", GaussianDiscriminantClassifier(random_state=seed), None),
        "Gaussian per (task, class)": (
            "skcl", GaussianDiscriminantClassifier(components="task_class", random_state=seed),
            None),
        "Gaussian, held-out shrinkage (former default)": (
            "skcl", GaussianDiscriminantClassifier(shrinkage="heldout", components="class",
                                                   random_state=seed), None),
        "Gaussian per (task, class), held-out shrinkage": (
            "skcl", GaussianDiscriminantClassifier(shrinkage="heldout", components="task_class",
                                                   random_state=seed), None),
        "Least squares": ("skcl", LeastSquaresClassifier(random_state=seed), None),
        "Least squares, held-out alpha (former default)": (
            "skcl", LeastSquaresClassifier(alpha="heldout", random_state=seed), None),
        "Least squares, 2,000 random ReLU features": (
            "skcl", LeastSquaresClassifier(random_state=seed), scaled_features),
        "GaussianNB": ("scikit-learn", GaussianNB(), None),
        "SGDClassifier(log_loss)": (
            "scikit-learn", SGDClassifier(loss="log_loss", random_state=seed), None),
    }


def paper_defaults(seq, seed):
    """Each paper method with the column's training settings and its default λ, ξ, r."""
    settings = seq.settings("sr")
    out = {}
    # The paper's methods; the registry's other rows (the exact family,
    # scikit-learn's baselines) are the baselines above or take other settings.
    for method in (m for m in rp.METHODS if m.origin == "paper"):
        cls = method.resolve()
        params = cls().get_params()
        out[f"{method.name}, defaults"] = (
            "paper", cls(random_state=seed, **{k: v for k, v in settings.items() if k in params}),
            None)
    return out


def learn(estimator, transformers, train, classes):
    """partial_fit task by task; transformers are fitted on the first task, then frozen."""
    estimator = clone(estimator)
    fitted, Z = [], train[0][0]
    for step in transformers or []:
        step = clone(step).fit(Z)
        Z = step.transform(Z)
        fitted.append(step)
    for X, y in train:
        for step in fitted:
            X = step.transform(X)
        estimator.partial_fit(X, y, classes=classes)
    return estimator, fitted


def test_accuracy(estimator, fitted, test):
    tasks = []
    for X, y in test:
        for step in fitted:
            X = step.transform(X)
        tasks.append((X, y))
    return 100 * final_average_accuracy(estimator, tasks)


def environment():
    return harness.machine_line()


def main():
    parser = harness.parser(__doc__, data=True, csv=False)
    parser.add_argument("--cache", default="weights", help="folder for pre-trained weights")
    parser.add_argument("--columns", nargs="+", choices=list(COLUMNS), default=list(COLUMNS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-tuned", action="store_true",
                        help="leave out the paper's methods searched on validation")
    parser.add_argument("--no-defaults", action="store_true",
                        help="leave out the paper's methods at their defaults")
    parser.add_argument("--output", help="write the results as JSON here")
    args = parser.parse_args()

    print(environment())
    results = {"environment": environment(), "seed": args.seed, "columns": {}}
    for column in args.columns:
        key, pretraining = COLUMNS[column]
        seq = rp.SEQUENCES[key]
        extractor = rp.pretrained_extractor(pretraining, root=args.data_dir,
                                            cache_dir=args.cache, random_state=args.seed,
                                            log=print)
        data = seq.loader(args.data_dir)
        with harness.Stopwatch() as watch:
            train, test = ([(extractor[0].transform(X), y) for X, y in data[split]]
                           for split in ("train", "test"))
        print(f"[{column}] features in {watch.seconds:.1f} s", flush=True)
        rows = {}
        candidates = baselines(args.seed)
        if not args.no_defaults:
            candidates.update(paper_defaults(seq, args.seed))
        for name, (origin, estimator, transformers) in candidates.items():
            with harness.Stopwatch() as watch:
                fitted_estimator, fitted = learn(estimator, transformers, train, data.classes)
            seconds = watch.seconds
            accuracy = test_accuracy(fitted_estimator, fitted, test)
            rows[name] = {"origin": origin, "protocol": "defaults", "test": accuracy,
                          "time_s": seconds}
            print(f"[{column}] {name} ({origin}, defaults): {accuracy:.2f} in {seconds:.2f} s",
                  flush=True)
            save(args.output, results, column, key, pretraining, extractor, rows)
        if not args.no_tuned:
            tuned, _ = rp.run_column(key, "sr", n_jobs=1, random_state=args.seed,
                                     root=args.data_dir, pretraining=pretraining,
                                     extractor=extractor, log=print)
            for row in tuned:
                rows[f"{row['method']}, tuned"] = {
                    "origin": "paper", "protocol": "tuned on validation", "test": row["test"],
                    "params": row.get("best_params"), "time_s": row.get("search_time_s"),
                }
        save(args.output, results, column, key, pretraining, extractor, rows)
        table = harness.Table({"  test %": ">8.2f", "method": "", "origin, protocol": ""},
                              title=f"\n{key} on {pretraining}-pretrained cnn4 features (test "
                                    "final average accuracy, %)")
        for name, row in sorted(rows.items(), key=lambda item: -item[1]["test"]):
            table.row(row["test"], name, f"[{row['origin']}, {row['protocol']}]")


def save(output, results, column, key, pretraining, extractor, rows):
    """Write what is measured so far (a long run keeps its finished rows)."""
    results["columns"][column] = {"sequence": key, "pretraining": pretraining,
                                  "extractor": extractor[1], "rows": rows}
    if output:
        with open(output, "w") as f:
            json.dump(results, f, indent=1, default=str)


if __name__ == "__main__":
    main()
