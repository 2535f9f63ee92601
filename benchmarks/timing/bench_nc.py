"""Time of neural consolidation's consolidator fit and of the variational baselines.

Two benchmark classes, run by the harness (``first`` includes JAX's
compilation; ``median`` is the median of the following ``--repeats``
calls, which reuse the compiled code, as in a hyperparameter grid):

1. ``NCConsolidator``: one consolidator fit (the paper's defaults: κ with
   hidden layers (256, 256), 1000 Adam steps, 64 ball samples per step,
   r = 10) after task 1 of CI Split Iris, for softmax regression (hidden 0,
   15 parameters) and the FCNN with 4 hidden units (35 parameters).
2. ``VariationalTask``: one partial_fit task per variational estimator on
   CI Split Iris (learning rate 0.1, hidden 0 or 4) and CI Split Wine
   (0.01, hidden 0 or 16), the paper's settings: 100 epochs, batch 16.

Run::

    PYTHONPATH=. python benchmarks/timing/bench_nc.py [--quick] [--repeats 5]
"""

import jax
import numpy as np

import skcl
from benchmarks import _harness as harness
from skcl import FineTuningClassifier
from skcl._gradient.consolidation import Prior, prior_state
from skcl._gradient.consolidation.neural import fit_consolidator
from skcl._gradient.model import Model
from skcl._gradient.networks import MLP
from skcl.datasets import load_ci_split_iris, load_ci_split_wine


class NCConsolidator:
    """One consolidator fit after task 1 of CI Split Iris."""

    params = [0, 4]
    param_names = ["hidden"]

    def setup(self, hidden):
        data = load_ci_split_iris()
        X, y = data.train[0]
        self.X, self.y = X.astype(np.float32), y.astype(np.int32)
        self.w = np.ones(len(y), np.float32)
        self.clf = FineTuningClassifier(hidden_layer_sizes=(hidden,) if hidden else (),
                                        learning_rate=0.1, random_state=0)
        self.clf.partial_fit(*data.train[0], classes=data.classes)
        self.model = Model(self.clf.network_, self.clf.likelihood_)
        self.prior = prior_state(self.clf.network_.n_params, 1.0)
        self.consolidator = MLP(self.clf.network_.n_params, (256, 256), 1)
        self.phi0 = self.consolidator.init(jax.random.PRNGKey(0))

    def time_fit_consolidator(self, hidden):
        phi, _ = fit_consolidator(
            self.model, self.consolidator, self.phi0, Prior(), self.prior, self.clf.theta_,
            10.0, self.X, self.y, self.w, jax.random.PRNGKey(1), 0.01, 1.0, n_steps=1000,
            n_points=64,
        )
        phi.block_until_ready()


class VariationalTask:
    """One partial_fit task of a variational estimator, Iris or Wine."""

    params = [["iris, 0", "iris, 4", "wine, 0", "wine, 16"],
              ["GVCLClassifier", "GMVCLClassifier", "GSFSVIClassifier"]]
    param_names = ["sequence, hidden", "method"]

    def setup(self, case, method):
        sequence, hidden = case.split(", ")
        self.data = (load_ci_split_iris if sequence == "iris" else load_ci_split_wine)()
        self.learning_rate = 0.1 if sequence == "iris" else 0.01
        self.hidden = (int(hidden),) if int(hidden) else ()
        self.cls = getattr(skcl, method)

    def time_partial_fit(self, case, method):
        clf = self.cls(hidden_layer_sizes=self.hidden, learning_rate=self.learning_rate,
                       random_state=0)
        clf.partial_fit(*self.data.train[0], classes=self.data.classes)


if __name__ == "__main__":
    harness.main_of(__name__)
