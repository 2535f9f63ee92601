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
    """

    name: str
    score_func: Callable
    sign: int = 1
    needs_history: bool = True

    def __call__(self, R):
        return self.sign * float(self.score_func(R))


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
