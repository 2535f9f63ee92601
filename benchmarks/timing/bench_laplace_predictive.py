"""Cost per prediction of the Laplace predictive against the plug-in.

AQC on scikit-learn's 8×8 digits (64 features, ten classes, as the
paper's MNIST features): softmax regression (650 parameters) with the
full, Kronecker and diagonal curvature, and one hidden layer of 32 swish
units (2,410 parameters) with the Kronecker and diagonal ones. Each model
learns the ten classes in one task (5 epochs: the cost of a prediction
does not depend on how well it was trained), then ``predict_proba`` runs
on ``--n`` inputs with each ``predictive``: one untimed round
(compilation), then ``--repeats`` rounds, each timing every predictive
once in turn, so that a change of load on a shared machine falls on all
of them alike; the median round of each is reported (the harness's
meaning; before it, the best round), per input and as a
ratio to the plug-in ("map"), all in one process. "Σ" is the share of a
call spent factoring the posterior precision (``posterior_root``), which
every call repeats and which does not grow with the inputs.

Run::

    PYTHONPATH=. python benchmarks/timing/bench_laplace_predictive.py --n 1000 --repeats 3
"""

import warnings

import numpy as np
from sklearn.datasets import load_digits

from benchmarks import _harness as harness
from skcl import AQCClassifier

PREDICTIVES = ("map", "probit", "mean_field", "mc")
MODELS = {
    "SR, full": dict(structure="full"),
    "SR, kron": dict(curvature="ggn", structure="kron"),
    "SR, diag": dict(curvature="ggn", structure="diag"),
    "MLP (32,), kron": dict(curvature="ggn", structure="kron", hidden_layer_sizes=(32,)),
    "MLP (32,), diag": dict(curvature="ggn", structure="diag", hidden_layer_sizes=(32,)),
}


def median_times(fns, repeats):
    """Median time of each function over rounds that run them all in turn, after a warm-up."""
    for fn in fns.values():
        fn()  # the warm-up: compilation
    times = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            with harness.Stopwatch() as watch:
                fn()
            times[name].append(watch.seconds)
    return {name: harness.Timing(t).median for name, t in times.items()}


def main():
    parser = harness.parser(__doc__, repeats=3)
    parser.add_argument("--n", type=int, default=1000, help="inputs per predict_proba call")
    args = parser.parse_args()
    print(harness.machine_line())
    warnings.simplefilter("ignore")
    X, y = load_digits(return_X_y=True)  # inputs to predict on, no task split
    X = (X / 16.0).astype(np.float32)
    Xq = np.resize(X, (args.n, X.shape[1]))
    table = harness.Table(
        {"model": "", "n_params": ",", "map µs": "", "probit µs (×)": "",
         "mean_field µs (×)": "", "mc µs (×)": "", "Σ ms": ".1f"}, args.csv, markdown=True,
        title=f"predict_proba on {args.n} inputs, median of {args.repeats} rounds: µs per "
              "input, and the ratio to the plug-in.\n")
    for name, params in MODELS.items():
        clf = AQCClassifier(alpha=10.0, n_epochs=5, batch_size=64, random_state=0, **params)
        clf.partial_fit(X, y, classes=np.arange(10))
        def call(predictive, clf=clf):
            return lambda: clf.set_params(predictive=predictive).predict_proba(Xq)

        fns = {p: call(p) for p in PREDICTIVES}
        fns["Σ"] = clf._posterior_root
        per_input = median_times(fns, args.repeats)
        root = per_input["Σ"]
        base = per_input["map"]
        cells = [f"{1e6 * per_input['map'] / args.n:.2f}"] + [
            f"{1e6 * per_input[p] / args.n:.1f} (×{per_input[p] / base:.0f})"
            for p in PREDICTIVES[1:]]
        table.row(name, clf.network_.n_params, *cells, 1e3 * root)
    table.close()


if __name__ == "__main__":
    main()
