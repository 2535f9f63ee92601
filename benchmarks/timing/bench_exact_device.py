"""The exact family on JAX's device: end to end against its floor; the update's cost and error.

0. End to end (the default): CI Split MNIST pixels / 255 →
   ``RandomFeatures(M, random_state=0)`` → the exact classifier at its
   defaults, ``backend="jax"`` for both steps, learned task by task
   (``partial_fit``) on all 60,000 training images (each task's training
   and validation rows), then the 10,000 test images predicted (FAA, the
   mean of the five tasks' accuracies). Each (model, M) runs in a fresh
   process, so its compilations are its own: JAX's compile time
   (``jax.monitoring``'s trace, lowering and backend-compile durations)
   is summed and reported apart, and ``e2e − compile`` is set against
   the device's floor measured in the same process after the model is
   dropped: the float64 product ΦᵀΦ of n × M rows on the device (random
   rows made there, a task's 12,000 at a time, each block's product added
   into one M × M sum) plus a Cholesky of that sum, both compiled before
   they are timed. ``--quick`` runs small M on a slice of the rows (on a
   CPU, to check that the command works); ``--backend numpy`` gives the
   host's accuracy at the same M.

1. Ratio (``--update-ratio``). A task's update on the device
   (``task_moments(..., backend="jax")``) against ``X.T @ X`` in float64
   on the same rows already on the device, interleaved, ``--repeats``
   times (median of each); rows arrive as float32.

2. Error of the float32 scheme (``--error-features``; float32 products of
   shifted blocks of ``FLOAT32_ROWS`` rows, merged in float64: what
   consumer GPUs run) against the float64 numpy sums on CI Split MNIST's
   first task, pixels → StandardScaler → RandomFeatures(M).

Run::

    # on a GPU: M = 15,000, 25,000 and 50,000, both classifiers
    SKCL_DATA_DIR=../shared/data PYTHONPATH=. python benchmarks/timing/bench_exact_device.py
    # on a CPU, to check that it works (a few minutes)
    SKCL_DATA_DIR=../shared/data PYTHONPATH=. python benchmarks/timing/bench_exact_device.py --quick
    PYTHONPATH=. python benchmarks/timing/bench_exact_device.py --update-ratio --features 1000 2000
    # the float32 scheme's error on CI Split MNIST's first task
    SKCL_DATA_DIR=../shared/data PYTHONPATH=. python benchmarks/timing/bench_exact_device.py \\
        --error-features 2000

Each table is printed as it comes; ``--csv PATH`` writes the first one
printed to PATH (the error table to PATH with ``-error`` before its
suffix).
"""

import os
from pathlib import Path

import numpy as np

from benchmarks import _harness as harness

MODELS = ("gaussian", "least-squares")
# Rows per block of the floor's product (a task's).
FLOOR_BLOCK_ROWS = 12_000


def _once(fn):
    """Seconds of one call of ``fn`` (the ratio's runs are interleaved, one call each)."""
    with harness.Stopwatch() as watch:
        fn()
    return watch.seconds


def ratio_table(n, features, n_classes, repeats, fraction):
    import jax
    import jax.numpy as jnp

    from skcl._exact.task import task_moments

    rows = []
    for d in features:
        rng = np.random.default_rng(0)
        X = (rng.standard_normal((n, d)) + 3).astype(np.float32)
        y = rng.integers(0, n_classes, n)
        w = np.ones(n)
        keys = [(0, c) for c in range(n_classes)]
        with jax.enable_x64(True):
            X_dev = jax.device_put(X.astype(np.float64))
            gram = jax.jit(lambda A: jnp.matmul(A.T, A, precision=jax.lax.Precision.HIGHEST))
            gram(X_dev).block_until_ready()  # compiled before timing
        def product():
            with jax.enable_x64(True):
                gram(X_dev).block_until_ready()

        def update(precision):
            return lambda: task_moments(X, y, w, keys, fraction=fraction, seed=0,
                                        per_group_scatter=False, backend="jax",
                                        precision=precision)

        def host():
            task_moments(X, y, w, keys, fraction=fraction, seed=0, per_group_scatter=False)

        for fn in (update("float64"), update("float32"), host):
            fn()  # the warm-up: compiled before timing
        times = {"product": [], "float64": [], "float32": [], "numpy": []}
        for _ in range(repeats):  # interleaved: the machine's noise hits all alike
            times["product"].append(_once(product))
            times["float64"].append(_once(update("float64")))
            times["float32"].append(_once(update("float32")))
            times["numpy"].append(_once(host))
        med = {k: harness.Timing(v).median for k, v in times.items()}
        rows.append((d, med))
    return rows


def error_table(features, data_dir):
    from sklearn.preprocessing import StandardScaler

    from skcl._exact.task import task_moments
    from skcl.datasets import load_ci_split_mnist
    from skcl.feature_extraction import RandomFeatures

    data = load_ci_split_mnist(data_dir)
    X, y = data.train[0]
    X = X.reshape(len(X), -1).astype(np.float64)
    X = StandardScaler().fit_transform(X)
    out = []
    for m in features:
        H = RandomFeatures(m, backend="numpy", random_state=0).fit_transform(X)
        keys = [(0, c) for c in range(10)]
        groups = np.asarray(y, dtype=np.intp)
        options = dict(fraction=0.0, seed=0, per_group_scatter=False)
        w = np.ones(len(H))
        host = task_moments(H, groups, w, keys, **options)[0]
        for precision in ("float64", "float32"):
            dev = task_moments(H, groups, w, keys, backend="jax", precision=precision,
                               **options)[0]
            rel = np.abs(dev.scatter - host.scatter).max() / np.abs(host.scatter).max()
            diag = np.diag(host.scatter)
            keep = diag > 0  # ReLU features dead on every row have no scatter
            rel_diag = (np.abs(np.diag(dev.scatter) - diag)[keep] / diag[keep]).max()
            rel_mean = np.abs(dev.means - host.means).max() / np.abs(host.means).max()
            out.append((m, len(H), precision, rel, rel_diag, rel_mean))
    return out


def _tasks(data_dir, rows=None, test_rows=None):
    """CI Split MNIST's tasks as flat uint8 pixels (training and validation rows together)."""
    from skcl.datasets import load_ci_split_mnist

    data = load_ci_split_mnist(data_dir)

    def flat(X, keep):
        return X[:keep].reshape(len(X[:keep]), -1)

    train = [(np.vstack([flat(X, rows), flat(Xv, rows)]), np.concatenate([y[:rows], yv[:rows]]))
             for (X, y), (Xv, yv) in zip(data.train, data.validation)]
    test = [(flat(X, test_rows), y[:test_rows]) for X, y in data.test]
    return train, test, data.classes


def _device_floor(n, m):
    """Seconds of the float64 ΦᵀΦ of n × m rows on JAX's device, and of a Cholesky of it."""
    import jax
    import jax.numpy as jnp

    with jax.enable_x64(True):
        highest = jax.lax.Precision.HIGHEST
        block = jax.jit(lambda key, rows: jax.random.normal(key, (rows, m)),
                        static_argnums=1)
        add = jax.jit(lambda S, A: S + jnp.matmul(A.T, A, precision=highest), donate_argnums=0)
        chol = jax.jit(lambda S: jnp.linalg.cholesky(S + n * jnp.eye(m)))
        sizes = [min(FLOOR_BLOCK_ROWS, n - start) for start in range(0, n, FLOOR_BLOCK_ROWS)]
        blocks = [block(jax.random.PRNGKey(i), r) for i, r in enumerate(sizes)]
        S = add(jnp.zeros((m, m)), blocks[0])  # compiled, and warm
        chol(S).block_until_ready()
        S = jnp.zeros((m, m)).block_until_ready()
        with harness.Stopwatch() as product:
            for A in blocks:
                S = add(S, A)
            S.block_until_ready()
        del blocks
        with harness.Stopwatch() as cholesky:
            chol(S).block_until_ready()
        return product.seconds, cholesky.seconds


def end_to_end(model, m, backend, data_dir, rows=None, test_rows=None):
    """One configuration in this process: its figures (a dict)."""
    compile_seconds = [0.0]
    if backend == "jax":
        import jax

        def listen(event, seconds, **_):
            if event.startswith("/jax/core/compile/"):
                compile_seconds[0] += seconds

        jax.monitoring.register_event_duration_secs_listener(listen)
    from skcl import GaussianDiscriminantClassifier, LeastSquaresClassifier
    from skcl.feature_extraction import RandomFeatures
    from skcl.pipeline import make_pipeline

    train, test, classes = _tasks(data_dir, rows, test_rows)
    n = sum(len(y) for _, y in train)
    head = (GaussianDiscriminantClassifier if model == "gaussian"
            else LeastSquaresClassifier)(backend=backend)
    pipe = make_pipeline(RandomFeatures(m, random_state=0, backend=backend), head)
    watch = harness.Stopwatch()  # e2e: from the first update to the last prediction
    for X, y in train:
        pipe.partial_fit(X.astype(np.float32) / 255, y, classes=classes)
    update = watch.seconds
    accuracy = 100 * float(np.mean([np.mean(pipe.predict(X.astype(np.float32) / 255) == y)
                                    for X, y in test]))
    result = {"model": model, "M": m, "rows": n, "backend": backend, "accuracy": accuracy,
              "time_s": watch.seconds, "update_s": update,
              "solve_s": head.solve_time_, "compile_s": compile_seconds[0]}
    if backend == "jax":
        import jax

        device = jax.devices()[0]
        result["device"] = str(getattr(device, "device_kind", device.platform))
        stats = device.memory_stats() if device.platform != "cpu" else None
        result["peak_gb"] = (stats or {}).get("peak_bytes_in_use", float("nan")) / 2**30
        del pipe, head
        result["floor"] = _device_floor(n, m)
    return result


def _csv(args, part=""):
    """Where a table's CSV goes: ``--csv``'s path, ``part`` before its suffix."""
    if not args.csv:
        return None
    path = Path(args.csv)
    return str(path.with_name(f"{path.stem}{part}{path.suffix}"))


def end_to_end_table(args):
    table = harness.Table(
        {"model": "<14", "M": ">6", "rows": ">6", "FAA %": ">6.2f", "e2e s": ">8.1f",
         "compile": ">8.1f", "update": ">8.1f", "solve": ">7.1f", "floor s": ">8.2f",
         "(ΦᵀΦ": ">7.2f", "chol)": ">6.2f", "× floor": ">8.1f", "peak GB": ">7.1f"},
        _csv(args))
    for m in args.components:
        for model in args.models:
            # A fresh process: its compilations are its own; one killed (out
            # of memory, a signal) is a row that says so.
            out = harness.call_isolated("benchmarks.timing.bench_exact_device:end_to_end",
                                        model, m, args.backend, args.data_dir, args.rows,
                                        args.test_rows)
            if not out.ok:
                table.failed(model, m, why=out.why)
                continue
            r = out.value
            product, chol = r.get("floor", (np.nan, np.nan))
            floor = product + chol
            table.row(model, m, r["rows"], r["accuracy"], r["time_s"], r["compile_s"],
                      r["update_s"], r["solve_s"], floor, product, chol,
                      (r["time_s"] - r["compile_s"]) / floor, r.get("peak_gb", np.nan))
    table.close()
    print("\n× floor = (e2e − compile) / floor; e2e: the features, five updates, the solve and "
          "the test predictions")


def main():
    parser = harness.parser(__doc__, data=True, repeats=3,
                            quick="M = 300 and 1,000 on 1,000 rows a task (a CPU check)")
    parser.add_argument("--components", type=int, nargs="+", default=[15000, 25000, 50000],
                        help="M of the end-to-end table")
    parser.add_argument("--models", nargs="+", choices=MODELS, default=list(MODELS))
    parser.add_argument("--backend", choices=["jax", "numpy"], default="jax")
    parser.add_argument("--rows", type=int, help="training (and validation) rows a task")
    parser.add_argument("--test-rows", type=int, help="test rows a task")
    parser.add_argument("--update-ratio", action="store_true",
                        help="the update on the device against the device product XᵀX")
    parser.add_argument("--rows-ratio", type=int, default=20000, help="rows of the ratio")
    parser.add_argument("--features", type=int, nargs="+", default=[1000, 2000],
                        help="D of the ratio")
    parser.add_argument("--classes", type=int, default=10)
    parser.add_argument("--fraction", type=float, default=0.0)
    parser.add_argument("--error-features", type=int, nargs="*", default=[],
                        help="M of the float32 scheme's error table")
    args = parser.parse_args()
    if args.quick:
        args.components, args.rows, args.test_rows = [300, 1000], 500, 500

    # JAX's device is asked of a child: JAX here would take its memory from the runs.
    print(harness.machine_line(device=True))
    if not (args.update_ratio or args.error_features):
        end_to_end_table(args)
    if args.update_ratio:
        table = harness.Table(
            {"D": ">6", "XᵀX (s)": ">9.3f", "f64 update": ">11.3f", "f64 ratio": ">9.2f",
             "f32 update": ">11.3f", "f32 ratio": ">9.2f", "numpy (s)": ">10.3f"}, _csv(args),
            title=f"\n## Update on the device vs the device product XᵀX (float64), "
                  f"n = {args.rows_ratio}, {args.classes} classes, held out {args.fraction}, "
                  f"median of {args.repeats} after a warm-up\n")
        for d, med in ratio_table(args.rows_ratio, args.features, args.classes, args.repeats,
                                  args.fraction):
            table.row(d, med["product"], med["float64"], med["float64"] / med["product"],
                      med["float32"], med["float32"] / med["product"], med["numpy"])
        table.close()
    if args.error_features and args.data_dir:
        errors = harness.Table(
            {"M": ">6", "rows": ">6", "precision": ">9", "max|ΔW|/max|W|": ">15.1e",
             "max rel. diag": ">13.1e", "max|Δμ|/max|μ|": ">15.1e"},
            _csv(args, "-error" if args.update_ratio else ""),
            title="\n## Error against the float64 numpy sums: CI Split MNIST task 1, pixels → "
                  "StandardScaler → RandomFeatures(M)\n")
        for row in error_table(args.error_features, args.data_dir):
            errors.row(*row)
        errors.close()
    print(f"\n# load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
