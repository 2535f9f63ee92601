"""Scores of a whole task sequence, computed from its accuracy matrix.

A sequence scorer maps the accuracy matrix ``R`` of the validation
sequence (``R[i, j]``: accuracy on task i after learning task j) to a
float where greater is better, as scikit-learn's scorers do. Metrics
where lower is better are offered negated (``neg_average_forgetting``),
like scikit-learn's ``neg_log_loss``.
"""

from dataclasses import dataclass
from typing import Callable

from .. import metrics

__all__ = ["get_sequence_scorer", "SEQUENCE_SCORERS"]


@dataclass(frozen=True)
class SequenceScorer:
    """A named score of an accuracy matrix; greater is better.

    Attributes
    ----------
    name : str
    score_func : callable
        ``score_func(R) -> float``.
    sign : {1, -1}
        Multiplies ``score_func`` so that greater is better.
    needs_history : bool
        Whether the score looks at columns of ``R`` before the last one.
        Final average accuracy does not, so the search evaluates only
        after the last task.

    Examples
    --------
    >>> import numpy as np
    >>> from skcl.model_selection import SequenceScorer
    >>> last_task = SequenceScorer("last_task_accuracy", lambda R: np.asarray(R)[-1, -1],
    ...                            needs_history=False)
    >>> last_task([[1.0, 0.0], [0.0, 0.9]])
    0.9
    """

    name: str
    score_func: Callable
    sign: int = 1
    needs_history: bool = True

    def __call__(self, R):
        return self.sign * float(self.score_func(R))


#: The named sequence scorers, by name: ``"final_average_accuracy"`` (the
#: paper's criterion, the mean of the last column of ``R``),
#: ``"neg_average_forgetting"`` and ``"backward_transfer"``; each a
#: :class:`SequenceScorer`.
SEQUENCE_SCORERS = {
    scorer.name: scorer
    for scorer in [
        SequenceScorer("final_average_accuracy", metrics.average_accuracy, 1, False),
        SequenceScorer("neg_average_forgetting", metrics.average_forgetting, -1, True),
        SequenceScorer("backward_transfer", metrics.backward_transfer, 1, True),
    ]
}


def get_sequence_scorer(scoring):
    """Turn ``scoring`` into a :class:`SequenceScorer`.

    Parameters
    ----------
    scoring : str or callable
        A name in ``SEQUENCE_SCORERS`` ("final_average_accuracy", the
        paper's criterion; "neg_average_forgetting"; "backward_transfer"),
        or a callable ``scoring(R) -> float`` on the accuracy matrix,
        greater is better.

    Returns
    -------
    SequenceScorer

    Examples
    --------
    >>> from skcl.model_selection import get_sequence_scorer
    >>> R = [[1.0, 0.5, 0.2],
    ...      [0.0, 0.9, 0.6],
    ...      [0.0, 0.0, 0.8]]
    >>> round(get_sequence_scorer("final_average_accuracy")(R), 4)
    0.5333
    >>> round(get_sequence_scorer("neg_average_forgetting")(R), 4)  # greater is better
    -0.55
    """
    if isinstance(scoring, SequenceScorer):
        return scoring
    if isinstance(scoring, str):
        if scoring in SEQUENCE_SCORERS:
            return SEQUENCE_SCORERS[scoring]
        hint = ""
        if "neg_" + scoring in SEQUENCE_SCORERS:
            hint = f" Lower {scoring} is better; use 'neg_{scoring}' so that greater is better."
        raise ValueError(
            f"Unknown scoring {scoring!r}.{hint} Valid names are "
            f"{sorted(SEQUENCE_SCORERS)}, or pass a callable scoring(R) -> float "
            "on the accuracy matrix."
        )
    if callable(scoring):
        return SequenceScorer(getattr(scoring, "__name__", "custom"), scoring, 1, True)
    raise TypeError(
        f"scoring must be a string or a callable scoring(R) -> float, got {type(scoring).__name__}."
    )
