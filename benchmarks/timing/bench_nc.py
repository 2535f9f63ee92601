"""Time of neural consolidation's consolidator fit and of the variational baselines.

Prints two tables. "first" includes JAX's compilation; "steady" is the
median of the following runs (same shapes reuse the compiled code, as in
a hyperparameter grid).

1. One consolidator fit (the paper's defaults: κ with hidden layers
   (256, 256), 1000 Adam steps, 64 ball samples per step) after task 1 of
   CI Split Iris, for softmax regression (15 parameters) and the FCNN with
   4 hidden units (35 parameters).
2. One partial_fit task per variational estimator on CI Split Iris and CI
   Split Wine (the paper's settings: 100 epochs, batch 16).

    python benchmarks/timing/bench_nc.py [--quick]
"""

import argparse
import statistics
import time

import jax
import numpy as np

from skcl import FineTuningClassifier, GMVCLClassifier, GSFSVIClassifier, GVCLClassifier
from skcl._gradient.consolidation import Prior, prior_state
from skcl._gradient.consolidation.neural import fit_consolidator
from skcl._gradient.model import Model
from skcl._gradient.networks import MLP
from skcl.datasets import load_ci_split_iris, load_ci_split_wine


def timed(fn, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times[0], statistics.median(times[1:]) if len(times) > 1 else float("nan")


def consolidator_table(repeats):
    data = load_ci_split_iris()
    X, y = data.train[0]
    X, y, w = X.astype(np.float32), y.astype(np.int32), np.ones(len(y), np.float32)
    print("NC consolidator fit after task 1 of CI Split Iris "
          "(κ: (256, 256) swish, 1000 steps, 64 points/step, r = 10)")
    print(f"{'network':<8} {'n_params':>8} {'κ params':>9} {'first s':>8} {'steady s':>9}")
    for name, hidden in (("SR", ()), ("FCNN(4)", (4,))):
        clf = FineTuningClassifier(hidden_layer_sizes=hidden, learning_rate=0.1, random_state=0)
        clf.partial_fit(*data.train[0], classes=data.classes)
        model = Model(clf.network_, clf.likelihood_)
        prior = prior_state(clf.network_.n_params, 1.0)
        consolidator = MLP(clf.network_.n_params, (256, 256), 1)
        phi0 = consolidator.init(jax.random.PRNGKey(0))

        def run():
            phi, _ = fit_consolidator(
                model, consolidator, phi0, Prior(), prior, clf.theta_, 10.0, X, y, w,
                jax.random.PRNGKey(1), 0.01, 1.0, n_steps=1000, n_points=64,
            )
            phi.block_until_ready()

        first, steady = timed(run, repeats)
        print(f"{name:<8} {clf.network_.n_params:8d} {consolidator.n_params:9d} "
              f"{first:8.3f} {steady:9.3f}")
    print()


def variational_table(repeats):
    print("Time per partial_fit task, variational baselines (100 epochs, batch 16, "
          "10 training samples, 100 prediction samples)")
    print(f"{'sequence':<15} {'method':<18} {'hidden':>7} "
          f"{'first task s':>13} {'steady task s':>14}")
    for data, lr, hiddens in (
        (load_ci_split_iris(), 0.1, ((), (4,))),
        (load_ci_split_wine(), 0.01, ((), (16,))),
    ):
        for cls in (GVCLClassifier, GMVCLClassifier, GSFSVIClassifier):
            for hidden in hiddens:
                def run():
                    clf = cls(hidden_layer_sizes=hidden, learning_rate=lr, random_state=0)
                    clf.partial_fit(*data.train[0], classes=data.classes)

                first, steady = timed(run, repeats)
                print(f"{data.name:<15} {cls.__name__:<18} {str(hidden):>7} "
                      f"{first:13.3f} {steady:14.4f}")
    print()


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    args = parser.parse_args()
    repeats = 3 if args.quick else 5
    consolidator_table(repeats)
    variational_table(repeats)


if __name__ == "__main__":
    main()
