"""Time of the core: one partial_fit task per method, and AQC's Hessian.

Prints two tables. The first run of a shape includes JAX's compilation;
"steady" is the median of the following runs (same shapes reuse the
compiled loop, as in a hyperparameter grid).

    python benchmarks/timing/bench_core.py [--quick]
"""

import argparse
import statistics
import time

import jax
import numpy as np

from skcl import AQCClassifier, EWCClassifier, FineTuningClassifier, JointClassifier, SIClassifier
from skcl._gradient.consolidation.curvature import task_curvature
from skcl._gradient.model import Model
from skcl._gradient.networks import MLP
from skcl.datasets import load_ci_split_iris


def timed(fn, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times[0], statistics.median(times[1:]) if len(times) > 1 else float("nan")


def partial_fit_table(repeats):
    data = load_ci_split_iris()
    print("Time per partial_fit task, CI Split Iris (32 samples/task, 100 epochs, batch 16)")
    print(f"{'method':<22} {'hidden':>7} {'first task s':>13} {'steady task s':>14}")
    for cls in (FineTuningClassifier, JointClassifier, AQCClassifier, EWCClassifier, SIClassifier):
        for hidden in ((), (4,)):
            def run():
                clf = cls(hidden_layer_sizes=hidden, learning_rate=0.1, random_state=0)
                clf.partial_fit(*data.train[0], classes=data.classes)

            first, steady = timed(run, repeats)
            print(f"{cls.__name__:<22} {str(hidden):>7} {first:13.3f} {steady:14.4f}")
    print()


def hessian_table(repeats, sizes, n_samples=1024, batch_size=64):
    print(f"AQC Hessian of the NLL, softmax regression, {n_samples} samples, batch {batch_size}: "
          "closed form and autodiff (Jacobian of the gradient)")
    print(f"{'features':>8} {'classes':>7} {'n_params':>8} {'H MB':>7} {'method':>11} "
          f"{'first s':>8} {'steady s':>9}")
    rng = np.random.default_rng(0)
    for n_features, n_classes in sizes:
        network = MLP(n_features, (), n_classes)
        model = Model(network, "categorical")
        X = rng.normal(size=(n_samples, n_features)).astype(np.float32)
        y = rng.integers(n_classes, size=n_samples).astype(np.int32)
        w = np.ones(n_samples, np.float32)
        theta = network.init(jax.random.PRNGKey(0))

        mb = network.n_params**2 * 4 / 2**20
        for method in ("closed_form", "autodiff"):
            def run():
                task_curvature(model, "hessian", "full", theta, X, y, w,
                               batch_size=batch_size, method=method).matrix.block_until_ready()

            first, steady = timed(run, repeats)
            print(f"{n_features:8d} {n_classes:7d} {network.n_params:8d} {mb:7.1f} {method:>11} "
                  f"{first:8.3f} {steady:9.3f}")
    print()


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer sizes and repeats")
    args = parser.parse_args()
    repeats = 3 if args.quick else 5
    partial_fit_table(repeats)
    sizes = [(4, 3), (13, 3), (64, 10), (128, 10)]
    if not args.quick:
        sizes += [(256, 10), (512, 10)]
    hessian_table(repeats, sizes)


if __name__ == "__main__":
    main()
