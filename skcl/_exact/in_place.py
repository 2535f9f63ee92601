"""Which of an estimator's D×D scatters a task may be added into in place.

A task's update merges its moments into the estimator's (:func:`~.moments.merge`).
Written into a new D×D array, that merge costs a small task more than its
own product; added in place, it writes nothing new. It is added in place
only where no one else can see the array change: a scatter that one of the
estimator's own merges wrote, still the one its moments hold, while no
read of its state (a prediction or a solve on a copy of the state, see
``ExactClassifier._reading``) is under way. Anything else (the first
task's moments, a scatter restored by a rejected ``fit``, replaced by a
forgetting, given by a merge of models, loaded from a file, or shared
with a copy of the estimator) is merged into a new array once, which is
the estimator's own from then on.

What each estimator owns is kept in a ledger beside it, weakly keyed by
the estimator, never in its attributes: a pickle or a copy of the
estimator carries no claim to the arrays it shares.
"""

import threading
import weakref
from contextlib import contextmanager

from .moments import merge

__all__ = ["STATE_LOCK", "merge_task", "reading"]

#: Held while an estimator's state changes in more than one attribute (a
#: task committed, a solve installed, a setting changed) and while a
#: prediction copies it, so that a prediction reads one consistent state.
#: Held for microseconds, never while computing, but for the one D×D
#: addition of a task into the scatter (:func:`merge_task`).
STATE_LOCK = threading.RLock()

_LEDGERS = weakref.WeakKeyDictionary()


class _Ledger:
    """The scatters an estimator's merges wrote, and the reads of its state under way."""

    __slots__ = ("owned", "readers")

    def __init__(self):
        self.owned, self.readers = (), 0


def _ledger(estimator):
    with STATE_LOCK:
        return _LEDGERS.setdefault(estimator, _Ledger())


@contextmanager
def reading(estimator):
    """A read of ``estimator``'s state under way: no task is added in place meanwhile."""
    ledger = _ledger(estimator)
    with STATE_LOCK:
        ledger.readers += 1
    try:
        yield
    finally:
        with STATE_LOCK:
            ledger.readers -= 1


def merge_task(estimator, before, task):
    """The moments after a task, added in place where the estimator may.

    Called under :data:`STATE_LOCK` once nothing can reject the task: the
    in-place addition is one numpy call, and the commit follows it in the
    same hold of the lock.

    Parameters
    ----------
    estimator : ExactClassifier
        Holding ``moments_`` and ``heldout_moments_``.
    before : sequence of GroupMoments
        Those two, as the task meets them (decay's scaled copies, or
        themselves).
    task : sequence of GroupMoments
        The task's moments.

    Returns
    -------
    list of GroupMoments
        The merged moments (learned, held out).
    """
    ledger = _ledger(estimator)
    current = estimator.moments_, estimator.heldout_moments_
    merged, owned = [], []
    for now, previous, new in zip(current, before, task):
        # decay's scaled copy is new, and nobody else's.
        mine = previous.scatter is not now.scatter or (
            not ledger.readers and any(now.scatter is array for array in ledger.owned))
        union = merge(previous, new, in_place=mine)
        merged.append(union)
        if union.scatter is not new.scatter and (union.scatter is not previous.scatter or mine):
            owned.append(union.scatter)
    ledger.owned = tuple(owned)
    return merged
