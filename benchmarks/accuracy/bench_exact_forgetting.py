"""Decay on a drifting stream, against the component rules and river; forgetting against a refit.

Two tables.

* The drifting stream of ``bench_exact_stream.py`` (scikit-learn's digits
  / 16, calls of 60 rows drawn with replacement from a 70 % split, every
  row of call t shifted by a random walk s_t = s_{t−1} + 0.05·N(0, I)):
  ``GaussianDiscriminantClassifier`` with ``decay`` λ (each call
  multiplies the weight of every earlier row by λ) under the component
  rules "class" and "auto", the undecayed rules (λ = 1; "task_class", one
  component per call, only up to 300 calls: at 3,000 it keeps 30,000
  components, 14 s a predict), ``LeastSquaresClassifier`` with decay, and
  river's streaming classifiers (``pip install river``; one row at a time,
  ``learn_one``) on the same calls: accuracy on the 30 % test split under
  the current shift after 10, 300 and 3,000 calls, the time of a predict
  of all 1,797 digits (shifted) after 10 calls and at the end (median of
  5, after the solve), and the learning time per call.
* Forgetting against a refit, at D = 2,000 (and, with ``--dims 2000
  10000``, 10,000) random features of CI Split digits
  (``load_ci_split_digits``, the paper's splits): learning the 5
  tasks, then forgetting task 3's rows (``forget``: their sums, the
  downdate) and the solve that follows, against learning the other 4
  tasks again and solving; and the largest relative difference of their
  probabilities and decision functions.

Run. The first (300 calls, D = 2,000) took about 30 minutes on the shared
two-core machine under a load average of 15-20 (river's Hoeffding tree
half of it, the D = 2,000 table 3.5 minutes); the second adds the
3,000-call stream, whose skcl rows took about 5 minutes each there, and
river's adaptive random forest (1.6 s a call there); the third runs the
decisive rows only::

    PYTHONPATH=. nice -n 10 python benchmarks/accuracy/bench_exact_forgetting.py
    PYTHONPATH=. nice -n 10 python benchmarks/accuracy/bench_exact_forgetting.py \\
        --calls 300 3000 --river softmax hat arf --river-calls 300 --dims 2000 10000
    PYTHONPATH=. nice -n 10 python benchmarks/accuracy/bench_exact_forgetting.py --calls 3000 \\
        --river --models "class, λ=0.9" "class, λ=0.97" --dims     # the decisive rows only
"""


import numpy as np

from benchmarks import _harness as harness
from benchmarks.accuracy.bench_exact_stream import drifting_stream, learn_stream
from skcl import GaussianDiscriminantClassifier, LeastSquaresClassifier
from skcl.datasets import load_ci_split_digits
from skcl.feature_extraction import RandomFeatures


def skcl_models(n_calls):
    out = {
        "class, λ=1": lambda: GaussianDiscriminantClassifier(components="class"),
        "auto, λ=1": lambda: GaussianDiscriminantClassifier(),
    }
    if n_calls <= 300:
        out["task_class, λ=1"] = lambda: GaussianDiscriminantClassifier(
            components="task_class")
    for decay in (0.9, 0.97, 0.99):
        out[f"class, λ={decay}"] = (
            lambda decay=decay: GaussianDiscriminantClassifier(components="class", decay=decay))
        out[f"auto, λ={decay}"] = lambda decay=decay: GaussianDiscriminantClassifier(decay=decay)
    out["least sq., λ=0.97"] = lambda: LeastSquaresClassifier(decay=0.97)
    return out


def river_models(names):
    from river import forest, linear_model, preprocessing, tree

    factories = {
        "softmax": lambda: preprocessing.StandardScaler() | linear_model.SoftmaxRegression(),
        "hat": lambda: tree.HoeffdingAdaptiveTreeClassifier(seed=0),
        "arf": lambda: forest.ARFClassifier(seed=0),
    }
    return {f"river {name}": factories[name] for name in names}


def checkpoints_of(n_calls):
    return sorted({c for c in (10, 300, 3000) if c <= n_calls} | {n_calls})


def run_skcl(factory, n_calls, n_stream):
    clf, cells, first_ms = factory(), [], None
    for accuracy, ms, learn in learn_stream(clf, n_calls, checkpoints_of(n_calls)):
        first_ms = first_ms if first_ms is not None else ms
        cells.append(accuracy)
    components = len(clf.priors_) if hasattr(clf, "priors_") else len(clf.classes_)
    return cells, first_ms, ms, 1000 * learn / n_calls, components


def run_river(factory, n_calls, n_stream):
    model, cells, learn, first_ms = factory(), [], 0.0, None
    checkpoints = [c for c in checkpoints_of(n_stream) if c <= n_calls]

    def predict(X):
        return np.array([model.predict_one(dict(enumerate(x))) for x in X])

    for t, (X, y, X_test, y_test, X_all) in enumerate(drifting_stream(n_calls), 1):
        with harness.Stopwatch() as watch:
            for x, label in zip(X, y.tolist()):
                model.learn_one(dict(enumerate(x)), label)
        learn += watch.seconds
        if t in checkpoints:
            with harness.Stopwatch() as watch:
                predict(X_all)
            ms = 1000 * watch.seconds
            first_ms = first_ms if first_ms is not None else ms
            cells.append(100 * float(np.mean(predict(X_test) == y_test)))
    return cells, first_ms, ms, 1000 * learn / n_calls, None


def bench_stream(n_calls, river_names, river_calls, with_skcl=True, only=None):
    checkpoints = checkpoints_of(n_calls)
    table = harness.Table(
        {"model": "<20", **{f"after {c}": ">10.1f" for c in checkpoints}, "predict@10": ">11.1f",
         "predict@end": ">11.1f", "end/10": ">7.2f", "learn": ">8.2f", "comp.": ">6"},
        title=f"\nDrifting stream, {n_calls} calls of 60 digits: accuracy on the current "
              f"distribution (%), predict of 1,797 rows (ms), learning (ms per call)")
    runs = [(name, run_skcl, f, n_calls) for name, f in skcl_models(n_calls).items()
            if with_skcl and (only is None or name in only)]
    runs += [(name, run_river, f, min(n_calls, river_calls))
             for name, f in river_models(river_names).items()]
    for name, run, factory, calls in runs:
        cells, first_ms, last_ms, learn_ms, components = run(factory, calls, n_calls)
        cells = cells + [None] * (len(checkpoints) - len(cells))
        if calls < n_calls:
            name = f"{name} ({calls})"  # learned the stream's first calls only
        table.row(name, *cells, first_ms, last_ms, last_ms / first_ms, learn_ms, components)
    return table.rows


def ci_split_digits_features(n_components):
    """CI Split digits' training tasks and pooled test rows through D random features."""
    data = load_ci_split_digits()
    features = RandomFeatures(n_components, random_state=0).fit(
        np.concatenate([X for X, _ in data.train]))
    tasks = [(features.transform(X), y) for X, y in data.train]
    return tasks, features.transform(np.concatenate([X for X, _ in data.test]))


def learn(factory, tasks):
    model = factory()
    for X, y in tasks:
        model.partial_fit(X, y, classes=np.arange(10))
    return model


def relative_difference(got, want):
    """max |got − want| / max |want| over the finite entries (−inf where a class has no rows)."""
    finite = np.isfinite(want)
    if not np.array_equal(finite, np.isfinite(got)):
        return float("inf")
    return float(np.abs(got[finite] - want[finite]).max() / np.abs(want[finite]).max())


def bench_forgetting(dims):
    table = harness.Table(
        {"model": "<15", "D": ">6", "learn 5": ">8.2f", "forget": ">8.2f", "+ solve": ">8.2f",
         "refit 4": ">8.2f", "+ solve ": ">8.2f", "max rel. diff": ">14.1e"},
        title="\nForgetting task 3 of CI Split digits on D random features, against a refit "
              "without it (s)")
    for d in dims:
        tasks, X_test = ci_split_digits_features(d)
        for name, factory in [("gaussian", GaussianDiscriminantClassifier),
                              ("least squares", LeastSquaresClassifier)]:
            with harness.Stopwatch() as learned:
                model = learn(factory, tasks)
                model.predict(X_test[:1])
            with harness.Stopwatch() as forget:
                model.forget(*tasks[3])
            with harness.Stopwatch() as forget_solve:
                model.predict(X_test[:1])
            with harness.Stopwatch() as refit_learn:
                refit = learn(factory, [t for i, t in enumerate(tasks) if i != 3])
            with harness.Stopwatch() as refit_solve:
                refit.predict(X_test[:1])
            difference = max(
                relative_difference(got, want)
                for got, want in [(model.predict_proba(X_test), refit.predict_proba(X_test)),
                                  (model.decision_function(X_test),
                                   refit.decision_function(X_test))])
            table.row(name, d, learned.seconds, forget.seconds, forget_solve.seconds,
                      refit_learn.seconds, refit_solve.seconds, difference)
            del model, refit
    return table.rows


def main():
    parser = harness.parser(__doc__, csv=False)
    parser.add_argument("--calls", type=int, nargs="*", default=[300])
    parser.add_argument("--river", nargs="*", default=["softmax", "hat"],
                        choices=["softmax", "hat", "arf"])
    parser.add_argument("--river-calls", type=int, default=300,
                        help="river learns at most this many calls of each stream (one row "
                             "at a time is slow)")
    parser.add_argument("--dims", type=int, nargs="*", default=[2000])
    parser.add_argument("--models", nargs="+", default=None,
                        help='the skcl rows to run, by name (e.g. "class, λ=0.97")')
    parser.add_argument("--only-river", action="store_true",
                        help="the streams' river rows only (a long river run on its own)")
    args = parser.parse_args()
    print(harness.machine_line())
    clock = harness.Stopwatch()
    for n_calls in args.calls:
        # The first calls of every stream are the same: river learns them once.
        shortest = min(args.calls)
        river = args.river if n_calls == shortest or args.river_calls > shortest else []
        bench_stream(n_calls, river, args.river_calls, with_skcl=not args.only_river,
                     only=args.models)
    if not args.only_river:
        bench_forgetting(args.dims)
    print(f"\n{clock.seconds:.0f} s in all")


if __name__ == "__main__":
    main()
