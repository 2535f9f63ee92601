"""Cost of a task's curvature, kind × structure, and of training against it.

Softmax regression at four sizes (64/200/512/512 features × 10/10/10/100
classes: 650, 2,010, 5,130 and 51,300 parameters) on **synthetic Gaussian
features** (standard normal, random labels; 20,000 rows per task, float32).
Four tables:

1. ``task_curvature`` for every kind × structure: time (the second call,
   after compilation) and the peak resident memory of a fresh process
   that built the data and computed it. The full structure is refused
   (MemoryError, before any work) where it cannot fit; the table prints
   the memory it would need.
2. The full Hessian by automatic differentiation vs the closed form (one
   dense layer), at the small sizes: their times and the ratio.
3. One epoch of AQC (full, kron, diag) on a second task, i.e. against the
   first task's curvature, relative to one epoch of fine-tuning (the
   prior's penalty alone) at the same size: the steady time of the jitted
   training loop with ``n_epochs=1`` (minibatches of 64).
4. AQC(curvature="ggn", structure="kron") at 51,300 parameters learning 5
   tasks of 20,000 rows (1 epoch each, minibatches of 64): total time and
   peak memory.
5. The closed-form full Hessian against its floor: plain matrix products
   of the same FLOP count and shapes (the chunks' Yᵀ Ã, 2·n·(D+1)²·K(K+1)/2
   FLOP), timed in the same process; 50,000 rows unless ``--rows``.
6. EWC's curvature of the field's MLP (784-400-400-10, swish, 648,010
   parameters) on one task of 2,000 rows (``--mlp-rows``): the diagonal
   GGN (= Fisher) and empirical Fisher, and the GGN's Kronecker factors,
   factored through the 10 outputs ("auto") vs every sample's 400 × 400
   S_n by forward-mode Jacobians ("autodiff", the path before), in one
   run, and the largest relative difference between the two.

Every configuration runs in a fresh process of its own, so that each peak memory
(``resource.getrusage(RUSAGE_SELF).ru_maxrss``) is its own; the baseline
row is a process that imported skcl and built the data, nothing else.

    PYTHONPATH=. python benchmarks/timing/bench_curvature.py [--quick]

``--quick``: 2,000 rows per task and no autodiff at 2,010 parameters.
"""

import os

from benchmarks import _harness as harness

SIZES = [(64, 10), (200, 10), (512, 10), (512, 100)]
KINDS = ("hessian", "ggn", "empirical_fisher")
STRUCTURES = ("full", "kron", "diag")
BATCH = 64


def n_params(n_features, n_classes):
    return (n_features + 1) * n_classes


# --------------------------------------------------------------- child side


def _data(n_features, n_classes, n_rows, seed=0):
    import numpy as np

    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_rows, n_features), dtype=np.float32)
    y = rng.integers(n_classes, size=n_rows).astype(np.int32)
    return X, y, np.ones(n_rows, np.float32)


def _block(tree):
    import jax

    jax.tree.map(lambda a: a.block_until_ready(), tree)


def _curvature(cfg):
    import jax

    from skcl._gradient.consolidation.curvature import _task_curvature
    from skcl._gradient.model import Model
    from skcl._gradient.networks import MLP

    network = MLP(cfg["features"], tuple(cfg.get("hidden", ())), cfg["classes"])
    model = Model(network, "categorical")
    X, y, w = _data(cfg["features"], cfg["classes"], cfg["rows"])
    theta = network.init(jax.random.PRNGKey(0))
    X, y, w = jax.device_put((X, y, w))
    args = (model, cfg["kind"], cfg["structure"], theta, X, y, w)
    # The compiled program itself: the rows as they come (task_curvature
    # would pad a task of several chunks to a power of two, adding zeros).
    options = dict(batch_size=BATCH, method=cfg.get("method", "auto"), competing=None)
    # Compiled ahead of time, so that a slow configuration (minutes) is run
    # once, without its compilation; a fast one is run again, as its first
    # run also pays one-off costs (thread pools, allocations).
    with harness.Stopwatch() as compiling:
        compiled = _task_curvature.lower(*args, **options).compile()
    out = []

    def once():
        out[:] = [compiled(*args[3:])]
        _block(out[0])

    with harness.Stopwatch() as first:
        once()
    seconds = first.seconds if first.seconds >= 5 else harness.timeit(once, 1, warmup=False).median
    C = out[0]
    result = {"compile_s": compiling.seconds, "time_s": seconds}
    if cfg.get("save"):  # for comparing two methods' results
        import numpy as np

        np.save(cfg["save"], np.concatenate([np.ravel(a) for a in jax.tree.leaves(C)]))
    return result


def _gemm(cfg):
    """The closed form's matrix products alone: Σ_chunks Yᵀ Ã, Y random.

    Same chunks and shapes as ``_full_closed_form``: Y (chunk, D1·n_pairs),
    Ã (chunk, D1). Ã changes with the chunk index so that XLA cannot hoist
    the product out of the loop.
    """
    import jax
    import jax.numpy as jnp
    import numpy as np

    from skcl._gradient.consolidation.curvature import _chunk_rows
    from skcl._gradient.model import Model
    from skcl._gradient.networks import MLP

    f, k, n = cfg["features"], cfg["classes"], cfg["rows"]
    d1, n_pairs = f + 1, k * (k + 1) // 2
    model = Model(MLP(f, (), k), "categorical")
    chunk = min(n, _chunk_rows(model, "hessian", "full", "closed_form", None, BATCH))
    n_chunks = -(-n // chunk)
    rng = np.random.default_rng(0)
    Y = jnp.asarray(rng.standard_normal((chunk, d1 * n_pairs), dtype=np.float32))
    A = jnp.asarray(rng.standard_normal((chunk, d1), dtype=np.float32))

    @jax.jit
    def products(Y, A):
        def add(total, i):
            return total + Y.T @ (A + i.astype(A.dtype)), None

        return jax.lax.scan(add, jnp.zeros((d1 * n_pairs, d1), A.dtype),
                            jnp.arange(n_chunks))[0]

    # The warm-up compiles; one timed run after it.
    timing = harness.timeit(lambda: _block(products(Y, A)), 1)
    return {"time_s": timing.median, "flop": 2.0 * n_chunks * chunk * d1 * d1 * n_pairs}


def _classifier(method, features, classes):
    from skcl import AQCClassifier, FineTuningClassifier

    settings = dict(n_epochs=1, batch_size=BATCH, learning_rate=0.01, random_state=0)
    if method == "fine-tuning":
        return FineTuningClassifier(**settings)
    return AQCClassifier(alpha=1.0, curvature="ggn", structure=method, **settings)


def _epoch(cfg):
    import jax
    import numpy as np

    from skcl._gradient.training import minimize

    f, k, n = cfg["features"], cfg["classes"], cfg["rows"]
    clf = _classifier(cfg["method"], f, k)
    X1, y1, _ = _data(f, k, n, seed=1)
    clf.partial_fit(X1, y1, classes=np.arange(k))  # task 1: its curvature is folded in
    X2, y2, w2 = _data(f, k, n, seed=2)
    model, method = clf._model(), clf._make_consolidation()
    # The warm-up compiles the training loop; one timed run after it.
    timing = harness.timeit(
        lambda: _block(minimize(model, method, clf.consolidation_, clf.theta_, X2, y2, w2,
                                jax.random.PRNGKey(0), 0.01, n_epochs=1, batch_size=BATCH)), 1)
    return {"first_s": timing.first, "time_s": timing.median}


def _sequence(cfg):
    import numpy as np

    f, k, n = cfg["features"], cfg["classes"], cfg["rows"]
    clf = _classifier(cfg["method"], f, k)
    tasks = [_data(f, k, n, seed=t)[:2] for t in range(cfg["tasks"])]
    with harness.Stopwatch() as watch:
        for X, y in tasks:
            clf.partial_fit(X, y, classes=np.arange(k))
    elapsed = watch.seconds
    nbytes = sum(a.nbytes for a in _leaves(clf.consolidation_))
    return {"time_s": elapsed, "state_mb": nbytes / 1e6, "accuracy": clf.score(*tasks[0])}


def _leaves(tree):
    import jax

    return jax.tree.leaves(tree)


def _baseline(cfg):
    import skcl  # noqa: F401  (the import's own memory belongs to the baseline)

    _data(cfg["features"], cfg["classes"], cfg["rows"])
    return {}


def child(cfg):
    """One configuration, in the child process: its figures and the process's peak MB."""
    result = {"baseline": _baseline, "curvature": _curvature, "epoch": _epoch,
              "sequence": _sequence, "gemm": _gemm}[cfg["what"]](cfg)
    result["peak_mb"] = harness.peak_rss_gb() * 1024
    return result


# -------------------------------------------------------------- parent side


def run(cfg, timeout=1800):
    """One configuration in a fresh interpreter: its figures, or ``{"error": why}``."""
    out = harness.call_isolated("benchmarks.timing.bench_curvature:child", cfg, timeout=timeout)
    return out.value if out.ok else {"error": out.why}


def refusal(features, classes):
    """The MemoryError's message for the full structure, or None if it fits."""
    from skcl._gradient.consolidation.quadratic import check_structure_fits

    try:
        check_structure_fits("full", [(features, classes)])
    except MemoryError as error:
        return str(error)
    return None


def _needed(message):
    # "... about 31.6 GB while a task is folded in, more than this machine's 24.6 GB."
    after = message.split("about ", 1)[1]
    return after.split(" while", 1)[0]


def _cell(result):
    if "error" in result:
        return f"error: {result['error'][:40]}"
    return f"{result['time_s']:8.3f} s {result['peak_mb']:7.0f} MB"


def main():
    parser = harness.parser(__doc__, quick="2,000 rows, fewer autodiff runs", csv=False)
    parser.add_argument("--rows", type=int, default=20000, help="rows per task")
    parser.add_argument("--tables", type=int, nargs="+", default=[1, 2, 3, 4, 5, 6],
                        help="which tables to print (1 to 6)")
    parser.add_argument("--mlp-rows", type=int, default=2000, help="rows of table 6's task")
    args = parser.parse_args()
    print(harness.machine_line())
    rows = 2000 if args.quick else args.rows
    refused = {size: refusal(*size) for size in SIZES}

    base = run({"what": "baseline", "features": 512, "classes": 100, "rows": rows})
    print(f"Synthetic Gaussian features, {rows:,} rows per task, softmax regression, float32. "
          f"Baseline process (skcl imported, {rows:,} × 512 data): {base['peak_mb']:.0f} MB peak.")
    print("Peak memory: ru_maxrss of a fresh process per configuration (shared cores; "
          "times are indicative).\n")

    if 1 in args.tables:
        curvature_table(rows, refused)
    if 2 in args.tables:
        autodiff_table(rows, SIZES[:1] if args.quick else SIZES[:2])
    if 3 in args.tables:
        epoch_table(rows, refused)
    if 4 in args.tables:
        sequence_table(rows)
    if 5 in args.tables:
        floor_table(2000 if args.quick else (args.rows if args.rows != 20000 else 50000))
    if 6 in args.tables:
        mlp_table(args.mlp_rows)


def curvature_table(rows, refused):
    table = harness.Table({"n_params": ">8,", "kind": "<17", **{s: ">21" for s in STRUCTURES}},
                          title=f"1. Task curvature (after compilation; the second run where "
                                f"the first took < 5 s) and peak memory, {rows:,} rows")
    for f, k in SIZES:
        for kind in KINDS:
            cells = []
            for structure in STRUCTURES:
                if structure == "full" and refused[f, k]:
                    cells.append(f"refused: {_needed(refused[f, k])}")
                    continue
                cells.append(_cell(run({"what": "curvature", "features": f, "classes": k,
                                        "rows": rows, "kind": kind, "structure": structure})))
            table.row(n_params(f, k), kind, *cells)
    for (f, k), message in refused.items():
        if message:
            print(f"P = {n_params(f, k):,}: MemoryError: {message}")
    print()


def autodiff_table(rows, sizes):
    table = harness.Table({"n_params": ">8,", "closed form s": ">13.3f", "autodiff s": ">10.3f",
                           "ratio ×": ">7.0f", "autodiff MB": ">11.0f"},
                          title=f"2. Full Hessian, {rows:,} rows: automatic differentiation "
                                "(Jacobian of the gradient, minibatches of 64) vs the closed "
                                "form")
    for f, k in sizes:
        closed, auto = (
            run({"what": "curvature", "features": f, "classes": k, "rows": rows,
                 "kind": "hessian", "structure": "full", "method": method})
            for method in ("closed_form", "autodiff")
        )
        if "error" in closed or "error" in auto:
            table.failed(n_params(f, k), why=f"{closed.get('error', '')} {auto.get('error', '')}")
            continue
        table.row(n_params(f, k), closed["time_s"], auto["time_s"],
                  auto["time_s"] / closed["time_s"], auto["peak_mb"])
    print()


def epoch_table(rows, refused):
    methods = ("fine-tuning", "full", "kron", "diag")
    table = harness.Table({"n_params": ">8,", **{m: ">23" for m in methods}},
                          title=f"3. One epoch on task 2 ({rows:,} rows, minibatches of 64), AQC "
                                "vs fine-tuning (the jitted loop's run after its warm-up)")
    for f, k in SIZES:
        results = {}
        for method in methods:
            if method == "full" and refused[f, k]:
                continue
            results[method] = run({"what": "epoch", "features": f, "classes": k, "rows": rows,
                                   "method": method})
        ft = results["fine-tuning"].get("time_s")
        cells = []
        for method in methods:
            result = results.get(method)
            if result is None:
                cells.append("refused")
            elif "error" in result:
                cells.append(f"error: {result['error'][:14]}")
            elif method == "fine-tuning":
                cells.append(f"{ft:.3f} s {result['peak_mb']:5.0f} MB")
            else:
                cells.append(f"{result['time_s']:.3f} s = {result['time_s'] / ft:4.1f}×")
        table.row(n_params(f, k), *cells)
    print()


def sequence_table(rows):
    print(f"4. AQC(curvature='ggn', structure='kron'), 51,300 parameters, 5 tasks of {rows:,} "
          "rows, 1 epoch each")
    result = run({"what": "sequence", "features": 512, "classes": 100, "rows": rows,
                  "tasks": 5, "method": "kron"})
    if "error" in result:
        print(f"error: {result['error']}")
    else:
        print(f"time {result['time_s']:.1f} s (5 tasks, including compilation and 5 curvatures), "
              f"peak memory {result['peak_mb']:.0f} MB, state {result['state_mb']:.1f} MB "
              f"(5 Kronecker terms)")


def floor_table(rows):
    table = harness.Table({"n_params": ">8,", "GFLOP": ">8.0f", "closed form s": ">13.2f",
                           "products s": ">10.2f", "ratio ×": ">7.2f", "GFLOP/s": ">8.1f"},
                          title=f"5. Closed-form full Hessian vs plain matrix products of the "
                                f"same FLOP count and shapes, {rows:,} rows (each the second "
                                "run of a compiled program, both in one process each, run one "
                                "after the other)")
    for f, k in SIZES[:3]:
        cfg = {"features": f, "classes": k, "rows": rows}
        gemm = run({**cfg, "what": "gemm"})
        closed = run({**cfg, "what": "curvature", "kind": "hessian", "structure": "full",
                      "method": "closed_form"})
        if "error" in gemm or "error" in closed:
            table.failed(n_params(f, k), why=f"{gemm.get('error', '')} {closed.get('error', '')}")
            continue
        table.row(n_params(f, k), gemm["flop"] / 1e9, closed["time_s"], gemm["time_s"],
                  closed["time_s"] / gemm["time_s"], gemm["flop"] / 1e9 / gemm["time_s"])
    print()


def mlp_table(rows):
    import tempfile

    import numpy as np

    table = harness.Table({"kind": "<17", "structure": "<9", "factored s": ">11.2f",
                           "Jacobians s": ">12.2f", "ratio ×": ">7.0f", "max rel. diff": ">14.1e"},
                          title=f"6. The field's MLP 784-400-400-10 (648,010 parameters), one "
                                f"task of {rows:,} rows: S_n factored through the outputs vs "
                                "per-sample pre-activation Jacobians")
    cfg = {"what": "curvature", "features": 784, "hidden": [400, 400], "classes": 10,
           "rows": rows}
    with tempfile.TemporaryDirectory() as folder:
        for kind, structure in (("ggn", "diag"), ("empirical_fisher", "diag"), ("ggn", "kron")):
            results, values = [], []
            for method in ("auto", "autodiff"):
                path = os.path.join(folder, f"{method}.npy")
                results.append(run({**cfg, "kind": kind, "structure": structure,
                                    "method": method, "save": path}, timeout=3600))
                values.append(np.load(path) if "error" not in results[-1] else None)
            fast, slow = results
            if "error" in fast or "error" in slow:
                table.failed(kind, structure,
                             why=f"{fast.get('error', '')} {slow.get('error', '')}")
                continue
            diff = np.max(np.abs(values[0] - values[1])) / np.max(np.abs(values[1]))
            table.row(kind, structure, fast["time_s"], slow["time_s"],
                      slow["time_s"] / fast["time_s"], diff)
    print()


if __name__ == "__main__":
    main()
