"""Guards against a task that diverged: the estimator then raises, unchanged.

A training run can fail without an exception: the loss turns non-finite,
or stays finite but grows by orders of magnitude, or the parameters
overflow in all but name. :func:`check_trained` recognises these after a
task's training and :func:`check_finite_state` after its fold, so that
``partial_fit``'s transaction restores the estimator instead of keeping a
useless state.
"""

import jax
import numpy as np

__all__ = ["check_finite_state", "check_trained"]

# A task whose final epoch's loss exceeds this many times its loss at the
# start has blown up, even when every number is still finite. Four orders
# of magnitude: a short run on a stiff penalty may end one or two above its
# start while Adam still oscillates (1 epoch of K-FAC AQC at λ = 1000: 30×);
# a blow-up (learning_rate=1e10) ends eight above.
DIVERGENCE_FACTOR = 1e4
# |θ| beyond this is an overflow in all but name: no prior admits it.
MAX_ABS_PARAM = 1e8
# A loss of this many nats per sample gives the observed labels probabilities
# of e^-1e10: the inputs or parameters are out of any workable scale.
MAX_LOSS_PER_SAMPLE = 1e10


def check_trained(params, losses, start_loss, n_samples, *, task, advice):
    """Raise ValueError when a task's training diverged or left any workable scale.

    Parameters
    ----------
    params : ndarray of shape (n_params,)
        The parameters after the task's last step.
    losses : ndarray of shape (n_epochs,)
        The loss of each epoch run.
    start_loss : float
        The task's whole objective at its starting parameters.
    n_samples : int
        The task's number of samples.
    task : int
        The task's number (counted from 1), for the message.
    advice : str
        What the user may try, appended to the message.
    """
    bad = ~np.isfinite(losses)
    if bad.any() or not np.all(np.isfinite(params)):
        epoch = int(np.argmax(bad)) + 1 if bad.any() else len(losses)
        raise ValueError(
            f"Training on task {task} diverged: the loss became non-finite (inf or "
            f"NaN) in epoch {epoch}. {advice}"
        )
    if losses[-1] > DIVERGENCE_FACTOR * max(start_loss, 1.0):
        raise ValueError(
            f"Training on task {task} diverged: its last epoch's loss ({losses[-1]:.3g}) "
            f"is far above its loss at the start ({start_loss:.3g}). {advice}"
        )
    if losses[-1] > MAX_LOSS_PER_SAMPLE * n_samples:
        raise ValueError(
            f"Training on task {task} failed: its last epoch's loss is "
            f"{losses[-1] / n_samples:.3g} per sample, far out of any workable scale. "
            f"{advice}"
        )
    if np.abs(params).max() > MAX_ABS_PARAM:
        raise ValueError(
            f"Training on task {task} diverged: parameters reached "
            f"{np.abs(params).max():.3g}. {advice}"
        )


def check_finite_state(state, task):
    """Raise ValueError when folding task ``task`` (counted from 1) left a
    non-finite number in the consolidation's state."""
    leaves = jax.tree_util.tree_leaves(state)
    if not all(np.all(np.isfinite(np.asarray(leaf))) for leaf in leaves):
        raise ValueError(
            f"Consolidating task {task} gave non-finite values; the estimator is unchanged."
        )
