"""Issue 14, "experiments at the speed of the hardware": before/after ratios.

Prints five tables, each measured in this one run, the two variants
interleaved (the machine may be shared: compare ratios, not seconds).

1. **Compile once.** The same script (FineTuning, AQC, EWC and SI on CI
   Split Iris and CI Split Wine, the paper's settings, ``random_state=0``)
   in fresh processes: without the persistent compilation cache
   (``SKCL_COMPILATION_CACHE=0``), with an empty cache (cold) and with
   the cache the cold run filled (warm). Also checks that the θ*_T of
   every run are bit-identical.
2. **Shapes.** CI Split Wine's three tasks (38, 45 and 30 rows) learned
   in a row by fine-tuning, AQC and joint training, each task timed:
   with one training loop compiled per task size (padding off, the
   behaviour before) and with small tasks padded to shared sizes
   (``skcl._gradient.minibatches.padded_size``), with the number of loops compiled
   and a check that θ*_T is bit-identical.
3. **NC search.** :class:`~skcl.model_selection.SequenceGridSearch` of
   NCClassifier over the paper's 15-candidate grid (λ ∈ {1, 10, 100, 1000,
   10000} × r ∈ {1, 10, 100}) on CI Split Iris: with every candidate's
   last consolidator fit (before), without it, and with identical fits
   shared (after task 1 one fit per radius serves every λ; the default).
4. **NC fits batched.** The task-2 consolidator fits of a 15-candidate
   grid on CI Split Iris (each candidate its own λ, centre, starting φ
   and key), one jitted fit after another (today's path) against one
   ``vmap`` of all fifteen, after compilation, with the largest
   difference between their φ*.

    PYTHONPATH=. python benchmarks/timing/bench_speed.py [--quick] [--repeats N] \\
        [--only cache|shapes|nc|vmap|jobs]

``--quick`` shortens NC's consolidator fits (200 steps instead of 1000),
runs each search variant once instead of twice and the cold/warm
comparison twice instead of three times.

Tables 3 and 4 report the median of the interleaved rounds (the
harness's meaning; table 4's first round is the warm-up, compilation);
the figures below, from before the harness, were the best round (the
same where one round runs, as with ``--quick`` in table 3). Table 1's
seconds now start after numpy's import in the child.

Measured on two shared CPU cores at a load average of about 16 (other
jobs running), ``--quick --repeats 1``, 2026-11-23:

1. no cache 442.9 s, cold cache 352.5 s (0.80; the cold run writes the
   cache, so it is no faster in itself: the difference is the load's
   noise), warm cache 100.1 s (0.23: about 4.4 times faster); 57
   programs, 1.6 MiB; θ*_T bit-identical. An earlier run with three
   repeats: no cache 349–352 s, warm 83–89 s (0.24).
2. CI Split Wine, per task size (38, 45, 30 rows): first call 37.8,
   16.9, 22.6 s, compiled 0.03, 0.14, 0.01 s: 99–100 % compilation.
3. NC search, 200-step folds: 59.4 s with every fold, 38.1 s without the
   last ones (0.64); same scores, best θ*_T and φ*_T.

On the same machine, idle, 2026-11-24 (``--only shapes`` and ``--only nc
--quick``), after padding and shared consolidator fits:

2. Three Wine tasks in a row, seconds per task (compiled loops): fine-
   tuning 2.54 1.33 1.34 (3) before, 2.46 0.71 0.68 (1) after; AQC 3.03
   2.16 2.13 (3) before, 3.27 2.15 1.27 (2: task 1 learns against the
   prior alone); joint 2.42 1.45 1.47 (3) before, 2.57 0.72 0.65 (1)
   after. θ*_T bit-identical. What a new size still compiles (~0.6 s) is
   the small program that draws its minibatch orders.
3. NC search, 200-step folds: every fold 7.9 s, last fold skipped 5.5 s
   (0.69), and with shared fits 3.7 s (0.47); same scores, best θ*_T and
   φ*_T.

4. (``--only vmap``, idle, 2026-11-24) the fifteen task-2 fits one by
   one 13.24 s, vmapped 10.58 s (0.80); φ*_2 not bit-identical, largest
   difference 9.9e-6 (|φ| up to 1.9).

5. (``--only jobs``, idle, 2026-11-24, 1000-step fits) n_jobs=1 16.3 s;
   n_jobs=2 in threads 11.4 s (1.43×); in loky processes 19.6 s (0.83×);
   the same scores and best θ*_T all three.

Also measured (not by this script): scikit-learn's estimator checks of
EWCClassifier (63 tests), one pytest process, empty cache 537 s, warm
cache 141 s (0.26).
"""

import os
import tempfile
from pathlib import Path

import numpy as np

from benchmarks import _harness as harness


def cache_child(out):
    """In a fresh process: import skcl and learn Iris and Wine with four methods; seconds."""
    with harness.Stopwatch() as watch:
        from skcl import AQCClassifier, EWCClassifier, FineTuningClassifier, SIClassifier
        from skcl.datasets import load_ci_split_iris, load_ci_split_wine

        thetas = {}
        for name, data, settings in [
            ("iris", load_ci_split_iris(), dict(learning_rate=0.1, hidden_layer_sizes=(4,))),
            ("wine", load_ci_split_wine(), dict(learning_rate=0.01, hidden_layer_sizes=(16,))),
        ]:
            for cls in (FineTuningClassifier, AQCClassifier, EWCClassifier, SIClassifier):
                clf = cls(random_state=0, **settings)
                for X, y in data.train:
                    clf.partial_fit(X, y, classes=data.classes)
                thetas[name + "_" + cls.__name__] = clf.theta_
        np.savez(out, **thetas)
    return watch.seconds


def run_script(cache_dir, enabled, out):
    env = dict(os.environ, SKCL_COMPILATION_CACHE_DIR=str(cache_dir),
               SKCL_COMPILATION_CACHE="1" if enabled else "0")
    env.pop("JAX_COMPILATION_CACHE_DIR", None)
    result = harness.call_isolated("benchmarks.timing.bench_speed:cache_child", str(out),
                                   env=env)
    if not result.ok:
        raise RuntimeError(f"the cache script failed: {result.why}")
    return result.value


def cache_table(repeats):
    print("1. Compile once: the same script in a fresh process (wall seconds, median of "
          f"{repeats})")
    times = {"no cache": [], "cold cache": [], "warm cache": []}
    thetas = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for r in range(repeats):
            cache = tmp / f"cache{r}"  # empty for the cold run, then warm
            for label, enabled in (("no cache", False), ("cold cache", True),
                                   ("warm cache", True)):
                out = tmp / f"{label.replace(' ', '_')}{r}.npz"
                times[label].append(run_script(cache, enabled, out))
                thetas.append(dict(np.load(out)))
        n_files = sum(1 for _ in (tmp / "cache0").iterdir())
        size = sum(f.stat().st_size for f in (tmp / "cache0").iterdir()) / 2**20
    base = harness.Timing(times["no cache"]).median
    table = harness.Table({"   process": "<15", "median s": ">9.2f", "runs": ">28",
                           "ratio to no cache": ">18.2f"})
    for label, values in times.items():
        median = harness.Timing(values).median
        table.row(f"   {label}", median, " ".join(f"{v:.1f}" for v in values), median / base)
    identical = all(
        all(np.array_equal(t[k], thetas[0][k]) for k in thetas[0]) for t in thetas[1:]
    )
    print(f"   cache: {n_files} programs, {size:.1f} MiB; θ*_T of all {len(thetas)} runs "
          f"bit-identical: {identical}")
    return identical


def shapes_table():
    import jax

    from skcl import AQCClassifier, FineTuningClassifier, JointClassifier
    from skcl._gradient import minibatches, training
    from skcl.datasets import load_ci_split_wine

    data = load_ci_split_wine()
    sizes = [len(y) for _, y in data.train]
    print("\n2. Shapes: CI Split Wine's tasks (" + ", ".join(map(str, sizes)) + " rows; joint "
          "training's union grows) learned in a row, each task's partial_fit timed, in one "
          "process with JAX's caches cleared before each variant; FCNN(16), 100 epochs, "
          "batch 16. Before: one training loop compiled per task size; after: small tasks "
          "padded to shared sizes")
    table = harness.Table({"   method": "<25", "variant": "<18", "task s": ">20",
                           "total s": ">8.2f", "loops": ">6"})
    pad_max = minibatches.PAD_MAX
    for cls in (FineTuningClassifier, AQCClassifier, JointClassifier):
        thetas = []
        for label, limit in (("per size (before)", 0), ("padded (after)", pad_max)):
            jax.clear_caches()
            minibatches.PAD_MAX = limit
            try:
                clf = cls(hidden_layer_sizes=(16,), learning_rate=0.01, random_state=0)
                times = []
                for X, y in data.train:
                    with harness.Stopwatch() as watch:
                        clf.partial_fit(X, y, classes=data.classes)
                    times.append(watch.seconds)
            finally:
                minibatches.PAD_MAX = pad_max
            thetas.append(clf.theta_)
            table.row(f"   {cls.__name__}", label, " ".join(f"{t:6.2f}" for t in times),
                      sum(times), training._minimize._cache_size())
        table.row("", f"θ*_T bit-identical: {np.array_equal(*thetas)}")


def nc_table(quick):
    from skcl import NCClassifier
    from skcl._gradient.consolidation import Neural
    from skcl._gradient.consolidation.neural import FITS
    from skcl.datasets import load_ci_split_iris
    from skcl.model_selection import SequenceGridSearch

    def search(eager, shared):
        # With Neural's fold_can_wait off every fold runs, the last one
        # included; with the memo's budget at 0 no fit is shared (the
        # behaviour before each change).
        Neural.fold_can_wait, budget = not eager, FITS.max_bytes
        FITS.clear()
        FITS.max_bytes = budget if shared else 0
        try:
            return SequenceGridSearch(NCClassifier(**settings), grid).fit(
                data.train, data.validation, classes=data.classes)
        finally:
            Neural.fold_can_wait, FITS.max_bytes = True, budget

    data = load_ci_split_iris()
    n_steps = 200 if quick else 1000
    settings = dict(learning_rate=0.1, random_state=0, consolidator_n_steps=n_steps)
    grid = {"alpha": [1.0, 10.0, 100.0, 1000.0, 10000.0], "radius": [1.0, 10.0, 100.0]}
    print(f"\n3. NC search: 15 candidates on CI Split Iris (SR, κ (256, 256), {n_steps} steps "
          "per fold), n_jobs=1")
    # Compile first, so that no variant pays it.
    SequenceGridSearch(NCClassifier(**settings), {"alpha": [1.0]}).fit(
        data.train, data.validation, classes=data.classes)
    variants = {"every fold (before)": (True, False),
                "last fold skipped": (False, False),
                "+ shared fits (after)": (False, True)}
    times, searches = {label: [] for label in variants}, {}
    for _ in range(1 if quick else 2):
        for label, (eager, shared) in variants.items():  # interleaved rounds
            with harness.Stopwatch() as watch:
                searches[label] = search(eager, shared)
            times[label].append(watch.seconds)
    first, *others = searches.values()
    same = all(
        np.array_equal(first.accuracy_matrices_, other.accuracy_matrices_, equal_nan=True)
        and np.array_equal(first.best_estimator_.theta_, other.best_estimator_.theta_)
        and np.array_equal(first.best_estimator_.consolidation_.phi,
                           other.best_estimator_.consolidation_.phi)
        for other in others
    )
    timings = {label: harness.Timing(values) for label, values in times.items()}
    base = timings["every fold (before)"].median
    table = harness.Table({"   variant": "<29", "median s": ">8.1f", "runs": ">14",
                           "ratio": ">6.2f"})
    for label, timing in timings.items():
        table.row(f"   {label}", timing.median, " ".join(f"{v:.1f}" for v in timing.runs),
                  timing.median / base)
    print(f"   same scores, best θ*_T and best φ*_T: {same}")


def vmap_table(quick):
    import jax
    import jax.numpy as jnp

    from skcl._gradient.consolidation import Neural, Prior
    from skcl._gradient.consolidation.neural import NeuralState, fit_consolidator
    from skcl._gradient.consolidation.quadratic import prior_state
    from skcl._gradient.model import Model
    from skcl._gradient.networks import MLP
    from skcl.datasets import load_ci_split_iris

    # A task-2 fold of a 15-candidate NC grid on CI Split Iris (SR): every
    # candidate has its own λ, centre θ*_2, starting φ and key, and its
    # target is λ·κ(θ; φ*_1) + nll_2(θ) with a shared φ*_1.
    X, y = load_ci_split_iris().train[1]
    weights = np.ones(len(y), np.float32)
    model = Model(MLP(X.shape[1], (), 3), "categorical")
    consolidator = MLP(model.network.n_params, (256, 256), 1)
    n_steps, n_candidates = (200 if quick else 1000), 15
    static = dict(n_steps=n_steps, n_points=64)
    keys = jax.random.split(jax.random.PRNGKey(0), 4)
    prior = prior_state(model.network.n_params, 1.0)
    phi1, losses1 = fit_consolidator(
        model, consolidator, consolidator.init(keys[0]), Prior(), prior,
        jnp.zeros(model.network.n_params), 1.0, X, y, weights, keys[1], 0.001, 1e-3, **static)
    state = NeuralState(prior, phi1, losses1, consolidator)
    alphas = jnp.asarray(np.repeat([1.0, 10.0, 100.0, 1000.0, 10000.0], 3), jnp.float32)
    centres = 0.1 * jax.random.normal(keys[2], (n_candidates, model.network.n_params))
    fit_keys = jax.random.split(keys[3], n_candidates)

    def fit(alpha, centre, key):
        return fit_consolidator(model, consolidator, phi1, Neural(alpha, 1.0, 0.001, 1e-3),
                                state, centre, 1.0, X, y, weights, key, 0.001, 1e-3,
                                **static)[0]

    def one_by_one():
        return [fit(alphas[i], centres[i], fit_keys[i]) for i in range(n_candidates)]

    batched = jax.jit(jax.vmap(fit))
    times = {"one by one (today)": [], "vmapped": []}
    for _ in range(3):  # the first round compiles
        for label, run in (("one by one (today)", one_by_one),
                           ("vmapped", lambda: batched(alphas, centres, fit_keys))):
            with harness.Stopwatch() as watch:
                out = jax.block_until_ready(run())
            times[label].append(watch.seconds)
            if label == "vmapped":
                vmapped = np.asarray(out)
            else:
                sequential = np.stack([np.asarray(phi) for phi in out])
    print(f"\n4. NC fits batched: the task-2 fits of {n_candidates} candidates on CI Split Iris "
          f"(SR, κ (256, 256), {n_steps} steps), compiled")
    # The first round is the warm-up (compilation); the median of the others.
    timings = {label: harness.Timing(values[1:], values[0]) for label, values in times.items()}
    base = timings["one by one (today)"].median
    table = harness.Table({"   variant": "<23", "median s": ">8.2f", "ratio": ">6.2f"})
    for label, timing in timings.items():
        table.row(f"   {label}", timing.median, timing.median / base)
    scale = np.abs(sequential).max()
    print(f"   φ*_2 bit-identical: {np.array_equal(sequential, vmapped)}; largest difference "
          f"{np.abs(sequential - vmapped).max():.2e} (largest |φ| {scale:.2f})")


def jobs_child(n_steps):
    """In a fresh process with the persistent cache: NC's search at n_jobs 1 and 2."""
    import contextlib

    import joblib

    from skcl import NCClassifier
    from skcl._gradient.consolidation.neural import FITS
    from skcl.datasets import load_ci_split_iris
    from skcl.model_selection import SequenceGridSearch

    data = load_ci_split_iris()
    settings = dict(learning_rate=0.1, random_state=0, consolidator_n_steps=n_steps)
    grid = {"alpha": [1.0, 10.0, 100.0, 1000.0, 10000.0], "radius": [1.0, 10.0, 100.0]}

    def search(n_jobs, backend=None):
        FITS.clear()
        context = (joblib.parallel_config(backend=backend) if backend
                   else contextlib.nullcontext())
        with harness.Stopwatch() as watch, context:
            found = SequenceGridSearch(NCClassifier(**settings), grid, n_jobs=n_jobs).fit(
                data.train, data.validation, classes=data.classes)
        return watch.seconds, found

    search(1)  # compiles, and fills the persistent cache that worker processes read
    runs = {"n_jobs=1": search(1), "n_jobs=2, threads (default)": search(2),
            "n_jobs=2, loky processes (before)": search(2, "loky")}
    first, base = runs["n_jobs=1"][1], runs["n_jobs=1"][0]
    return [(label, seconds, base / seconds,
             bool(np.array_equal(found.accuracy_matrices_, first.accuracy_matrices_,
                                 equal_nan=True)
                  and np.array_equal(found.best_estimator_.theta_,
                                     first.best_estimator_.theta_)))
            for label, (seconds, found) in runs.items()]


def jobs_table(quick):
    n_steps = 200 if quick else 1000
    table = harness.Table(
        {"   variant": "<37", "s": ">7.1f", "speed-up": ">8.2f", "same": ">5"},
        title=f"\n5. Parallel candidates: NC's 15-candidate search on CI Split Iris (SR, κ "
              f"(256, 256), {n_steps} steps per fit), compiled first; speed-up over n_jobs=1 "
              "and whether the scores and best θ*_T equal n_jobs=1's")
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, SKCL_COMPILATION_CACHE_DIR=tmp, SKCL_COMPILATION_CACHE="1")
        out = harness.call_isolated("benchmarks.timing.bench_speed:jobs_child", n_steps,
                                    env=env)
    if not out.ok:
        table.failed("   NC search", why=out.why)
    for label, seconds, speedup, same in out.value or []:
        table.row(f"   {label}", seconds, speedup, str(same))


def main():
    parser = harness.parser(__doc__, quick="200-step fits, 2 repeats, 1 round", csv=False)
    parser.add_argument("--repeats", type=int, default=None,
                        help="fresh processes per cache variant (default 3; 2 with --quick)")
    parser.add_argument("--only", choices=["cache", "shapes", "nc", "vmap", "jobs"],
                        default=None)
    args = parser.parse_args()
    print(harness.machine_line())
    repeats = args.repeats or (2 if args.quick else 3)
    if args.only in (None, "cache"):
        cache_table(repeats)
    if args.only in (None, "jobs"):
        jobs_table(args.quick)
    # The in-process tables run without the persistent cache, so that the
    # compilations they time are real ones.
    os.environ["SKCL_COMPILATION_CACHE"] = "0"
    if args.only in (None, "shapes"):
        shapes_table()
    if args.only in (None, "nc"):
        nc_table(args.quick)
    if args.only in (None, "vmap"):
        vmap_table(args.quick)


if __name__ == "__main__":
    main()
