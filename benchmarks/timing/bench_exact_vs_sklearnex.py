"""skcl's exact family beside scikit-learn-intelex's incremental ridge and covariance.

Issue 49, item 4: on the same float32 features (CI Split MNIST pixels / 255
→ ``RandomFeatures(M, random_state=0)``, fitted on the first task's rows;
five tasks, in one process, interleaved repeats, medians):

* sklearnex's ``IncrementalRidge(alpha=1).partial_fit`` on one-hot targets,
  five times, then its test predictions (its solve waits for them), beside
  ``LeastSquaresClassifier(alpha=1.0).partial_fit`` five times, then its
  solve and test predictions, and beside the defaults (α by GCV);
* sklearnex's ``IncrementalEmpiricalCovariance.partial_fit`` of the five
  tasks' rows beside ``GaussianDiscriminantClassifier().partial_fit``;
* each one's test accuracy, and skcl's pooled within-class scatter's
  largest error against an independent float64 computation, relative to
  its largest entry;
* the small calls: 200 ``partial_fit`` calls of 100 rows at D = 1,000
  (least squares at its defaults, 4 classes, float64 rows) over one call
  on the same 20,000 rows, in the same process; with ``--old PATH`` (a
  worktree of an earlier commit) the earlier code's ratio too, the two
  run alternately in their own processes.

Run it niced, never in the test suite (minutes at M = 5,000)::

    nice -n 10 python -m benchmarks.timing.bench_exact_vs_sklearnex --old /tmp/skcl-old

``pip install scikit-learn-intelex`` (or skcl's ``bench`` extra) provides
sklearnex; without it the script says so and times skcl alone.
"""

import ast
import os
import sys

import numpy as np

from benchmarks import _harness as harness
from skcl import GaussianDiscriminantClassifier, LeastSquaresClassifier
from skcl._exact.moments import by_class
from skcl.datasets import load_ci_split_mnist
from skcl.feature_extraction import RandomFeatures

try:
    from sklearnex.covariance import IncrementalEmpiricalCovariance
    from sklearnex.linear_model import IncrementalRidge
except ImportError:  # the optional peer
    IncrementalRidge = IncrementalEmpiricalCovariance = None

SMALL_CALLS = """
import sys
import numpy as np
from benchmarks._harness import Stopwatch
sys.path.insert(0, sys.argv[1])  # the tree whose skcl is timed (after the harness's import)
from skcl import LeastSquaresClassifier
rng = np.random.default_rng(0)
D, n, calls = 1000, 100, 200
X = rng.standard_normal((n * calls, D))
y = rng.integers(0, 4, n * calls)
classes = np.arange(4)
def one():
    LeastSquaresClassifier().partial_fit(X, y, classes=classes).coef_
def many():
    clf = LeastSquaresClassifier()
    for i in range(calls):
        clf.partial_fit(X[i * n:(i + 1) * n], y[i * n:(i + 1) * n], classes=classes)
    clf.coef_
def seconds(run):
    with Stopwatch() as watch:
        run()
    return watch.seconds, watch.cpu_seconds
ratios = []
for _ in range(int(sys.argv[2])):
    ratios.append((*seconds(one), *seconds(many)))
print(repr(ratios))
"""


def features(m, data_dir=None):
    """Five tasks' float32 features, the test rows' and labels."""
    data = load_ci_split_mnist(data_dir)

    def pixels(images):
        return images.reshape(len(images), -1) / 255.0

    phi = RandomFeatures(m, random_state=0).fit(pixels(data.train[0][0]))
    tasks = [(phi.transform(pixels(X)), y) for X, y in data.train]
    X_test = phi.transform(np.concatenate([pixels(X) for X, _ in data.test]))
    y_test = np.concatenate([y for _, y in data.test])
    return tasks, X_test, y_test, data.classes


def timed(run):
    with harness.Stopwatch() as watch:
        out = run()
    return watch.seconds, out


def ridge_peer(tasks, X_test, y_test, classes):
    model = IncrementalRidge(alpha=1.0)
    watch = harness.Stopwatch()
    for X, y in tasks:
        model.partial_fit(X, (y[:, None] == classes).astype(X.dtype))
    updates = watch.seconds
    predicted = classes[np.argmax(model.predict(X_test), axis=1)]
    return updates, watch.seconds, np.mean(predicted == y_test)


def least_squares(tasks, X_test, y_test, classes, alpha):
    model = LeastSquaresClassifier(alpha=alpha)
    watch = harness.Stopwatch()
    for X, y in tasks:
        model.partial_fit(X, y, classes=classes)
    updates = watch.seconds
    accuracy = model.score(X_test, y_test)
    return updates, watch.seconds, accuracy, model


def covariance_peer(tasks):
    model = IncrementalEmpiricalCovariance()
    return timed(lambda: [model.partial_fit(X) for X, _ in tasks])[0]


def gaussian(tasks, X_test, y_test, classes):
    model = GaussianDiscriminantClassifier()
    updates = timed(lambda: [model.partial_fit(X, y, classes=classes) for X, y in tasks])[0]
    return updates, model.score(X_test, y_test)


def scatter_error(model, tasks):
    """max |W − W₆₄| / max |W₆₄|: W the pooled within-class scatter, W₆₄ in float64 by hand."""
    d = tasks[0][0].shape[1]
    reference = np.zeros((d, d))
    for label in np.unique(np.concatenate([y for _, y in tasks])):  # one class in float64 at a time
        rows = np.concatenate([X[y == label] for X, y in tasks]).astype(np.float64)
        rows -= rows.mean(axis=0)
        reference += rows.T @ rows
    W = by_class(model.moments_).scatter
    return float(np.abs(W - reference).max() / np.abs(reference).max())


def small_calls(tree, repeats, threads):
    """(one call, its CPU, 200 calls, their CPU) seconds per repeat, the code of ``tree``
    in its own process, BLAS limited to ``threads``."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads))
    out = harness.run_isolated([sys.executable, "-c", SMALL_CALLS, tree, str(repeats)], env=env)
    if not out.ok:
        raise RuntimeError(f"the small calls of {tree}: {out.why}")
    return ast.literal_eval(out.stdout.strip().splitlines()[-1])  # our own repr of floats


def main():
    parser = harness.parser(__doc__, data=True, repeats=3)
    parser.add_argument("--sizes", type=int, nargs="*", default=[2000, 5000])
    parser.add_argument("--old", help="a worktree of earlier code, for the small calls' row")
    parser.add_argument("--small-repeats", type=int, default=3,
                        help="repeats of the small calls' row (0: none)")
    parser.add_argument("--small-threads", type=int, default=1,
                        help="BLAS threads of the small calls (1: CPU time is the work done, "
                             "whatever the machine's load)")
    parser.add_argument("--no-reference", action="store_true",
                        help="skip the float64 scatter (minutes at M = 5,000)")
    args = parser.parse_args()
    peer = IncrementalRidge is not None
    if not peer:
        print("scikit-learn-intelex is NOT installed: skcl is timed alone. "
              "pip install scikit-learn-intelex (or skcl[bench]) for the side by side.")
    print(harness.machine_line(extra="sklearnex installed" if peer else "no sklearnex"))
    table = harness.Table(
        {"M": ">5", "run": "<38", "seconds": ">8.2f", "× peer": ">7.2f", "accuracy %": ">10.2f"},
        csv_path=args.csv)
    errors = []
    for m in args.sizes:
        tasks, X_test, y_test, classes = features(m, args.data_dir)
        times = {key: [] for key in ("peer", "peer+", "ls", "ls+", "gcv+", "cov", "gauss")}
        accuracy = {}
        for _ in range(args.repeats):  # interleaved: each repeat runs every one once
            if peer:
                updates, total, accuracy["peer"] = ridge_peer(tasks, X_test, y_test, classes)
                times["peer"].append(updates)
                times["peer+"].append(total)
            updates, total, accuracy["ls"], model = least_squares(tasks, X_test, y_test,
                                                                  classes, 1.0)
            times["ls"].append(updates)
            times["ls+"].append(total)
            _, total, accuracy["gcv"], _ = least_squares(tasks, X_test, y_test, classes, "auto")
            times["gcv+"].append(total)
            if peer:
                times["cov"].append(covariance_peer(tasks))
            updates, accuracy["gauss"] = gaussian(tasks, X_test, y_test, classes)
            times["gauss"].append(updates)
        error = float("nan") if args.no_reference else scatter_error(model, tasks)
        med = {key: float(np.median(value)) if value else float("nan")
               for key, value in times.items()}
        ratio = {key: float(np.median(np.divide(times[key], times[base]))) if peer else np.nan
                 for key, base in [("ls", "peer"), ("ls+", "peer+"), ("gcv+", "peer+"),
                                   ("gauss", "cov")]}
        for name, key, base, acc in [
                ("5 updates: sklearnex IncrementalRidge", "peer", None, accuracy.get("peer")),
                ("5 updates: LeastSquares(alpha=1.0)", "ls", "ls", accuracy["ls"]),
                ("+ solve, predict: sklearnex", "peer+", None, accuracy.get("peer")),
                ("+ solve, predict: LeastSquares(1.0)", "ls+", "ls+", accuracy["ls"]),
                ("+ solve, predict: LeastSquares GCV", "gcv+", "gcv+", accuracy["gcv"]),
                ("5 updates: IncrementalEmpiricalCov.", "cov", None, None),
                ("5 updates: GaussianDiscriminant", "gauss", "gauss", accuracy["gauss"])]:
            table.row(m, name, med[key], None if base is None else ratio[base],
                      None if acc is None else 100 * acc)
        errors.append((m, error))
    table.close()
    for m, error in errors:
        print(f"M = {m}: skcl's scatter within {error:.1e} of float64's (relative to its "
              f"largest entry); float32 rows → float32 block products")
    small_rows(args)


def small_rows(args):
    trees = {"now": os.path.dirname(os.path.dirname(os.path.abspath(__file__)))}
    if args.old:
        trees = {"before": os.path.abspath(args.old), **trees}
    measured = {name: [] for name in trees}
    if not args.small_repeats:
        return
    for _ in range(args.small_repeats):  # alternately, each in its own process
        for name, tree in trees.items():
            measured[name] += small_calls(tree, 1, args.small_threads)
    print()
    print(f"200 partial_fit calls of 100 rows, D = 1,000, over one call on the 20,000 rows "
          f"(BLAS threads: {args.small_threads}; medians of {args.small_repeats})")
    for name, runs in measured.items():
        one, one_cpu, many, many_cpu = np.median(runs, axis=0)
        wall = np.median([r[2] / r[0] for r in runs])
        cpu = np.median([r[3] / r[1] for r in runs])
        print(f"  {name:6}  one call {one:.2f} s ({one_cpu:.2f} s CPU), 200 calls {many:.2f} s "
              f"({many_cpu:.2f} s CPU): {wall:.2f}× wall, {cpu:.2f}× CPU")


if __name__ == "__main__":
    main()
