"""The exact family's solve: once at first use, and on JAX's device.

Two tables, one run:

1. **Solve when needed.** ``LeastSquaresClassifier`` (10 classes, D
   features) learns ``--chunks`` chunks of ``--rows`` rows with
   ``partial_fit`` and then predicts: *after*, the solve runs once at the
   first prediction; *before*, the former eager rule (a solve after
   every ``partial_fit``), reproduced by reading ``coef_`` after each call
   and timed on the first ``--eager-chunks`` chunks, the total then
   extrapolated to all chunks (marked so) unless it is all of them;
   against one ``fit`` on all the rows.
2. **The solve against a Cholesky, on the host.** At M = ``--host-sizes``
   features: a Cholesky of the M×M scatter (the floor: the faster of
   numpy's and scipy's), the solve
   *before* (an eigendecomposition: ``numpy.linalg.eigh`` of Σ for the
   Gaussian, of S with V for least squares' GCV) and *after* (the
   Gaussian's OAS and one Cholesky factor; least squares' reduction to
   band form, GCV over the α grid by band solves and the coefficients),
   each as a ratio to the Cholesky, measured once each in the same run.
   Least squares runs twice: reduced to tridiagonal form (LAPACK
   ``dsytrd``, the path before the two-stage reduction) and to a band
   (``dsytrd_sy2sb``, what ``LeastSquaresClassifier`` runs from
   ``TWO_STAGE_MIN_SIZE`` features on). The eigh columns are run up to
   ``--before-max``.
3. **The solve on the device.** The least-squares solve through JAX in
   float64 (``linalg=solve_jax``), as a ratio to ``jnp.linalg.eigh`` of the
   same D×D matrix on the same device. Median of ``--repeats`` after one
   warm-up.

Run::

    PYTHONPATH=. python benchmarks/timing/bench_exact_solve.py --skip-chunks --sizes 1000 \
        --host-sizes 2000 5000 10000 --before-max 5000                 # 2 cores
    PYTHONPATH=. python benchmarks/timing/bench_exact_solve.py --sizes 2000 5000 10000  # GPU
"""

import os

import numpy as np
import scipy.linalg

from benchmarks import _harness as harness
from skcl import LeastSquaresClassifier
from skcl._exact import linalg as host_linalg
from skcl._exact import solve_jax, two_stage
from skcl._exact.gaussian import fit_gaussian, oas_shrinkage
from skcl._exact.least_squares import (
    FALLBACK_RELATIVE_ALPHA,
    RELATIVE_ALPHA_GRID,
    RidgeFit,
    _centred,
    class_targets,
    fit_from_spectrum,
    gcv_scores,
    ridge_spectrum,
)
from skcl._exact.moments import GroupMoments, gram


def chunk(seed, rows, d, n_classes=10):
    """Rows of 10 shifted Gaussian classes, float32, drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, rows)
    X = rng.standard_normal((rows, d), dtype=np.float32)
    X[:, :n_classes] += 2 * np.eye(n_classes, dtype=np.float32)[y]
    return X, y


def solve_when_needed(args):
    d, classes = args.features, np.arange(10)
    chunks = [chunk(i, args.rows, d) for i in range(args.chunks)]
    X_all = np.concatenate([X for X, _ in chunks])
    y_all = np.concatenate([y for _, y in chunks])
    probe = X_all[:1]
    out = {}

    out["one fit on all rows"] = (_time_once(
        lambda: LeastSquaresClassifier(backend="numpy").fit(X_all, y_all).predict(probe)), "")
    X_all = None  # freed before the chunks are learned

    def lazy():
        clf = LeastSquaresClassifier(backend="numpy")
        for X, y in chunks:
            clf.partial_fit(X, y, classes=classes)
        clf.predict(probe)

    out["partial_fit per chunk, solve at first use (after)"] = (_time_once(lazy), "")

    eager = min(args.eager_chunks, args.chunks)

    def eagerly():
        clf = LeastSquaresClassifier(backend="numpy")
        for X, y in chunks[:eager]:
            clf.partial_fit(X, y, classes=classes)
            _ = clf.coef_  # the eager rule: a solve after every call

    seconds = _time_once(eagerly) * args.chunks / eager
    note = "" if eager == args.chunks else f" (extrapolated from {eager} chunks)"
    out["partial_fit per chunk, solve after each (before)"] = (seconds, note)

    table = harness.Table({"run": "", "seconds": ".2f", "× one fit": ".2f"}, markdown=True,
                          title=f"\n{args.chunks} chunks of {args.rows} rows, D = {d}, 10 "
                                "classes, numpy on the host, one run each\n")
    base = out["one fit on all rows"][0]
    for name, (seconds, note) in out.items():
        table.row(f"{name}{note}", seconds, seconds / base)


def moments_of_size(d, n_classes=10, seed=0):
    """Class moments whose centred scatter is a well-conditioned D×D matrix."""
    rng = np.random.default_rng(seed)
    low = rng.standard_normal((d, 256)) / 16
    scatter = gram(low.T)  # low lowᵀ (numpy's syrk crashes above 16,384: bench_openblas_crash)
    scatter[np.diag_indices(d)] += np.linspace(1.0, 4.0, d)
    scatter *= 1000.0
    means = rng.standard_normal((n_classes, d)) / 10
    counts = np.full(n_classes, 100.0)
    return GroupMoments(tuple((0, c) for c in range(n_classes)), counts, means, scatter, None)


def host_solve(moments, targets, linalg=None, tridiagonal=False):
    """The least-squares solve at ``alpha="auto"`` (what ``backend`` runs).

    ``tridiagonal=True``: S reduced to tridiagonal form (``dsytrd``) at any
    size, then the same steps (the reduction before the two-stage one).
    """
    from skcl._exact.base import choose

    two_stage_from = host_linalg.TWO_STAGE_MIN_SIZE
    if tridiagonal:
        host_linalg.TWO_STAGE_MIN_SIZE = np.inf
    try:
        spectrum = (ridge_spectrum(moments, targets) if linalg is None
                    else ridge_spectrum(moments, targets, linalg))
    finally:
        host_linalg.TWO_STAGE_MIN_SIZE = two_stage_from
    alphas = np.asarray(RELATIVE_ALPHA_GRID) * spectrum.scale
    alpha = choose(alphas, gcv_scores(spectrum, alphas),
                    FALLBACK_RELATIVE_ALPHA * spectrum.scale, "min")
    return fit_from_spectrum(spectrum, alpha)


def least_squares_before(moments, targets):
    """The solve before the tridiagonal reduction: eigh of S, V's products."""
    from skcl._exact.base import choose

    x_bar, t_bar, S, C = _centred(moments, targets)
    values, V = np.linalg.eigh(S)
    values = np.clip(values, 0, None)
    projected = V.T @ C
    total_squares = float(moments.counts @ ((targets - t_bar) ** 2).sum(1))
    scale = float(values.mean()) or 1.0
    alphas = np.asarray(RELATIVE_ALPHA_GRID) * scale
    from skcl._exact.least_squares import _gcv

    power = ((projected / np.sqrt(scale)) ** 2).sum(1)
    scores = _gcv(values / scale, power, total_squares, moments.total, alphas / scale)
    alpha = choose(alphas, scores, FALLBACK_RELATIVE_ALPHA * scale, "min")
    coef = V @ (projected / (values + alpha)[:, None])
    return RidgeFit(coef, t_bar - x_bar @ coef)


def gaussian_before(moments):
    """The Gaussian's solve before the Cholesky factor: OAS, eigh of Σ."""
    s, target = oas_shrinkage(moments.scatter, moments.total)
    covariance = (1 - s) * (moments.scatter / moments.total)
    covariance[np.diag_indices_from(covariance)] += s * target
    values, vectors = np.linalg.eigh(covariance)
    return np.maximum(values, 1e-10 * target.mean()), vectors


def gaussian_after(moments):
    """The Gaussian's solve: OAS, one Cholesky factor (``shrinkage="auto"``)."""
    s, target = oas_shrinkage(moments.scatter, moments.total)
    return fit_gaussian(moments, s, True, target)


def _time_once(run):
    """One run's seconds: these solves take minutes at the largest M."""
    with harness.Stopwatch() as watch:
        run()
    return watch.seconds


def solve_against_cholesky(args):
    found = two_stage.routines()
    print("\nThe solve against a Cholesky of the same M×M, on the host (seconds, one "
          f"run each; load average before: {os.getloadavg()[0]:.2f}; band of "
          f"{host_linalg.BAND_WIDTH} sub-diagonals from "
          f"{found.library if found else 'no LAPACK with dsytrd_sy2sb: tridiagonal only'})\n")
    print("Cholesky: the faster of numpy's and scipy's (each LAPACK potrf of its own OpenBLAS), "
          "the ratios' unit; above skcl._exact.linalg.CHOLESKY_MAX_DIRECT "
          f"({host_linalg.CHOLESKY_MAX_DIRECT:,}), where their potrf crashes in OpenBLAS "
          "0.3.30/0.3.31, skcl's Cholesky by block columns (both columns).\n")
    table = harness.Table(
        {"M": ",", "Cholesky (numpy / scipy)": "", "Gaussian before (eigh)": "", "after": ".2f",
         "after / Cholesky": ".2f", "least squares before (eigh)": "", "tridiagonal": ".2f",
         "band (after)": ".2f", "tridiagonal / Cholesky": ".2f", "band / Cholesky": ".2f"},
        markdown=True)

    def before(run, m):
        return f"{_time_once(run):.2f}" if m <= args.before_max else "not run"

    for m in args.host_sizes:
        moments = moments_of_size(m)
        targets = class_targets(10)
        if m <= host_linalg.CHOLESKY_MAX_DIRECT:
            by_numpy = _time_once(lambda: np.linalg.cholesky(moments.scatter))
            by_scipy = _time_once(lambda: scipy.linalg.cholesky(moments.scatter, lower=True,
                                                                check_finite=False))
        else:  # their potrf crashes here (bench_openblas_crash.py): skcl's blocked one
            by_numpy = by_scipy = _time_once(lambda: host_linalg.cholesky(moments.scatter))
        cholesky = min(by_numpy, by_scipy)
        g_before = before(lambda: gaussian_before(moments), m)
        g_after = _time_once(lambda: gaussian_after(moments))
        ls_before = before(lambda: least_squares_before(moments, targets), m)
        ls_tridiagonal = _time_once(lambda: host_solve(moments, targets, tridiagonal=True))
        ls_after = _time_once(lambda: host_solve(moments, targets))
        table.row(m, f"{by_numpy:.2f} / {by_scipy:.2f}", g_before, g_after, g_after / cholesky,
                  ls_before, ls_tridiagonal, ls_after, ls_tridiagonal / cholesky,
                  ls_after / cholesky)
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")


def _median_time(run, repeats):
    return harness.timeit(run, repeats).median  # the warm-up compiles and allocates


def solve_on_device(args):
    import jax
    import jax.numpy as jnp

    table = harness.Table(
        {"D": ",", "device eigh (s)": ".3f", "device solve (s)": ".3f", "solve / eigh": ".2f",
         "numpy solve on the host (s)": ".3f"}, markdown=True,
        title=f"\nThe least-squares solve through JAX, float64, on {jax.devices()[0]} "
              f"(median of {args.repeats} after a warm-up)\n")
    for d in args.sizes:
        moments = moments_of_size(d)
        targets = class_targets(10)
        with jax.enable_x64(True):
            S = jnp.asarray(moments.scatter)
            eigh = _median_time(lambda S=S: jax.block_until_ready(jnp.linalg.eigh(S)),
                                args.repeats)
        solve = _median_time(lambda m=moments, t=targets: host_solve(m, t, solve_jax),
                             args.repeats)
        host = (_median_time(lambda m=moments, t=targets: host_solve(m, t), 1)
                if d <= args.host_max else float("nan"))
        table.row(d, eigh, solve, solve / eigh, host)


def main():
    parser = harness.parser(__doc__, repeats=3, csv=False)
    parser.add_argument("--chunks", type=int, default=600)
    parser.add_argument("--rows", type=int, default=100)
    parser.add_argument("--features", type=int, default=2000)
    parser.add_argument("--eager-chunks", type=int, default=20,
                        help="chunks timed with a solve after each (the rest extrapolated)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 2000])
    parser.add_argument("--host-max", type=int, default=5000,
                        help="largest D solved with numpy on the host too")
    parser.add_argument("--host-sizes", type=int, nargs="*", default=[2000, 5000],
                        help="M of the host's solve against Cholesky (2,000, 5,000, 10,000 for "
                             "the issue's figures)")
    parser.add_argument("--before-max", type=int, default=5000,
                        help="largest M of the host's eigh columns (the paths before)")
    parser.add_argument("--skip-chunks", action="store_true")
    parser.add_argument("--skip-device", action="store_true")
    args = parser.parse_args()
    print(harness.machine_line())
    if not args.skip_chunks:
        solve_when_needed(args)
    if args.host_sizes:
        solve_against_cholesky(args)
    if not args.skip_device:
        solve_on_device(args)


if __name__ == "__main__":
    main()
