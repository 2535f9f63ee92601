"""The Gaussian's components on a drifting stream of small calls and on task sequences.

Compares, in one run, ``GaussianDiscriminantClassifier`` with
``components="auto"`` (runs of calls, then the score test against the BIC:
``skcl._exact.components``), the former rule ("before": Hotelling's
between-task statistic in the within-task metric against the BIC, kept
here as a subclass), ``"class"`` and ``"task_class"``.

* The drifting stream: scikit-learn's digits / 16, calls of 60 rows drawn
  with replacement from a 70 % split, every row of call t shifted by s_t,
  a random walk of step 0.05 per feature (s_t = s_{t−1} + 0.05·N(0, I));
  accuracy on the 30 % test split under the current shift, the number of
  components, and the time of ``predict`` on all 1,797 digits (shifted),
  after the solve (median of 5).
* Task sequences: CI and DI Split digits (``load_ci_split_digits``,
  ``load_di_split_digits``; DI also cut into 4 calls a task), CI Split
  Iris and Wine, and with ``--mnist`` CI and DI Split MNIST pixels
  (``SKCL_DATA_DIR`` or ``--data-dir``, torchvision layout): final
  average accuracy and components.

Run::

    PYTHONPATH=. python benchmarks/accuracy/bench_exact_stream.py --calls 300 3000 --mnist
"""

import numpy as np

from benchmarks import _harness as harness
from benchmarks._data import drifting_stream
from skcl import GaussianDiscriminantClassifier
from skcl._exact.gaussian import oas_shrinkage
from skcl.datasets import (
    load_ci_split_digits,
    load_ci_split_iris,
    load_ci_split_mnist,
    load_ci_split_wine,
    load_di_split_digits,
    load_di_split_mnist,
)
from skcl.metrics import final_average_accuracy


def hotelling_apart(moments):
    """The former rule: T_c = Σ n_g δ_gᵀ Σ_w⁻¹ δ_g > (k_c − 1)·D·log n, Σ_w OAS-shrunk."""
    per_label = {}
    for g, key in enumerate(moments.keys):
        per_label.setdefault(key[1], []).append(g)
    n, d = moments.total, moments.n_features
    shrinkage, target = oas_shrinkage(moments.scatter, n)
    covariance = (1 - shrinkage) * (moments.scatter / n)
    covariance[np.diag_indices_from(covariance)] += shrinkage * target
    apart = set()
    for label, groups in per_label.items():
        if len(groups) < 2:
            continue
        counts, means = moments.counts[groups], moments.means[groups]
        delta = means - counts @ means / counts.sum()
        statistic = float(np.sum(counts * np.linalg.solve(covariance, delta.T) * delta.T))
        if statistic > (len(groups) - 1) * d * np.log(max(n, np.e)):
            apart.add(label)
    return apart


class Before(GaussianDiscriminantClassifier):
    """``components="auto"`` as it was: one component per call for the classes apart."""

    def _component_key(self, everything):
        apart = hotelling_apart(everything)
        return lambda key: key if key[1] in apart else (None, key[1])


def models():
    return {"auto": lambda: GaussianDiscriminantClassifier(),
            "before": Before,
            "class": lambda: GaussianDiscriminantClassifier(components="class"),
            "task_class": lambda: GaussianDiscriminantClassifier(components="task_class")}


def predict_ms(clf, X, repeats=5):
    """Milliseconds of ``predict`` on ``X``: the harness's median after a warm-up (the solve)."""
    return 1000 * harness.timeit(lambda: clf.predict(X), repeats).median


def learn_stream(clf, n_calls, checkpoints):
    """Learn the drifting stream a call at a time; at each checkpoint, yield the
    accuracy (%) under the current shift, the predict time (ms) of every digit
    and the learning time so far (s, predictions left out)."""
    learn = 0.0
    for t, (X, y, X_test, y_test, X_all) in enumerate(drifting_stream(n_calls), 1):
        with harness.Stopwatch() as watch:
            clf.partial_fit(X, y, classes=np.arange(10))
        learn += watch.seconds
        if t in checkpoints:
            ms = predict_ms(clf, X_all)
            yield 100 * clf.score(X_test, y_test), ms, learn


def bench_stream(n_calls, names):
    checkpoints = sorted({c for c in (10, 100, 300, 1000, 3000) if c <= n_calls} | {n_calls})
    table = harness.Table(
        {"components": "<12", **{f"after {c}": ">26" for c in checkpoints}, "learn s": ">9.1f"},
        title=f"\nDrifting stream, {n_calls} calls of 60 digits (accuracy on the current "
              "distribution %, components, predict ms of 1,797 rows)")
    for name in names:
        clf, cells = models()[name](), []
        for accuracy, ms, learn in learn_stream(clf, n_calls, checkpoints):
            cells.append(f"{accuracy:6.1f} {len(clf.priors_):7d} {ms:8.1f}")
        table.row(name, *cells, learn)
    return table.rows


def digits_sequences():
    ci, di = load_ci_split_digits(), load_di_split_digits()
    cut = [(X[i::4], y[i::4]) for X, y in di.train for i in range(4)]
    return {"CI digits": (list(ci.train), list(ci.test), np.arange(10)),
            "DI digits": (list(di.train), list(di.test), np.array([0, 1])),
            "DI digits, 4 calls a task": (cut, list(di.test), np.array([0, 1]))}


def sequences(mnist, data_dir):
    out = digits_sequences()
    for name, load in [("CI Iris", load_ci_split_iris), ("CI Wine", load_ci_split_wine)]:
        data = load()
        out[name] = (list(data.train), list(data.test), np.asarray(data.classes))
    if mnist:
        for name, load in [("CI MNIST pixels", load_ci_split_mnist),
                           ("DI MNIST pixels", load_di_split_mnist)]:
            data = load(data_dir)
            scale = [(X.reshape(len(X), -1) / 255.0, y) for X, y in data.train]
            test = [(X.reshape(len(X), -1) / 255.0, y) for X, y in data.test]
            out[name] = (scale, test, np.asarray(data.classes))
    return out


def bench_sequences(mnist, data_dir, names):
    table = harness.Table({"sequence": "<28", **{name: ">24" for name in names}},
                          title="\nTask sequences (final average accuracy %, components, "
                                "learn + solve s)")
    for seq_name, (train, test, classes) in sequences(mnist, data_dir).items():
        cells = []
        for name in names:
            clf = models()[name]()
            with harness.Stopwatch() as watch:
                for X, y in train:
                    clf.partial_fit(X, y, classes=classes)
                n_components = len(clf.priors_)
            accuracy = 100 * final_average_accuracy(clf, test)
            cells.append(f"{accuracy:7.2f} {n_components:5d} {watch.seconds:8.1f}")
        table.row(seq_name, *cells)
    return table.rows


def main():
    parser = harness.parser(__doc__, data=True, csv=False)
    parser.add_argument("--calls", type=int, nargs="*", default=[300])
    parser.add_argument("--mnist", action="store_true", help="add CI and DI Split MNIST pixels")
    parser.add_argument("--models", nargs="+", default=list(models()), choices=list(models()))
    args = parser.parse_args()
    print(harness.machine_line())
    with harness.Stopwatch() as watch:
        bench_sequences(args.mnist, args.data_dir, args.models)
        for n_calls in args.calls:
            bench_stream(n_calls, args.models)
    print(f"\n{watch.seconds:.0f} s in all")

if __name__ == "__main__":
    main()
