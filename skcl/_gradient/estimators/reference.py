"""The two reference methods that bound the others: fine-tuning and joint."""

from ..._utils.docstrings import fill_doc
from ..base import GradientClassifier
from ..consolidation import Prior, Replay

__all__ = ["FineTuningClassifier", "JointClassifier"]


@fill_doc
class FineTuningClassifier(GradientClassifier):
    """Fine-tuning: each task is learned with no memory of the previous ones.

    The lower bound of the paper's comparison. Every task minimises
    ½·precision·‖θ‖² + nll_t(θ) starting from the previous solution, so
    L_{t-1} is replaced by the prior alone and old tasks are forgotten.

    Parameters
    ----------
{common}

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    n_tasks_seen_ : int
    theta_ : ndarray of shape (n_params,)
    loss_curve_ : ndarray of shape (n_epochs,)

    Examples
    --------
    >>> from skcl import FineTuningClassifier
    >>> from skcl.datasets import load_ci_split_iris
    >>> data = load_ci_split_iris()
    >>> clf = FineTuningClassifier(learning_rate=0.1, random_state=0)
    >>> for X, y in data.train:
    ...     clf = clf.partial_fit(X, y, classes=data.classes)
    >>> clf.predict(data.test[0][0])[:3]  # only the last class survives
    array([2, 2, 2])
    """

    def _make_consolidation(self):
        return Prior()


@fill_doc
class JointClassifier(GradientClassifier):
    """Joint MAP training: keeps every task's data and retrains on all of it.

    The upper bound of the paper's comparison: nothing is approximated,
    task t minimises ½·precision·‖θ‖² + Σ_{i≤t} nll_i(θ), starting from the
    previous solution with a fresh optimiser. Memory grows with the data.

    Parameters
    ----------
{common}

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    n_tasks_seen_ : int
    theta_ : ndarray of shape (n_params,)
    loss_curve_ : ndarray of shape (n_epochs,)
    n_samples_seen_ : int
        Number of stored training samples.

    Examples
    --------
    >>> from skcl import JointClassifier
    >>> from skcl.datasets import load_ci_split_iris
    >>> data = load_ci_split_iris()
    >>> clf = JointClassifier(learning_rate=0.1, random_state=0)
    >>> for X, y in data.train:
    ...     clf = clf.partial_fit(X, y, classes=data.classes)
    >>> clf.n_samples_seen_
    96
    """

    def _make_consolidation(self):
        return Replay()

    def _task_attributes(self, method, state, key):
        return {"n_samples_seen_": len(state.y)}
