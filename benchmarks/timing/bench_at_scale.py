"""Split MNIST pixels through M random features and least squares: time, memory, accuracy.

StandardScaler (fitted on the first task) → RandomFeatures(M) →
LeastSquaresClassifier, the issue's recipe, on CI or DI Split MNIST's
784 pixels (in [0, 1]), each configuration in a fresh process (its peak
resident memory is the process's). Prints one line per configuration:

* ``features``: the RandomFeatures transform of every training task;
* ``update``: the statistics update of every task (``task_moments``: what
  ``partial_fit`` does before its solve);
* ``solve``: one closed-form solve (the D×D eigendecomposition and the
  held-out choice of α). ``partial_fit`` today solves after every task,
  so the sequence costs five; a solve at first use after the updates
  costs one. The model after the sequence is the one fit on all its rows
  (the exact family's promise, tested), so it is fitted here by one
  ``fit`` on every task's features (timed; its update's share is the
  tasks' update time), and ``end to end`` = features + update + one solve;
* the test final average accuracy over the tasks, and the peak RSS.

``--baseline randumb`` runs RanDumb's model instead (StandardScaler →
RBFSampler(gamma="scale", M) → LDA(lsqr, OAS)) fitted on all training
rows: its joint bound. ``--baseline pixels`` is least squares on the
standardised pixels (no random features).

Run::

    SKCL_DATA_DIR=../shared/data PYTHONPATH=. python benchmarks/timing/bench_at_scale.py \\
        --sequence ci --components 2000 10000
"""

import os

import numpy as np

from benchmarks import _harness as harness


def _load(sequence, data_dir):
    from skcl.datasets import load_ci_split_mnist, load_di_split_mnist

    data = (load_ci_split_mnist if sequence == "ci" else load_di_split_mnist)(data_dir)
    flat = {split: [(X.reshape(len(X), -1).astype(np.float32) / 255.0, y)
                    for X, y in data[split]] for split in ("train", "test")}
    return flat["train"], flat["test"], data.classes


def _features(m, activation, backend):
    """RandomFeatures(M): ReLU, or random Fourier features of the RBF kernel.

    On standardised pixels (variance 1 each), γ = 1 / D (scikit-learn's
    ``gamma="scale"``) gives scale = √(2γD) = √2.
    """
    from skcl.feature_extraction import RandomFeatures

    if activation == "cos":
        return RandomFeatures(m, activation="cos", scale=np.sqrt(2.0), bias="uniform",
                              backend=backend, random_state=0)
    return RandomFeatures(m, backend=backend, random_state=0)


def run_one(sequence, m, baseline, data_dir, backend, activation="relu"):
    """One configuration in this process: a dict of its figures."""
    from sklearn.preprocessing import StandardScaler

    from skcl import LeastSquaresClassifier
    from skcl._exact.task import task_moments

    train, test, classes = _load(sequence, data_dir)
    X_train = np.vstack([X for X, _ in train])
    y_train = np.concatenate([y for _, y in train])
    result = {"sequence": f"{sequence.upper()} Split MNIST pixels", "M": m,
              "activation": activation,
              "baseline": baseline, "rows": len(X_train), "backend": backend}
    watch = harness.Stopwatch()
    if baseline == "randumb":
        from skcl.reproduce._at_scale import RanDumbJoint

        model = RanDumbJoint(m, random_state=0).fit(X_train, y_train)
        result["end_to_end_s"] = watch.seconds
        predict = model.predict
    else:
        scaler = StandardScaler().fit(train[0][0])
        if baseline == "pixels":
            def transform(X):
                return scaler.transform(X).astype(np.float32)
        else:
            features = _features(m, activation, backend).fit(scaler.transform(train[0][0]))

            def transform(X):
                return features.transform(scaler.transform(X))
        H = np.vstack([transform(X) for X, _ in train])
        result["features_s"] = watch.seconds
        keys = list(range(len(classes)))
        with harness.Stopwatch() as watch:
            for X, y in zip(np.split(H, np.cumsum([len(y) for _, y in train])[:-1]),
                            [y for _, y in train]):
                task_moments(X, np.searchsorted(classes, y), np.ones(len(y)), keys,
                             fraction=0.1, seed=0, per_group_scatter=False, backend=backend)
        result["update_s"] = watch.seconds
        model = LeastSquaresClassifier(random_state=0, backend=backend)
        with harness.Stopwatch() as watch:
            model.fit(H, y_train)
        # fit = one update of all rows (the FLOPs of the tasks' updates,
        # timed above) + one solve: the solve is the rest.
        result["solve_s"] = max(watch.seconds - result["update_s"], 0.0)
        result["end_to_end_s"] = result["features_s"] + result["update_s"] + result["solve_s"]
        del H

        def predict(X):
            return model.predict(transform(X))
    result["accuracy"] = 100 * float(np.mean([np.mean(predict(X) == y) for X, y in test]))
    result["peak_rss_gb"] = harness.peak_rss_gb()
    return result


def main():
    parser = harness.parser(__doc__, data=True)
    parser.add_argument("--sequence", choices=["ci", "di"], nargs="+", default=["ci"])
    parser.add_argument("--components", type=int, nargs="+", default=[2000])
    parser.add_argument("--baseline", choices=["none", "randumb", "pixels"], default="none")
    parser.add_argument("--backend", default="numpy")
    parser.add_argument("--activation", choices=["relu", "cos"], default="relu")
    args = parser.parse_args()
    print(harness.machine_line(device=args.backend == "jax"))
    name = {"none": f"RF ({args.activation}) → least squares",
            "randumb": "RanDumb (joint bound)",
            "pixels": "least squares, pixels"}[args.baseline]
    table = harness.Table({"sequence": "<26", "model": "<22", "M": ">6", "features": ">9.1f",
                           "update": ">8.1f", "solve": ">8.1f", "end to end": ">10.1f",
                           "acc %": ">6.2f", "peak GB": ">7.2f", "load": ">5.1f"}, args.csv)
    for sequence in args.sequence:
        label = f"{sequence.upper()} Split MNIST pixels"
        for m in args.components:
            # Each configuration in a fresh process: its peak memory is its own,
            # and a crash (RanDumb's model where OpenBLAS's syrk crashes, a
            # segfault, the OOM killer) is a row, not the end of the run.
            out = harness.call_isolated(
                "benchmarks.timing.bench_at_scale:run_one", sequence, m, args.baseline,
                args.data_dir, args.backend, args.activation)
            if not out.ok:
                table.failed(label, args.baseline, m, why=out.why)
                continue
            r = out.value
            table.row(r["sequence"], name, m, r.get("features_s"), r.get("update_s"),
                      r.get("solve_s"), r["end_to_end_s"], r["accuracy"], r["peak_rss_gb"],
                      os.getloadavg()[0])
    table.close()

if __name__ == "__main__":
    main()
