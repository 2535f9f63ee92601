"""The paper's experiments: Table I's task sequences, methods and grids.

One private module per job: ``_registry`` (the methods, their grids and
the paper's numbers), ``_sequences`` (the task sequences and their
training and pre-training settings), ``_extractors`` (pre-training and
caching the frozen extractor of an image sequence), ``_runner`` (running
columns and seeds), ``_method`` (one method at one seed: its search and
its test scores), ``_tables`` (summaries and the printed table) and
``_files`` (CSV/JSON/text results, their environment, figures), and
``_console`` (the command's help examples and progress lines);
this package's namespace is the public one. ``skcl reproduce`` is the
command line.

The protocol (paper, section IV and appendix D): for each method, every
hyperparameter setting of its grid learns the training task sequence and
is scored by final average accuracy on the validation sequence; the best
one is evaluated by final average accuracy on the test sequence.

Classical sequences (Table I(a)) learn on the raw features with softmax
regression (SR) or the paper's FCNN. Image sequences (Table I(b)) first
pre-train a :class:`~skcl.feature_extraction.PretrainedFeatureExtractor`
on a similar task, freeze it, and learn the sequence with one dense layer
on its features; :data:`SEQUENCES` names the paper's pre-training task of
each and the offline stand-ins (:data:`PRETRAINING`).

:data:`METHODS` is the registry of Table I's rows: the estimator (looked
up lazily in :mod:`skcl`, so a method whose estimator is not in this build
is reported as "not available" rather than failing), its grid from
appendix D, and the numbers of the paper and of the paper's public code.
:func:`reproduce` runs it; ``skcl reproduce`` is its command line.

Besides the test final average accuracy, each method's row reports the
average forgetting on the test sequence, and the log loss and expected
calibration error of every test task after the last one. Progress goes to
the :mod:`logging` logger ``skcl.reproduce`` (INFO), unless a ``log``
callable is given; ``skcl reproduce`` shows it.

The paper reports one run (one seed) per cell. On sequences this small the
seed alone moves a cell by whole classes, so ``n_seeds`` repeats the whole
protocol (grid on validation, best candidate on test) for consecutive
seeds; :func:`summarize` gives each cell's mean, sample standard deviation
and range over them, and how many seeds reach the paper's number.
"""

from .._utils.lazy import lazy_exports

# Imported on first use (PEP 562): the command line reads the registries
# (_registry, _sequences) to parse its arguments, without the runner's
# JAX and scikit-learn.
_LAZY = {
    "METHODS": "._registry",
    "Method": "._registry",
    "select_methods": "._registry",
    "GROUPS": "._sequences",
    "PRETRAINING": "._sequences",
    "SEQUENCES": "._sequences",
    "Pretraining": "._sequences",
    "TaskSequence": "._sequences",
    "columns_for": "._sequences",
    "methods_for": "._sequences",
    "pretrained_extractor": "._extractors",
    "PROTOCOLS": "._runner",
    "reproduce": "._runner",
    "run_column": "._runner",
    "format_table": "._tables",
    "summarize": "._tables",
    "environment": "._files",
    "write_results": "._files",
}

__all__ = [
    "METHODS",
    "SEQUENCES",
    "GROUPS",
    "PRETRAINING",
    "PROTOCOLS",
    "Method",
    "Pretraining",
    "TaskSequence",
    "columns_for",
    "environment",
    "format_table",
    "methods_for",
    "pretrained_extractor",
    "reproduce",
    "run_column",
    "select_methods",
    "summarize",
    "write_results",
]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
