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

import argparse
import os
import platform
import time

import numpy as np


def _median_time(fn, repeats):
    times = []
    for _ in range(repeats):
        tic = time.perf_counter()
        fn()
        times.append(time.perf_counter() - tic)
    return float(np.median(times))


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

        for fn in (update("float64"), update("float32")):
            fn()  # compiled before timing
        times = {"product": [], "float64": [], "float32": [], "numpy": []}
        for _ in range(repeats):  # interleaved: the machine's noise hits all alike
            times["product"].append(_median_time(product, 1))
            times["float64"].append(_median_time(update("float64"), 1))
            times["float32"].append(_median_time(update("float32"), 1))
            times["numpy"].append(_median_time(host, 1))
        med = {k: float(np.median(v)) for k, v in times.items()}
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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--features", type=int, nargs="+", default=[1000, 2000])
    parser.add_argument("--classes", type=int, default=10)
    parser.add_argument("--fraction", type=float, default=0.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--error-features", type=int, nargs="*", default=[2000])
    parser.add_argument("--data-dir", default=os.environ.get("SKCL_DATA_DIR"))
    args = parser.parse_args()

    import jax
    import sklearn

    device = jax.devices()[0]
    print(f"# JAX {jax.__version__} on {device.platform} ({device.device_kind}), numpy "
          f"{np.__version__}, scikit-learn {sklearn.__version__}, {os.cpu_count()} CPUs "
          f"({platform.processor() or platform.machine()}), load average "
          f"{os.getloadavg()[0]:.1f} at the start")
    print(f"\n## Update on the device vs the device product XᵀX (float64), n = {args.rows}, "
          f"{args.classes} classes, held out {args.fraction}, median of {args.repeats}\n")
    print(f"{'D':>6} {'XᵀX (s)':>9} {'f64 update':>11} {'ratio':>6} {'f32 update':>11} "
          f"{'ratio':>6} {'numpy (s)':>10}")
    for d, med in ratio_table(args.rows, args.features, args.classes, args.repeats,
                              args.fraction):
        print(f"{d:>6} {med['product']:>9.3f} {med['float64']:>11.3f} "
              f"{med['float64'] / med['product']:>6.2f} {med['float32']:>11.3f} "
              f"{med['float32'] / med['product']:>6.2f} {med['numpy']:>10.3f}")
    if args.error_features and args.data_dir:
        print("\n## Error against the float64 numpy sums: CI Split MNIST task 1, pixels → "
              "StandardScaler → RandomFeatures(M)\n")
        print(f"{'M':>6} {'rows':>6} {'precision':>9} {'max|ΔW|/max|W|':>15} "
              f"{'max rel. diag':>13} {'max|Δμ|/max|μ|':>15}")
        for m, n, precision, rel, rel_diag, rel_mean in error_table(args.error_features,
                                                                     args.data_dir):
            print(f"{m:>6} {n:>6} {precision:>9} {rel:>15.1e} {rel_diag:>13.1e} "
                  f"{rel_mean:>15.1e}")
    print(f"\n# load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
