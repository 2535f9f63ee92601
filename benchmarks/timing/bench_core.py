"""Time of the core: one partial_fit task per method, and AQC's Hessian.

Two benchmark classes, run by the harness (``first`` is the first call,
JAX's compilation included; ``median`` the median of the following
``--repeats`` calls, which reuse the compiled loop, as in a
hyperparameter grid):

* ``PartialFitTask``: one ``partial_fit`` task of CI Split Iris (32
  samples, 100 epochs, batch 16) per method, softmax regression (hidden
  0) and one hidden layer of 4.
* ``AQCHessian``: AQC's Hessian of the NLL for softmax regression, 1,024
  samples, batch 64, closed form against autodiff (the Jacobian of the
  gradient), by (features, classes): its time, and the peak memory of a
  fresh process that computes it once.

Run::

    PYTHONPATH=. python benchmarks/timing/bench_core.py [--quick] [--repeats 5]
"""

import jax
import numpy as np

import skcl
from benchmarks import _harness as harness
from skcl._gradient.consolidation.curvature import task_curvature
from skcl._gradient.model import Model
from skcl._gradient.networks import MLP
from skcl.datasets import load_ci_split_iris

METHODS = ["FineTuningClassifier", "JointClassifier", "AQCClassifier", "EWCClassifier",
           "SIClassifier"]


class PartialFitTask:
    """One partial_fit task of CI Split Iris, per method and hidden width."""

    params = [METHODS, [0, 4]]
    param_names = ["method", "hidden"]

    def setup(self, method, hidden):
        self.data = load_ci_split_iris()
        self.cls = getattr(skcl, method)

    def time_partial_fit(self, method, hidden):
        clf = self.cls(hidden_layer_sizes=(hidden,) if hidden else (), learning_rate=0.1,
                       random_state=0)
        clf.partial_fit(*self.data.train[0], classes=self.data.classes)


class AQCHessian:
    """AQC's Hessian of softmax regression's NLL, 1,024 samples, batch 64."""

    params = [["4x3", "13x3", "64x10", "128x10", "256x10", "512x10"],
              ["closed_form", "autodiff"]]
    quick_params = [["4x3", "13x3", "64x10", "128x10"], ["closed_form", "autodiff"]]
    param_names = ["features x classes", "method"]

    def setup(self, size, method, n_samples=1024):
        n_features, n_classes = map(int, size.split("x"))
        rng = np.random.default_rng(0)
        network = MLP(n_features, (), n_classes)
        self.model = Model(network, "categorical")
        self.X = rng.normal(size=(n_samples, n_features)).astype(np.float32)
        self.y = rng.integers(n_classes, size=n_samples).astype(np.int32)
        self.w = np.ones(n_samples, np.float32)
        self.theta = network.init(jax.random.PRNGKey(0))

    def time_hessian(self, size, method):
        task_curvature(self.model, "hessian", "full", self.theta, self.X, self.y, self.w,
                       batch_size=64, method=method).matrix.block_until_ready()

    def peakmem_hessian(self, size, method):
        self.time_hessian(size, method)


if __name__ == "__main__":
    harness.main_of(__name__)
