"""The exact family against RanDumb on CI Split MNIST's pixels: accuracy, time, memory, floor.

The anchor side by side, each configuration in a fresh process (its peak
resident memory is the process's own, read before the floor below is
measured), on all 60,000 MNIST training images
(``load_ci_split_mnist``'s training and validation rows, five tasks of two
digits) and the 10,000 test images:

* ``skcl Gaussian`` / ``skcl least squares``: pixels / 255 →
  ``RandomFeatures(M, random_state=0)`` → the exact classifier, every
  setting at its default, learned task by task with ``partial_fit``; the
  solve runs once, at the first prediction. ``time`` is the whole fit:
  the features, the five updates, the solve and the predictions of the
  test tasks.
* ``RanDumb``: RanDumb's code path (``src/main.py``): the pixels
  normalised by one scalar, ``(x/255 - 0.1307)/0.3081``, →
  ``RBFSampler(gamma="scale", n_components=M)`` →
  ``LinearDiscriminantAnalysis(solver="lsqr", covariance_estimator=OAS())``
  fitted once on all training rows (what its streaming update ends with),
  then the test predictions.
* ``floor``: measured in the same process after each skcl fit, on the same
  machine and threads: one product ΦᵀΦ of the 60,000 × M features in the
  update's precision (on the CPU float32 blocks of
  ``skcl._exact.moments.FLOAT32_BLOCK_ROWS`` rows, each block's product
  added into a float64 sum, as the update multiplies float32 features)
  plus one Cholesky of an M × M positive
  definite matrix (the faster of numpy's and scipy's; above
  ``skcl._exact.linalg.CHOLESKY_MAX_DIRECT``, where their LAPACK crashes
  in OpenBLAS 0.3.30/0.3.31, skcl's blocked Cholesky, and the product
  from skcl's blocks: see ``bench_openblas_crash.py``). ``× floor`` is the
  fit's time over it.

FAA is the mean of the five test tasks' accuracies (skcl's
``final_average_accuracy``). ``--backend jax`` runs the features, the
updates and the solve through JAX on its default device (a GPU where
there is one), and measures the floor there (JAX's product and Cholesky,
in float32 and float64).

Run::

    SKCL_DATA_DIR=../shared/data PYTHONPATH=. python benchmarks/timing/bench_anchor.py \\
        --components 2000 5000 10000
    SKCL_DATA_DIR=... PYTHONPATH=. python benchmarks/timing/bench_anchor.py --components 25000 \\
        --backend jax --models gaussian least-squares
"""


import numpy as np
import scipy.linalg

# The same tasks as the units benchmark.
from benchmarks import _harness as harness
from benchmarks.accuracy.bench_feature_units import _tasks
from skcl._exact.openblas import refuse_wide_products
from skcl.exceptions import CrashingBLASError

MODELS = ("gaussian", "least-squares", "randumb")
# The floor's product ΦᵀΦ on the host, a block of rows at a time: a task's.
FLOOR_BLOCK_ROWS = 12_000


def _faa(predict, test):
    return 100 * float(np.mean([np.mean(predict(X) == y) for X, y in test]))


def _floor(n, m, backend):
    """Seconds of ΦᵀΦ (n × m, the update's precision) plus a Cholesky of m × m, here."""
    rng = np.random.default_rng(0)
    if backend == "jax":
        import jax
        import jax.numpy as jnp

        phi = rng.standard_normal((n, m), dtype=np.float32)

        out = {}
        for name, dtype in (("float32", jnp.float32), ("float64", jnp.float64)):
            with jax.enable_x64(dtype == jnp.float64):
                P = jax.device_put(phi.astype(dtype))
                gram = jax.jit(lambda A: A.T @ A)
                chol = jax.jit(jnp.linalg.cholesky)
                G = gram(P).block_until_ready()  # compiled and warm
                G = G + n * jnp.eye(m, dtype=dtype)
                chol(G).block_until_ready()
                with harness.Stopwatch() as product:
                    gram(P).block_until_ready()
                with harness.Stopwatch() as factor:
                    chol(G).block_until_ready()
                out[name] = (product.seconds, factor.seconds)
                del P, G
        return out
    # In the update's precision: the features are float32, so skcl
    # multiplies them in float32 blocks of FLOAT32_BLOCK_ROWS rows, each
    # block's product added into the float64 G (moments.float32_products):
    # the floor does the same, on a task's rows at a time (it holds G, one
    # block's product and a task's float32 rows, not the 6 GB of all rows
    # at M = 25,000). Only the products and additions are timed. Wider
    # than OpenBLAS's threaded syrk survives, skcl's blocked product
    # (benchmarks/timing/bench_openblas_crash.py maps where it crashes).
    from skcl._exact.linalg import CHOLESKY_MAX_DIRECT
    from skcl._exact.linalg import cholesky as blocked_cholesky
    from skcl._exact.moments import FLOAT32_BLOCK_ROWS, gram

    G = np.zeros((m, m))
    block_product = np.empty((m, m), dtype=np.float32)
    product = 0.0
    for start in range(0, n, FLOOR_BLOCK_ROWS):
        rows = rng.standard_normal((min(FLOOR_BLOCK_ROWS, n - start), m), dtype=np.float32)
        with harness.Stopwatch() as watch:
            for a in range(0, len(rows), FLOAT32_BLOCK_ROWS):
                G += gram(rows[a:a + FLOAT32_BLOCK_ROWS], out=block_product)
        product += watch.seconds
        del rows
    del block_product
    G[np.diag_indices(m)] += n
    # The faster of numpy's and scipy's (each its own OpenBLAS): 8.3 and 6.1 s
    # at M = 10,000 on two cores. Where their potrf would crash (its
    # trailing updates are the same threaded syrk), skcl's Cholesky by
    # block columns, the one the model runs there.
    choleskys = []
    direct = (np.linalg.cholesky,
              lambda A: scipy.linalg.cholesky(A, lower=True, check_finite=False))
    for cholesky in direct if m <= CHOLESKY_MAX_DIRECT else (blocked_cholesky,):
        with harness.Stopwatch() as watch:
            cholesky(G)
        choleskys.append(watch.seconds)
    return {"update": (product, min(choleskys))}


def run_one(model, m, data_dir, backend):
    """One configuration in this process: a dict of its figures."""
    train, test, classes = _tasks("mnist", data_dir)
    n = sum(len(y) for _, y in train)
    result = {"model": model, "M": m, "backend": backend, "rows": n}
    if model == "randumb":
        from sklearn.covariance import OAS
        from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
        from sklearn.kernel_approximation import RBFSampler
        from sklearn.pipeline import make_pipeline

        def normalise(X):  # RanDumb's feats/get_feats.py for MNIST
            return (X.astype(np.float32) / 255 - 0.1307) / 0.3081

        watch = harness.Stopwatch()
        pipe = make_pipeline(
            RBFSampler(gamma="scale", n_components=m, random_state=0),
            LinearDiscriminantAnalysis(solver="lsqr", covariance_estimator=OAS()),
        ).fit(normalise(np.vstack([X for X, _ in train])), np.concatenate([y for _, y in train]))
        result["accuracy"] = _faa(lambda X: pipe.predict(normalise(X)), test)
        result["time_s"] = watch.seconds
    else:
        from skcl import GaussianDiscriminantClassifier, LeastSquaresClassifier
        from skcl.feature_extraction import RandomFeatures
        from skcl.pipeline import make_pipeline

        head = (GaussianDiscriminantClassifier if model == "gaussian"
                else LeastSquaresClassifier)(backend=backend)
        pipe = make_pipeline(RandomFeatures(m, random_state=0, backend=backend), head)
        watch = harness.Stopwatch()
        for X, y in train:
            pipe.partial_fit(X.astype(np.float32) / 255, y, classes=classes)
        result["update_s"] = watch.seconds
        result["accuracy"] = _faa(lambda X: pipe.predict(X.astype(np.float32) / 255), test)
        result["time_s"] = watch.seconds
        result["solve_s"] = getattr(head, "solve_time_", float("nan"))
    # The model's peak, read before the floor's arrays (its M × M sum and a
    # block of rows) exist, which would otherwise be counted as the model's.
    result["peak_rss_gb"] = harness.peak_rss_gb()
    if model != "randumb":
        del pipe, head
        result["floor"] = _floor(n, m, backend)
    return result


def main():
    parser = harness.parser(__doc__, data=True)
    parser.add_argument("--components", type=int, nargs="+", default=[2000])
    parser.add_argument("--models", nargs="+", choices=MODELS, default=list(MODELS))
    parser.add_argument("--backend", choices=["numpy", "jax"], default="numpy")
    args = parser.parse_args()
    # JAX's device is asked of a child: JAX in this process would take most
    # of the device's memory (XLA preallocates) from the runs below.
    print(harness.machine_line(device=args.backend == "jax"))
    table = harness.Table({"model": "<18", "M": ">6", "FAA %": ">6.2f", "time s": ">8.1f",
                           "solve s": ">8.2f", "floor s": ">8.1f", "× floor": ">7.2f",
                           "chol s": ">7.2f", "solve/chol": ">10.2f", "peak GB": ">7.2f",
                           "float32 floor s (product, Cholesky)": ""}, args.csv)
    names = {"gaussian": "skcl Gaussian", "least-squares": "skcl least squares",
             "randumb": "RanDumb"}
    for m in args.components:
        for model in args.models:
            if model == "randumb":
                # scikit-learn's M-column products would segfault in the
                # loaded OpenBLAS half an hour in: refused before MNIST loads.
                try:
                    refuse_wide_products(m, f"RanDumb's code path at M = {m}")
                except CrashingBLASError as refused:
                    table.failed(names[model], m, why=str(refused))
                    continue
            # Each in a fresh process: a child killed by a signal (a segfault,
            # the OOM killer) is a row, and the run goes on.
            out = harness.call_isolated("benchmarks.timing.bench_anchor:run_one", model, m,
                                        args.data_dir, args.backend)
            if not out.ok:
                table.failed(names[model], m, why=out.why)
                continue
            r = out.value
            floors = r.get("floor", {})
            # The floor in the update's precision on the CPU (float32 blocks
            # into float64 sums); on a GPU float64, and float32 printed after.
            product, chol = floors.get("update", floors.get("float64", (np.nan, np.nan)))
            floor = product + chol
            extra = None
            if "float32" in floors:
                product32, chol32 = floors["float32"]
                extra = f"{product32 + chol32:.2f} ({product32:.2f}, {chol32:.2f})"
            solve = r.get("solve_s", np.nan)
            table.row(names[model], m, r["accuracy"], r["time_s"], solve, floor,
                      r["time_s"] / floor if floors else np.nan, chol, solve / chol,
                      r["peak_rss_gb"], extra)
    table.close()

if __name__ == "__main__":
    main()
