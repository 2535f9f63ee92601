"""Deferred folds: a task's fold that only prepares a next task may wait.

Inside :func:`deferred_folds`, a gradient-trained estimator whose
consolidation allows it (``Consolidation.fold_can_wait``) keeps a learned
task's fold as a :class:`_PendingFold` in its private ``_pending_fold_``
slot, apart from ``consolidation_``, and finishes it on first use. Every
reader and writer of that slot is here: :class:`PendingFoldMixin`, which
:class:`~skcl._gradient.base.GradientClassifier` inherits, and
:func:`complete_pending_fold`, its public face for the search.
"""

import contextvars
import threading
from contextlib import contextmanager
from typing import Any, NamedTuple

import numpy as np

__all__ = [
    "UNSET",
    "PendingFoldMixin",
    "complete_pending_fold",
    "deferred_folds",
    "folds_may_wait",
]

# A fitted attribute's update that removes it: a deferred fold's
# consolidation_, which the next use of it completes.
UNSET = object()

# Held while a pending fold is finished: threads that read consolidation_
# (or hessian_, importance_, ...) at once fold it once, the others wait
# and read the result. One lock for every estimator, as a lock attribute
# would neither pickle nor deepcopy; only the rare folds themselves wait.
_FOLD_LOCK = threading.RLock()

# Set by deferred_folds(): a task's fold that only prepares the next task
# waits until one comes (``Consolidation.fold_can_wait``).
_DEFER_FOLDS = contextvars.ContextVar("skcl_defer_folds", default=False)


@contextmanager
def deferred_folds():
    """Within it, estimators postpone the fold that only prepares a next task.

    A hyperparameter search scores every candidate on θ*_T after its last
    task and trains only the best one further; the fold after that last
    task (AQC's and EWC's curvature, SI's importances, NC's consolidator
    fit) would feed nobody. Inside this context the estimator keeps what
    the fold needs instead (``_PendingFold``, in a private slot apart from
    ``consolidation_``), and folds it when a next task comes, when
    ``consolidation_`` (or an attribute read from it) is first used, or
    when :func:`complete_pending_fold` is called, with the same result.
    """
    token = _DEFER_FOLDS.set(True)
    try:
        yield
    finally:
        _DEFER_FOLDS.reset(token)


def folds_may_wait():
    """Whether the calling code runs inside :func:`deferred_folds`."""
    return _DEFER_FOLDS.get()


class _PendingFold(NamedTuple):
    """A learned task whose fold waits (a pytree; see :func:`deferred_folds`).

    ``state`` is the stand-in for L_{t-1} the task was learned against,
    ``task`` the :class:`~skcl._gradient.consolidation.FinishedTask` and ``key`` the
    fold's key: everything ``Consolidation.fold`` needs, so that folding it
    later gives exactly what folding it at once would have.
    """

    state: Any
    task: Any
    key: Any


class PendingFoldMixin:
    """The fold of a gradient-trained estimator: at once, or pending.

    The host class supplies ``_make_consolidation()``, ``_model()`` and
    ``n_tasks_seen_``. A pending fold lives in ``_pending_fold_``, never
    in ``consolidation_``, so that a fitted attribute keeps its type; the
    first use of ``consolidation_`` finishes it.
    """

    def _fold(self, method, model, state, task, fold_key):
        """Fold the learned task into the stand-in, or keep it for later.

        Returns the state (as host arrays, which pickle anywhere) and the
        attributes to set: ``consolidation_``, or inside
        :func:`deferred_folds`, when the fold may wait, the
        ``_pending_fold_`` (and no ``consolidation_``: :data:`UNSET`).
        """
        if method.fold_can_wait and folds_may_wait():
            pending = _on_host(_PendingFold(state, task, fold_key))
            return pending, {"_pending_fold_": pending, "consolidation_": UNSET}
        state = _checked_on_host(method.fold(model, state, task, fold_key),
                                 self.n_tasks_seen_ + 1)
        return state, {"consolidation_": state}

    def _complete_fold(self):
        """Fold in the last task now, if its fold was deferred (see ``deferred_folds``).

        Gives exactly the state an immediate fold would have given, in
        ``consolidation_``; :func:`complete_pending_fold` is its public face.
        Thread-safe: threads that need the fold at once fold it once.
        """
        if "_pending_fold_" not in vars(self):
            return
        with _FOLD_LOCK:
            # Another thread may have folded it while this one waited.
            pending = vars(self).get("_pending_fold_")
            if pending is None:
                return
            # Kept as host arrays, like every state; the batch size is static again.
            task = pending.task._replace(batch_size=int(pending.task.batch_size))
            state = self._make_consolidation().fold(self._model(), pending.state, task,
                                                    pending.key)
            # consolidation_ before the pending fold goes: a reader sees one or the other.
            self.consolidation_ = _checked_on_host(state, self.n_tasks_seen_)
            del self._pending_fold_

    def __getattr__(self, name):
        # Only for attributes not found: a deferred fold (``_pending_fold_``)
        # is finished on the first use of ``consolidation_`` (and so of the
        # attributes read from it: hessian_, importance_, ...).
        if name == "consolidation_":
            self._complete_fold()
            # Also when another thread finished the fold after this lookup missed it.
            if "consolidation_" in vars(self):
                return vars(self)["consolidation_"]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


# JAX is imported where a fold runs, not at the top: the search imports this
# module for every estimator (complete_pending_fold, deferred_folds), and a
# search over the exact family should not load JAX; a fold runs only in a
# gradient-trained estimator, which has loaded it.
def _on_host(tree):
    """The pytree with its arrays as numpy arrays, which pickle anywhere."""
    import jax

    return jax.tree.map(np.asarray, tree)


def _checked_on_host(state, task_number):
    """A folded state, refused if not finite, as host arrays."""
    from .divergence import check_finite_state

    check_finite_state(state, task_number)
    return _on_host(state)


def complete_pending_fold(estimator):
    """Finish an estimator's deferred fold now (see :func:`deferred_folds`).

    Makes an estimator trained inside ``deferred_folds`` an ordinary one,
    exactly as if its folds had not waited. Any estimator may be given:
    those with no pending fold (every estimator outside skcl's gradient
    core, and those whose last fold was not deferred) are left as they are.
    """
    if isinstance(estimator, PendingFoldMixin):
        estimator._complete_fold()
