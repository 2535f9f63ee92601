"""A task larger than the workers' memory: RandomFeatures → LeastSquaresClassifier on Dask.

``Pipeline([RandomFeatures(M), LeastSquaresClassifier()]).partial_fit(X, y)``
with X a Dask array of n rows of D = 784 values (pixel-like, 0..255,
generated on the workers block by block): the features of a block are
computed where the block lies (``RandomFeatures.transform`` of a Dask
array is a lazy Dask array) and reduced there to the classifier's moments
(``skcl._exact.dask_task.dask_task_moments``), so the n × M feature matrix never
exists in one process. The cluster is a ``LocalCluster`` of worker
processes, each with a memory limit; the n × M float32 features are
larger than the limits' sum.

Printed: the sizes, the time of each step, the peak resident memory of
each worker process and of this (the client's) process
(``resource.getrusage``'s ``ru_maxrss``, read in each process), and the
accuracy on 5,000 of the rows (a sign that something was learned; the
test suite, ``tests/test_random_features_units.py``, checks equality with
the in-memory fit at a small size). The workers keep Dask's default
memory rules (pause at 80 % of the limit, restart at 95 %). A worker's
floor is its imports (about 170 MiB) plus the moments' merge, which
holds up to 8 blocks' moments at once, each with two M × M float64
scatters (learned and held-out rows): at M = 1,500, workers of 381 MiB
died in that merge, so the limit must grow with M².

Run::

    PYTHONPATH=. python benchmarks/timing/bench_dask_features.py --rows 400000 --components 1000 \\
        --chunk 4000 --workers 2 --memory-limit 600MB

Measured so (2026-11-26, 2 shared CPU cores, load about 15): 1,526 MiB of
features against 2 × 572 MiB of worker limits (1.33×); peak RSS 393 and
414 MiB per worker (169 MiB before the task), 353 MiB in the client;
partial_fit 862 s, solve and 5,000 predictions 33 s.
"""

import numpy as np

from benchmarks import _harness as harness


def _peak_mib():
    return harness.peak_rss_gb() * 1024


def main():
    parser = harness.parser(__doc__, csv=False)
    parser.add_argument("--rows", type=int, default=400_000)
    parser.add_argument("--components", type=int, default=1000)
    parser.add_argument("--chunk", type=int, default=4000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--memory-limit", default="600MB")
    args = parser.parse_args()

    import dask
    import dask.array as da
    import distributed
    from dask.utils import parse_bytes

    from skcl import LeastSquaresClassifier
    from skcl.feature_extraction import RandomFeatures
    from skcl.pipeline import make_pipeline

    print(harness.machine_line())
    n, m, d = args.rows, args.components, 784
    limit = parse_bytes(args.memory_limit)
    features_bytes = n * m * 4
    print(f"# n = {n:,} rows, D = {d}, M = {m:,}: the features are {features_bytes / 2**20:,.0f} "
          f"MiB in float32; {args.workers} workers of {limit / 2**20:,.0f} MiB each "
          f"({args.workers * limit / 2**20:,.0f} MiB in all): "
          f"{features_bytes / (args.workers * limit):.2f}× the workers' total limit")
    with distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                                  memory_limit=args.memory_limit, host="127.0.0.1",
                                  dashboard_address=None, silence_logs=40) as cluster, \
            distributed.Client(cluster) as client:
        client.run(lambda: __import__("skcl.feature_extraction._random_features"))
        baseline = client.run(_peak_mib)
        rng = da.random.default_rng(0)
        # Pixel-like rows whose class shifts their mean: learnable, generated on the workers.
        y = rng.integers(0, 10, size=n, chunks=args.chunk)
        X = (rng.random((n, d), chunks=(args.chunk, d)) * 200
             + y[:, None].astype(np.float64) * 5.5).astype(np.float32)
        pipe = make_pipeline(RandomFeatures(m, backend="numpy", random_state=0),
                             LeastSquaresClassifier(backend="numpy"))
        with harness.Stopwatch() as fit:  # one run: the task is learned once
            pipe.partial_fit(X, y, classes=np.arange(10))
        peaks = client.run(_peak_mib)
        with harness.Stopwatch() as predict:
            X_test, y_test = dask.compute(X[:5000], y[:5000])
            accuracy = float(np.mean(pipe.predict(X_test) == y_test))
    steps = harness.Table({"step": "", "seconds": ".1f"}, markdown=True)
    steps.row("partial_fit (features, moments)", fit.seconds)
    steps.row("solve + predict 5,000 rows", predict.seconds)
    memory = harness.Table({"process": "", "peak RSS MiB": ",.0f", "before the task MiB": ",.0f"},
                           markdown=True)
    for address, peak in peaks.items():
        memory.row(f"worker {address}", peak, baseline[address])
    memory.row("client (this process)", _peak_mib(), None)
    print(f"# accuracy on 5,000 rows {accuracy:.3f}; the n × M features "
          f"({features_bytes / 2**20:,.0f} MiB) were never held: "
          f"the largest process peaked at "
          f"{max([*peaks.values(), _peak_mib()]):,.0f} MiB")


if __name__ == "__main__":
    main()
