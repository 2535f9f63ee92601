"""The exact family's statistics update against a plain matrix product.

A task's update (:func:`skcl._exact.task.task_moments`: one pass over the
rows, converting them to float64, hashing them for the held-out share,
shifting each by its class's reference and summing them by class, then
the product of the shifted rows) costs n·D²/2 multiply-adds (a symmetric
product fills one triangle), the FLOPs of ``X.T @ X`` on the same float64
rows (both BLAS ``syrk``). Both are timed in the same run, interleaved,
``--repeats`` times; the ratio is the median of each round's update over
its product, the overhead over the product. Each call follows a pause
(``--pause``): OpenBLAS's idle threads busy-wait for about 0.1 s of CPU
after each product, and the update's own threads (it shares its chunks
among as many threads as BLAS may use) would otherwise share their cores
with that wait; the ratio back to back, with no pause, is shown too. Then
the whole ``partial_fit`` (with the closed-form solve, an
eigendecomposition of D×D per task), and a fit from a Dask array (blocks
of 8,192 rows, reduced by a ``distributed`` cluster of processes) against
the in-memory fit.

Run::

    PYTHONPATH=. python benchmarks/timing/bench_exact_update.py   # 60,000 × 512 and × 2,048
    PYTHONPATH=. python benchmarks/timing/bench_exact_update.py --rows 20000 --features 256
"""

import time

import numpy as np

from benchmarks import _harness as harness


def once(fn):
    """One call's seconds (the interleaved rounds' medians are taken by the caller)."""
    with harness.Stopwatch() as watch:
        fn()
    return watch.seconds


def update_vs_gemm(n, d, n_classes, repeats, dtype, pauses):
    """Per pause: median seconds of the product and of the update, and the
    median ratio of a round's two."""
    from skcl._exact.task import task_moments

    rng = np.random.default_rng(0)
    X = (rng.standard_normal((n, d)) + 3).astype(dtype)
    y = rng.integers(0, n_classes, n)
    w = np.ones(n)
    keys = [(0, c) for c in range(n_classes)]
    X64 = X.astype(np.float64)
    results = []
    for pause in pauses:
        gemm, update = [], []
        for _ in range(repeats):  # interleaved: the machine's noise hits both alike
            time.sleep(pause)
            gemm.append(once(lambda: X64.T @ X64))
            time.sleep(pause)
            update.append(once(lambda: task_moments(X, y, w, keys, fraction=0.1, seed=0,
                                                    per_group_scatter=False)))
        gemm, update = np.array(gemm), np.array(update)
        results.append((np.median(gemm), np.median(update), np.median(update / gemm)))
    return results


def partial_fit_time(n, d, n_classes):
    from skcl import GaussianDiscriminantClassifier, LeastSquaresClassifier

    rng = np.random.default_rng(1)
    X = (rng.standard_normal((n, d)) + 3).astype(np.float32)
    y = rng.integers(0, n_classes, n)
    out = {}
    for cls in (GaussianDiscriminantClassifier, LeastSquaresClassifier):
        out[cls.__name__] = once(
            lambda: cls(random_state=0).partial_fit(X, y, classes=np.arange(n_classes)))
    return out


def dask_against_memory(n, d):
    import dask.array as da
    import distributed

    from skcl import GaussianDiscriminantClassifier

    rng = np.random.default_rng(2)
    X = (rng.standard_normal((n, d)) + 10).astype(np.float32)
    y = rng.integers(0, 10, n)
    with harness.Stopwatch() as in_memory:
        memory = GaussianDiscriminantClassifier(random_state=0).fit(X, y)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster):
        with harness.Stopwatch() as on_dask:
            lazy = GaussianDiscriminantClassifier(random_state=0).fit(
                da.from_array(X, chunks=(8192, d)), da.from_array(y, chunks=8192))
    probe = X[:2000]
    diff = np.abs(lazy.predict_proba(probe) - memory.predict_proba(probe)).max()
    same = (lazy.predict(probe) == memory.predict(probe)).all()
    return in_memory.seconds, on_dask.seconds, diff, same


def main():
    parser = harness.parser(__doc__, repeats=5, csv=False)
    parser.add_argument("--rows", type=int, default=60000)
    parser.add_argument("--features", type=int, nargs="+", default=[512, 2048])
    parser.add_argument("--classes", type=int, default=2)
    parser.add_argument("--pause", type=float, default=0.3,
                        help="seconds of rest before each timed call (default 0.3)")
    parser.add_argument("--no-dask", action="store_true")
    args = parser.parse_args()
    from skcl._exact.task import _blas_threads

    print(harness.machine_line(extra=f"{_blas_threads()} BLAS threads"))
    table = harness.Table(
        {"rows × features": "", "input": "", "X.T @ X (float64)": "", "statistics update": "",
         "ratio": "", "ratio back to back": ""}, markdown=True,
        title=f"{args.rows} rows, {args.classes} classes per task, medians of {args.repeats} "
              "interleaved rounds\n")
    for d in args.features:
        for dtype in (np.float32, np.float64):
            (gemm, update, ratio), (_, _, rushed) = update_vs_gemm(
                args.rows, d, args.classes, args.repeats, dtype, (args.pause, 0.0))
            table.row(f"{args.rows:,} × {d:,}", np.dtype(dtype).name, f"{gemm:.3f} s",
                      f"{update:.3f} s", f"{ratio:.2f}×", f"{rushed:.2f}×")
    fits = harness.Table({"rows × features": "", "GaussianDiscriminantClassifier.partial_fit": "",
                          "LeastSquaresClassifier.partial_fit": ""}, markdown=True,
                         title="\nOne partial_fit each, one run")
    for d in args.features:
        times = partial_fit_time(args.rows, d, args.classes)
        fits.row(f"{args.rows:,} × {d:,}", f"{times['GaussianDiscriminantClassifier']:.2f} s",
                 f"{times['LeastSquaresClassifier']:.2f} s")
    if not args.no_dask:
        d = args.features[0]
        memory_time, dask_time, diff, same = dask_against_memory(args.rows, d)
        print(f"\nDask array ({args.rows:,} × {d}, blocks of 8,192 rows, 2 worker processes) "
              f"against in memory: fit {dask_time:.2f} s vs {memory_time:.2f} s; "
              f"predict_proba max |difference| {diff:.2e}; same predictions: {same}")


if __name__ == "__main__":
    main()
