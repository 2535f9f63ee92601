"""Deferred folds: a task's fold that only prepares a next task may wait.

Inside :func:`deferred_folds`, a gradient-trained estimator whose
consolidation allows it (``Consolidation.fold_can_wait``) keeps a learned
task's fold as a :class:`_PendingFold` in its private ``_pending_fold_``
slot, apart from ``consolidation_``, and finishes it on first use
(``skcl._gradient.base``, which also holds :func:`~skcl._gradient.base.complete_pending_fold`).
"""

import contextvars
from contextlib import contextmanager
from typing import Any, NamedTuple

__all__ = ["deferred_folds", "folds_may_wait"]

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
