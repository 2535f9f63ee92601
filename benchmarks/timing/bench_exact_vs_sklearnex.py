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

    nice -n 10 python benchmarks/timing/bench_exact_vs_sklearnex.py --old /tmp/skcl-old

``pip install scikit-learn-intelex`` (or skcl's ``bench`` extra) provides
sklearnex; without it the script says so and times skcl alone.
"""

import argparse
import os
import platform
import subprocess
import sys
import time

import numpy as np
import sklearn

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
import sys, time
import numpy as np
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
    wall, cpu = time.perf_counter(), time.process_time()
    run()
    return time.perf_counter() - wall, time.process_time() - cpu
ratios = []
for _ in range(int(sys.argv[1])):
    ratios.append((*seconds(one), *seconds(many)))
print(repr(ratios))
"""


def features(m):
    """Five tasks' float32 features, the test rows' and labels."""
    data = load_ci_split_mnist()

    def pixels(images):
        return images.reshape(len(images), -1) / 255.0

    phi = RandomFeatures(m, random_state=0).fit(pixels(data.train[0][0]))
    tasks = [(phi.transform(pixels(X)), y) for X, y in data.train]
    X_test = phi.transform(np.concatenate([pixels(X) for X, _ in data.test]))
    y_test = np.concatenate([y for _, y in data.test])
    return tasks, X_test, y_test, data.classes


def timed(run):
    tic = time.perf_counter()
    out = run()
    return time.perf_counter() - tic, out


def ridge_peer(tasks, X_test, y_test, classes):
    model = IncrementalRidge(alpha=1.0)
    tic = time.perf_counter()
    for X, y in tasks:
        model.partial_fit(X, (y[:, None] == classes).astype(X.dtype))
    updates = time.perf_counter() - tic
    predicted = classes[np.argmax(model.predict(X_test), axis=1)]
    return updates, time.perf_counter() - tic, np.mean(predicted == y_test)


def least_squares(tasks, X_test, y_test, classes, alpha):
    model = LeastSquaresClassifier(alpha=alpha)
    tic = time.perf_counter()
    for X, y in tasks:
        model.partial_fit(X, y, classes=classes)
    updates = time.perf_counter() - tic
    accuracy = model.score(X_test, y_test)
    return updates, time.perf_counter() - tic, accuracy, model


def covariance_peer(tasks):
    model = IncrementalEmpiricalCovariance()
    return timed(lambda: [model.partial_fit(X) for X, _ in tasks])[0]


def gaussian(tasks, X_test, y_test, classes):
    model = GaussianDiscriminantClassifier()
    updates = timed(lambda: [model.partial_fit(X, y, classes=classes) for X, y in tasks])[0]
    return updates, model.score(X_test, y_test)


def scatter_error(model, tasks):
    """max |W − W₆₄| / max |W₆₄|: W the pooled within-class scatter, W₆₄ in float64 by hand."""
    X = np.concatenate([X for X, _ in tasks]).astype(np.float64)
    y = np.concatenate([y for _, y in tasks])
    reference = np.zeros((X.shape[1], X.shape[1]))
    for label in np.unique(y):
        rows = X[y == label]
        rows -= rows.mean(axis=0)
        reference += rows.T @ rows
    W = by_class(model.moments_).scatter
    return float(np.abs(W - reference).max() / np.abs(reference).max())


def small_calls(tree, repeats, threads):
    """(one call, its CPU, 200 calls, their CPU) seconds per repeat, the code of ``tree``
    in its own process, BLAS limited to ``threads``."""
    env = dict(os.environ, PYTHONPATH=tree, OPENBLAS_NUM_THREADS=str(threads))
    out = subprocess.run([sys.executable, "-c", SMALL_CALLS, str(repeats)], env=env,
                         capture_output=True, text=True, check=True, cwd=tree)
    return eval(out.stdout.strip().splitlines()[-1])  # noqa: S307  (our own repr of floats)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[2000, 5000])
    parser.add_argument("--repeats", type=int, default=3)
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
    else:
        import sklearnex
        print(f"sklearnex {sklearnex.__version__}")
    print(f"Python {platform.python_version()}, numpy {np.__version__}, "
          f"scikit-learn {sklearn.__version__}, {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.1f}")
    rows = []
    for m in args.sizes:
        tasks, X_test, y_test, classes = features(m)
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
        rows += [
            (m, "5 updates: sklearnex IncrementalRidge", med["peer"], "", accuracy.get("peer")),
            (m, "5 updates: LeastSquares(alpha=1.0)", med["ls"], ratio["ls"], accuracy["ls"]),
            (m, "+ solve, predict: sklearnex", med["peer+"], "", accuracy.get("peer")),
            (m, "+ solve, predict: LeastSquares(1.0)", med["ls+"], ratio["ls+"], accuracy["ls"]),
            (m, "+ solve, predict: LeastSquares GCV", med["gcv+"], ratio["gcv+"],
             accuracy["gcv"]),
            (m, "5 updates: IncrementalEmpiricalCov.", med["cov"], "", None),
            (m, "5 updates: GaussianDiscriminant", med["gauss"], ratio["gauss"],
             accuracy["gauss"]),
        ]
        print(f"M = {m}: skcl's scatter within {error:.1e} of float64's (relative to its "
              f"largest entry); float32 rows → float32 block products")
    if rows:
        print_table(rows)
    small_rows(args)


def print_table(rows):
    print()
    print(f"{'M':>5}  {'run':38}  {'seconds':>8}  {'× peer':>7}  {'accuracy':>8}")
    for m, name, seconds, ratio, acc in rows:
        ratio = f"{ratio:.2f}" if isinstance(ratio, float) else ""
        acc = f"{100 * acc:.2f}" if acc is not None else ""
        print(f"{m:>5}  {name:38}  {seconds:8.2f}  {ratio:>7}  {acc:>8}")


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
