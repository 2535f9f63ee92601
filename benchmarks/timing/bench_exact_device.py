"""The statistics update on JAX's device against the same-FLOP device product, and its error.

1. Ratio. A task's update on the device
   (``task_moments(..., backend="jax")``: chunks sent to the device, shifted
   by their class's reference and weighted there, their products AᵀA added
   into D×D sums kept there) costs the n·D² multiply-adds of ``X.T @ X`` on
   the device (JAX, float64 in a scoped 64-bit mode) on the same rows,
   already on the device. Both are timed in the same run, interleaved,
   ``--repeats`` times (median of each); the ratio is the update's
   overhead: transfers, the shift, the per-chunk dispatch. Rows arrive as
   float32 (what RandomFeatures gives). On a machine without an
   accelerator JAX's device is the CPU, whose product is no faster than
   numpy's; the numpy update is timed beside it.

2. Error of the float32 scheme (float32 products of shifted blocks of
   ``FLOAT32_ROWS`` rows, merged in float64: what consumer GPUs run)
   against the float64 numpy sums, on real data: CI Split MNIST's first
   task, pixels → StandardScaler → RandomFeatures(M). Max |ΔW| / max |W|
   over the pooled scatter, and the largest relative error of a diagonal
   entry (each feature's own scatter); and the same for float64 on the
   device.

Run::

    PYTHONPATH=. SKCL_DATA_DIR=../shared/data python benchmarks/timing/bench_exact_device.py
    PYTHONPATH=. python benchmarks/timing/bench_exact_device.py --rows 20000 --features 1000 2000
"""

import os

import numpy as np

from benchmarks import _harness as harness


def _once(fn):
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


def main():
    parser = harness.parser(__doc__, data=True, repeats=3, csv=False)
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--features", type=int, nargs="+", default=[1000, 2000])
    parser.add_argument("--classes", type=int, default=10)
    parser.add_argument("--fraction", type=float, default=0.0)
    parser.add_argument("--error-features", type=int, nargs="*", default=[2000])
    args = parser.parse_args()

    import jax

    device = jax.devices()[0]
    print(harness.machine_line(extra=f"JAX on {device.platform} ({device.device_kind})"))
    table = harness.Table(
        {"D": ">6", "XᵀX (s)": ">9.3f", "f64 update": ">11.3f", "ratio": ">6.2f",
         "f32 update": ">11.3f", "ratio ": ">6.2f", "numpy (s)": ">10.3f"},
        title=f"\n## Update on the device vs the device product XᵀX (float64), n = "
              f"{args.rows}, {args.classes} classes, held out {args.fraction}, median of "
              f"{args.repeats} after a warm-up\n")
    for d, med in ratio_table(args.rows, args.features, args.classes, args.repeats,
                              args.fraction):
        table.row(d, med["product"], med["float64"], med["float64"] / med["product"],
                  med["float32"], med["float32"] / med["product"], med["numpy"])
    if args.error_features and args.data_dir:
        errors = harness.Table(
            {"M": ">6", "rows": ">6", "precision": ">9", "max|ΔW|/max|W|": ">15.1e",
             "max rel. diag": ">13.1e", "max|Δμ|/max|μ|": ">15.1e"},
            title="\n## Error against the float64 numpy sums: CI Split MNIST task 1, pixels "
                  "→ StandardScaler → RandomFeatures(M)\n")
        for row in error_table(args.error_features, args.data_dir):
            errors.row(*row)
    print(f"\n# load average {os.getloadavg()[0]:.1f} at the end")

if __name__ == "__main__":
    main()
