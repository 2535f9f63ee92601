"""Neural consolidation (NC; paper, section II-C)."""

from ..._utils.docstrings import fill_doc
from ..._utils.validation import layer_sizes, positive_int, positive_real, store_parameters
from ..base import GradientClassifier
from ..consolidation import Neural

__all__ = ["NCClassifier"]


@fill_doc
class NCClassifier(GradientClassifier):
    """Neural consolidation: a neural network approximates the previous loss.

    After each task t a consolidator network κ(θ; φ) — fully connected
    on the flat parameter vector θ, swish hidden units, one output — is
    fitted to the current approximate total loss

        L̂_t(θ) = ½·precision·‖θ‖² + nll_1(θ)      (t = 1)
        L̂_t(θ) = λ κ(θ; φ*_{t-1}) + nll_t(θ)       (t > 1, eq. 5)

    with the NLL summed over the whole task's data. At every one of
    ``consolidator_n_steps`` Adam steps (cosine one-cycle schedule) a
    fresh sample of n points is drawn uniformly in the ball of radius r
    around θ*_t and φ takes a step on the L2-regularised Huber loss
    ½β‖φ‖² + Σ_i huber(κ(θ_i; φ) − L̂_t(θ_i)) (eq. 6). φ is warm-started
    from the previous task's φ*_{t-1}. The next task then minimises
    λ κ(θ; φ*_t) + nll_{t+1}(θ).

    This class follows the paper's eqs. 5–6. The paper's public code
    fits the consolidator to its minibatch *training* loss instead, whose
    consolidation term is divided by the number of minibatches: its target
    is (λ/n_batches)·κ + nll, and (1/n_batches)·½‖θ‖² + nll on task 1, so
    the older tasks weigh n_batches times less in κ than here.

    NC suits small networks: the consolidator's input is all of θ.

    Parameters
    ----------
    alpha : float, default=1.0
        λ, the weight of the consolidator in the loss (paper's grid: 1,
        10, 100, 1000, 10000).
    radius : float, default=1.0
        r, the radius of the ball around θ*_t on which κ is fitted (paper's
        grid: 1, 10, 100).
    consolidator_hidden_layer_sizes : tuple of int, default=(256, 256)
        Hidden layers of κ (the paper: two of 256 swish units).
    consolidator_n_steps : int, default=1000
        Adam steps of each consolidator fit.
    consolidator_learning_rate : float, default=0.01
        Peak learning rate of the consolidator's one-cycle schedule.
    consolidator_sample_size : int, default=64
        n, the points drawn in the ball at each step.
    consolidator_l2 : float, default=1.0
        β, the L2 regularisation of φ (the paper's code: 1).
    consolidator_target_size : int or None, default=None
        None (the paper): every step's target L̂_t(θ_i) sums the NLL over
        the whole task, which dominates the fit's cost on large tasks
        (n_samples × n points forward passes per step). An integer m:
        over m samples drawn afresh (uniformly, with replacement) at every
        step, scaled by n_samples/m, an unbiased estimate about
        n_samples/m times cheaper; tasks of at most m samples are summed
        whole. A cheaper, noisier target: see the user guide for what it
        did to accuracy.
{common}

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    n_tasks_seen_ : int
    theta_ : ndarray of shape (n_params,)
        θ*_t.
    consolidation_ : NeuralState
        κ(·; φ*_t), the stand-in for L_t when the next task is learned
        (``consolidation_.phi`` and ``consolidation_.kappa(theta)``; before
        the first task, the Gaussian prior alone).
    consolidator_loss_curve_ : ndarray of shape (consolidator_n_steps,)
        The consolidator loss (eq. 6) at each step of the last fit.
    loss_curve_ : ndarray of shape (n_epochs,)

    Examples
    --------
    >>> from skcl import NCClassifier
    >>> from skcl.datasets import load_ci_split_iris
    >>> data = load_ci_split_iris()
    >>> clf = NCClassifier(alpha=1.0, radius=1.0, learning_rate=0.1, random_state=0)
    >>> for X, y in data.train:
    ...     clf = clf.partial_fit(X, y, classes=data.classes)
    >>> clf.consolidation_.phi.shape
    (70145,)
    >>> clf.consolidator_loss_curve_.shape  # one loss per consolidator step
    (1000,)
    """

    _parameter_constraints = {
        **GradientClassifier._parameter_constraints,
        "alpha": [positive_real],
        "radius": [positive_real],
        "consolidator_hidden_layer_sizes": ["array-like", positive_int],
        "consolidator_n_steps": [positive_int],
        "consolidator_learning_rate": [positive_real],
        "consolidator_sample_size": [positive_int],
        "consolidator_l2": [positive_real],
        "consolidator_target_size": [positive_int, None],
    }
    _warns_on_single_class_task = True

    def __init__(
        self,
        alpha=1.0,
        radius=1.0,
        *,
        consolidator_hidden_layer_sizes=(256, 256),
        consolidator_n_steps=1000,
        consolidator_learning_rate=0.01,
        consolidator_sample_size=64,
        consolidator_l2=1.0,
        consolidator_target_size=None,
        hidden_layer_sizes=(),
        activation="swish",
        n_epochs=100,
        batch_size=16,
        learning_rate=0.01,
        learning_rate_schedule="one_cycle",
        prior_precision=1.0,
        class_weight=None,
        random_state=None,
        verbose=0,
        grow_classes=False,
        callback=None,
        scenario="class",
    ):
        store_parameters(self, locals())

    def _make_consolidation(self):
        return Neural(
            float(self.alpha),
            float(self.radius),
            float(self.consolidator_learning_rate),
            float(self.consolidator_l2),
            layer_sizes(self.consolidator_hidden_layer_sizes, "consolidator_hidden_layer_sizes"),
            int(self.consolidator_n_steps),
            int(self.consolidator_sample_size),
            None if self.consolidator_target_size is None else int(self.consolidator_target_size),
        )

    @property
    def consolidator_loss_curve_(self):
        """The consolidator loss (eq. 6) at each step of the last fit."""
        return self.consolidation_.fit_losses
