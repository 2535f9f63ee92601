"""Model selection for task sequences: the paper's validation protocol.

:class:`SequenceGridSearch` is ``GridSearchCV`` for continual learning:
each candidate learns the training task sequence and is scored on the
validation task sequence. :func:`learn_task_sequence` runs one estimator
through a sequence and returns its accuracy matrix.

Scaling out: the search runs its candidates through joblib, so any joblib
backend works. On a Dask cluster::

    from dask.distributed import Client
    import joblib

    client = Client("tcp://scheduler:8786")   # or Client() for a local one
    with joblib.parallel_config(backend="dask"):
        search.fit(data.train, data.validation, classes=data.classes)

The workers need skcl installed (``pip install skcl[dask]`` on each).
"""

from ._scoring import SEQUENCE_SCORERS, SequenceScorer, get_sequence_scorer
from ._search import SequenceGridSearch, SequenceRandomizedSearch
from ._sequence import learn_task_sequence

__all__ = [
    "SEQUENCE_SCORERS",
    "SequenceGridSearch",
    "SequenceRandomizedSearch",
    "SequenceScorer",
    "get_sequence_scorer",
    "learn_task_sequence",
]
