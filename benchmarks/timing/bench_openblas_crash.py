"""Where OpenBLAS's threaded syrk crashes: a map of probes in fresh processes.

OpenBLAS 0.3.30 (SciPy 1.17's wheel) and 0.3.31 (numpy 2.4's) segfault
in their threaded syrk for wide products (``A.T @ A`` with A of about
1,400 rows and 23,000 columns, on two threads), and LAPACK's Cholesky
(``potrf``) calls that syrk for its trailing updates. Each probe below
runs one operation in a fresh ``python -c`` child with
``OPENBLAS_NUM_THREADS`` set, so a crash kills the probe and not the map.
A probe is ``ok`` (with its seconds), ``SIGSEGV`` (the child died by
signal 11: returncode -11), ``timeout`` (alive when its limit ran out:
no crash in that time, not a finished run) or another failure.

Operations (A is rows × columns float64, G a columns × columns positive
definite matrix):

* ``numpy_syrk``: ``A.T @ A`` (numpy's OpenBLAS, syrk).
* ``scipy_dsyrk``: ``scipy.linalg.blas.dsyrk(1.0, A.T)`` (SciPy's OpenBLAS).
* ``scipy_dsyr2k``: ``scipy.linalg.blas.dsyr2k(1.0, A.T, B.T)`` (B: A's
  rows reversed), the rank-2k update of LAPACK's reductions to
  tridiagonal and band form (``dsytrd``, ``dsytrd_sy2sb``: 32 and 64 rows).
* ``skcl_gram``: ``skcl._exact.moments.gram(A)``, skcl's product.
* ``numpy_cholesky`` / ``scipy_cholesky`` / ``skcl_cholesky``: the lower
  Cholesky factor of G by ``numpy.linalg.cholesky``,
  ``scipy.linalg.cholesky`` (in place) and ``skcl._exact.linalg.cholesky``
  (in place); rows do not apply. ``skcl_blocked_cholesky`` is skcl's
  Cholesky by block columns at any order (skcl takes it above
  ``DIRECT_MAX_COLUMNS``), to time it against LAPACK's.
* ``library_syrk`` / ``library_potrf``: ``cblas_dsyrk`` (as numpy calls it
  for ``A.T @ A``) and LAPACKE's ``dpotrf`` of another OpenBLAS through
  ctypes: ``--library`` names the ``libscipy_openblas64_.so`` of an
  unpacked scipy-openblas64 wheel (``pip download scipy-openblas64==V``),
  to try a release without installing it.

The default grid took about 35 minutes on two cores shared with a load
near 15 (a crash ends a probe early; a probe that runs pays the whole
product; ``--timeout`` bounds each) and holds at most ``--max-gb`` in any
probe. Run it
alone, niced, one probe at a time (the script never runs two)::

    nice -n 19 python benchmarks/timing/bench_openblas_crash.py --csv map.csv
    nice -n 19 python benchmarks/timing/bench_openblas_crash.py \\
        --probe numpy_syrk:23000:256:2 --probe numpy_cholesky:23000:0:2
"""

import os

from benchmarks import _harness as harness

# One child per probe: it builds its operands (not timed), runs the
# operation once and prints its seconds.
_SETUP = {
    "product": (
        "import numpy as np\n"
        "A = np.random.default_rng(0).standard_normal(({rows}, {columns}))\n"
    ),
    "cholesky": (
        "import numpy as np\n"
        "G = np.full(({columns}, {columns}), 0.5)\n"  # 0.5·11ᵀ + M·I: positive definite
        "G[np.diag_indices({columns})] += {columns}\n"
    ),
}
_LIBRARY = (
    "import os; from ctypes import CDLL, POINTER, c_char, c_double, c_int, c_int64 as I\n"
    "lib = CDLL(os.environ['PROBE_LIBRARY'])\n"
    "lib.scipy_openblas_set_num_threads64_(c_int(int(os.environ['OPENBLAS_NUM_THREADS'])))\n"
    "def ptr(a): return a.ctypes.data_as(POINTER(c_double))\n"
)
_OPERATIONS = {
    "numpy_syrk": ("product", "A.T @ A"),
    "scipy_dsyrk": ("product", "import scipy.linalg.blas as b; b.dsyrk(1.0, A.T, lower=1)"),
    "scipy_dsyr2k": ("product", "import scipy.linalg.blas as b; b.dsyr2k(1.0, A.T, A[::-1].T, "
                                "lower=1)"),
    "skcl_gram": ("product", "from skcl._exact.moments import gram; gram(A)"),
    "numpy_cholesky": ("cholesky", "np.linalg.cholesky(G)"),
    "scipy_cholesky": ("cholesky", "import scipy.linalg as s; "
                                   "s.cholesky(G.T, lower=True, overwrite_a=True, "
                                   "check_finite=False)"),
    "skcl_cholesky": ("cholesky", "from skcl._exact.linalg import cholesky; "
                                  "cholesky(G, overwrite=True)"),
    # Another OpenBLAS (--library: a scipy-openblas64 wheel's, unpacked),
    # through ctypes, as numpy calls it: cblas_dsyrk on row-major A, potrf.
    "library_syrk": ("product", _LIBRARY + "lib.scipy_cblas_dsyrk64_(c_int(101), c_int(121), "
                     "c_int(112), I({columns}), I({rows}), c_double(1.0), ptr(A), I({columns}), "
                     "c_double(0.0), ptr(np.empty(({columns}, {columns}))), I({columns}))"),
    "library_potrf": ("cholesky", _LIBRARY + "assert not lib.scipy_LAPACKE_dpotrf64_(c_int(102), "
                      "c_char(b'L'), I({columns}), ptr(G), I({columns}))"),
    # skcl's blocked Cholesky at any order, to time it against LAPACK's
    "skcl_blocked_cholesky": ("cholesky", "from skcl._exact.linalg import "
                                          "_left_looking_cholesky as f; f(G.T)"),
}
# The map of benchmarks/…'s first runs (2026-12-07): the crash's edge in
# columns at the update's chunk rows (1,342 at 25,000 columns, 2,048 at
# 16,384), at 256 rows, at a few rows (coarsen's class spreads), at a
# task's 12,000 (the floor's blocks); the Choleskys around 16,384; the
# rank-2k update of LAPACK's reductions; skcl's own at 25,000 and 30,000.
_DEFAULT = [
    # numpy's syrk, two threads
    *[("numpy_syrk", c, 1_342, 2) for c in (8_192, 12_000, 14_000, 15_000, 16_384, 20_000,
                                             23_000, 25_000)],
    *[("numpy_syrk", c, 2_048, 2) for c in (12_000, 14_000, 16_384)],
    ("numpy_syrk", 20_000, 1_678, 2), ("numpy_syrk", 8_192, 4_096, 2),
    ("numpy_syrk", 8_192, 12_000, 2), ("numpy_syrk", 23_000, 8_192, 2),
    ("numpy_syrk", 25_000, 12_000, 2),
    *[("numpy_syrk", c, 256, 2) for c in (16_384, 18_000, 20_000, 22_000, 23_000)],
    *[("numpy_syrk", c, r, 2) for r in (16, 64, 200, 300) for c in (25_000, 30_000)],
    ("numpy_syrk", 16_384, 64, 2), ("numpy_syrk", 20_000, 64, 2),
    ("numpy_syrk", 25_000, 256, 1),  # one thread: the control
    # SciPy's syrk and syr2k
    *[("scipy_dsyrk", c, 256, 2) for c in (22_000, 23_000, 25_000)],
    ("scipy_dsyrk", 30_000, 200, 2), ("scipy_dsyrk", 25_000, 1_342, 2),
    ("scipy_dsyr2k", 25_000, 32, 2), ("scipy_dsyr2k", 25_000, 64, 2),
    ("scipy_dsyr2k", 20_000, 256, 2),
    # the Choleskys
    *[(op, c, 0, 2) for op in ("numpy_cholesky", "scipy_cholesky")
      for c in (10_000, 12_000, 14_000, 16_384, 22_000, 25_000)],
    # skcl's own
    ("skcl_gram", 30_000, 200, 2), ("skcl_gram", 25_000, 256, 2),
    ("skcl_gram", 25_000, 1_342, 2), ("skcl_cholesky", 25_000, 0, 2),
]


def probe(op, columns, rows):
    """One probe, in the child: build the operands (untimed), run the operation once; seconds."""
    kind, call = _OPERATIONS[op]
    preamble, _, call = call.rpartition("\n")  # a library's loading is not timed
    scope = {}
    exec(_SETUP[kind].format(rows=rows, columns=columns) + preamble, scope)
    with harness.Stopwatch() as watch:
        exec(call.format(rows=rows, columns=columns), scope)
    return watch.seconds


def gigabytes(op, columns, rows):
    """Memory the probe holds at its peak, estimated (GB)."""
    square = columns * columns * 8 / 1e9
    if _OPERATIONS[op][0] == "product":
        return rows * columns * 8 / 1e9 + square
    return square * (2 if op == "numpy_cholesky" else 1)  # numpy's returns a new array


def run_probe(op, columns, rows, threads, timeout, library=None):
    """(outcome, seconds): 'ok' and the operation's time, or why not and the wall time."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads))
    if library:
        env["PROBE_LIBRARY"] = library
    out = harness.call_isolated("benchmarks.timing.bench_openblas_crash:probe", op, columns,
                                rows, timeout=timeout, env=env)
    return ("ok", out.value) if out.ok else (out.why[:60], out.seconds)


def header():
    """Versions, kernels and the environment that decides OpenBLAS's kernel."""
    import scipy.linalg  # noqa: F401  (loads SciPy's OpenBLAS for threadpoolctl)
    from threadpoolctl import threadpool_info

    lines = [harness.machine_line()]
    for info in threadpool_info():
        if info.get("internal_api") == "openblas":
            lines.append(f"# {info['internal_api']} {info['version']} "
                         f"({info.get('architecture')}, {info.get('threading_layer')}): "
                         f"{os.path.basename(info['filepath'])}")
    for name in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OPENBLAS_NUM_THREADS"):
        lines.append(f"# {name}={os.environ.get(name, '(unset)')}")
    return "\n".join(lines)


def main():
    parser = harness.parser(__doc__)
    parser.add_argument("--probe", action="append", metavar="OP:COLUMNS:ROWS:THREADS",
                        help="probe these instead of the default grid (repeatable)")
    parser.add_argument("--timeout", type=float, default=120.0,
                        help="seconds a probe may run (default 120)")
    parser.add_argument("--max-gb", type=float, default=12.0,
                        help="skip probes estimated above this many GB (default 12)")
    parser.add_argument("--library", help="the libscipy_openblas64_.so of a scipy-openblas64 "
                        "wheel, for the library_syrk and library_potrf probes")
    args = parser.parse_args()
    probes = _DEFAULT
    if args.probe:
        probes = []
        for text in args.probe:
            op, columns, rows, threads = text.split(":")
            if op not in _OPERATIONS:
                parser.error(f"unknown operation {op!r}; one of {sorted(_OPERATIONS)}")
            probes.append((op, int(columns), int(rows), int(threads)))
    print(header(), flush=True)
    if args.library:
        print(f"# --library {args.library}", flush=True)
    table = harness.Table({"operation": "<21", "columns": ">7", "rows": ">6", "threads": ">7",
                           "GB": ">5.1f", "outcome": "<8", "s": ">7.1f"}, args.csv)
    for op, columns, rows, threads in probes:
        size = gigabytes(op, columns, rows)
        if size > args.max_gb:
            outcome, seconds = f"skipped (> {args.max_gb:g} GB)", 0.0
        else:
            outcome, seconds = run_probe(op, columns, rows, threads, args.timeout, args.library)
        shown_rows = rows if _OPERATIONS[op][0] == "product" else "-"
        table.row(op, columns, shown_rows, threads, size, outcome, seconds)
    table.close()

if __name__ == "__main__":
    main()
