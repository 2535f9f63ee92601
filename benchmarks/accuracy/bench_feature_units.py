"""RandomFeatures' defaults on raw and rescaled pixels, ReLU against random Fourier features.

CI Split MNIST and CI Split Fashion-MNIST pixels (five tasks of two
classes, all 60,000 training images: the loaders' training and validation
rows, and the 10,000 test images), learned task by task:

    input → RandomFeatures(M, activation, random_state=0) → exact classifier

with ``RandomFeatures`` fitted on the first task's rows (as
:class:`skcl.pipeline.Pipeline`'s first ``partial_fit`` fits it), the
classifier at its defaults (``GaussianDiscriminantClassifier()``,
``LeastSquaresClassifier()``) learning the five tasks with
``partial_fit``; FAA is the mean of the five test tasks' accuracies.

* ``input``: ``raw`` uint8 pixels, ``/255``, or ``norm`` = RanDumb's
  (x/255 − 0.1307)/0.3081. With ``scale="auto"`` the three give the same
  features up to rounding; ``max |Δφ|`` is the largest difference from
  the ``raw`` row's features of the same configuration.
* ``activation``: ``relu`` (b ~ N(0, 1)) or ``cos`` with
  ``bias="uniform"`` (random Fourier features of the RBF kernel with
  γ = 1/(Dσ²), ``RBFSampler(gamma="scale")``'s).

``features s`` is the time of RandomFeatures' fit and of transforming
every training and test row; ``fit s`` each classifier's five updates,
solve and test predictions.

Run::

    SKCL_DATA_DIR=../shared/data PYTHONPATH=. python benchmarks/accuracy/bench_feature_units.py \\
        --components 2000 --datasets mnist fashion

Measured 2026-11-26 on 2 shared CPU cores (load about 15, so the times
are only indicative), numpy 2.4.6, scikit-learn 1.9.1; FAA %, Gaussian /
least squares:

=========  =====  ===========  ===============  ===============
data       M      input        ReLU             cos (RFF)
=========  =====  ===========  ===============  ===============
MNIST      2000   raw          95.70 / 95.64    –
MNIST      2000   /255         95.70 / 95.64    96.00 / 95.77
MNIST      2000   norm         95.70 / 95.64    –
Fashion    2000   /255         85.66 / 85.86    85.98 / 86.19
MNIST      5000   /255         97.14 / 97.05    97.29 / 97.01
=========  =====  ===========  ===============  ===============

(max |Δφ| between the raw, /255 and normalised inputs' features: 0 and
1.4e-14.)
"""

import numpy as np

from benchmarks import _harness as harness


def _tasks(name, data_dir):
    from skcl.datasets import load_ci_split_fashion_mnist, load_ci_split_mnist

    loader = {"mnist": load_ci_split_mnist, "fashion": load_ci_split_fashion_mnist}[name]
    data = loader(data_dir)

    def flat(X):
        return X.reshape(len(X), -1)

    train = [(np.vstack([flat(X), flat(Xv)]), np.concatenate([y, yv]))
             for (X, y), (Xv, yv) in zip(data.train, data.validation)]
    test = [(flat(X), y) for X, y in data.test]
    return train, test, data.classes


INPUTS = {
    "raw": lambda X: X,
    "/255": lambda X: X / 255.0,
    "norm": lambda X: (X / 255.0 - 0.1307) / 0.3081,
}


def run(table, name, data_dir, m, activation, inputs):
    from skcl import GaussianDiscriminantClassifier, LeastSquaresClassifier
    from skcl.feature_extraction import RandomFeatures

    train, test, classes = _tasks(name, data_dir)
    rows, raw_features = [], None
    for form in inputs:
        with harness.Stopwatch() as watch:
            options = {"bias": "uniform"} if activation == "cos" else {}
            features = RandomFeatures(m, activation=activation, random_state=0, **options)
            features.fit(INPUTS[form](train[0][0]))
            phi_train = [(features.transform(INPUTS[form](X)), y) for X, y in train]
            phi_test = [(features.transform(INPUTS[form](X)), y) for X, y in test]
        feature_time = watch.seconds
        if form == inputs[0]:
            raw_features = phi_test[0][0]
        delta = float(np.abs(phi_test[0][0] - raw_features).max())
        for clf in (GaussianDiscriminantClassifier(), LeastSquaresClassifier()):
            with harness.Stopwatch() as watch:
                for X, y in phi_train:
                    clf.partial_fit(X, y, classes=classes)
                faa = 100 * float(np.mean([np.mean(clf.predict(X) == y) for X, y in phi_test]))
            rows.append((name, m, activation, form, type(clf).__name__.replace(
                "Classifier", ""), faa, feature_time, watch.seconds, delta))
            table.row(*(_cell(v) for v in rows[-1]))
    return rows


def _cell(value):
    if isinstance(value, float):
        return f"{value:.3g}" if value < 1e-3 else f"{value:.2f}"
    return str(value)


def main():
    parser = harness.parser(__doc__, data=True)
    parser.add_argument("--components", type=int, nargs="+", default=[2000])
    parser.add_argument("--datasets", nargs="+", default=["mnist", "fashion"])
    parser.add_argument("--activations", nargs="+", default=["relu", "cos"])
    parser.add_argument("--inputs", nargs="+", default=list(INPUTS), choices=list(INPUTS))
    args = parser.parse_args()
    print(harness.machine_line())
    table = harness.Table({name: "" for name in (
        "data", "M", "activation", "input", "classifier", "FAA %", "features s", "fit s",
        "max abs Δφ")}, args.csv, markdown=True)
    clock = harness.Stopwatch()
    for m in args.components:
        for name in args.datasets:
            for activation in args.activations:
                run(table, name, args.data_dir, m, activation, args.inputs)
    table.close()
    print(f"# total {clock.seconds:.0f} s")

if __name__ == "__main__":
    main()
