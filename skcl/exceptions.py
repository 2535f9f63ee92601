"""The warnings and errors of skcl a user may filter or catch.

skcl's own classes live here; elsewhere skcl raises the errors its
parameters and inputs call for (:class:`ValueError`, :class:`TypeError`)
and scikit-learn's: :class:`sklearn.exceptions.NotFittedError` from an
estimator used before its first task, and
:class:`sklearn.exceptions.FitFailedWarning` from a hyperparameter search
whose candidates failed (:mod:`skcl.model_selection`). A deprecated
parameter value warns with :class:`FutureWarning`, as in scikit-learn.
Importing this module imports neither JAX nor an estimator.
"""

__all__ = ["CrashingBLASError", "SingleClassTaskWarning"]


class SingleClassTaskWarning(UserWarning):
    """A task with one class gave a stand-in for its loss that keeps almost nothing.

    Its negative log-likelihood is minimised by making that class certain,
    where the loss is flat: the curvature a quadratic stand-in (AQC, EWC,
    online EWC, SI) or a fitted consolidator (NC) keeps of it is negligible
    beside the prior's, and the next task overwrites it unless λ (the
    ``alpha`` of each of these classifiers) is large. Each such task
    warns, through Python's :mod:`warnings` filters.

    Examples
    --------
    >>> import warnings
    >>> from skcl import AQCClassifier
    >>> from skcl.datasets import load_ci_split_iris
    >>> from skcl.exceptions import SingleClassTaskWarning
    >>> data = load_ci_split_iris()  # one species per task
    >>> clf = AQCClassifier(n_epochs=1, random_state=0)
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", SingleClassTaskWarning)
    ...     clf = clf.partial_fit(*data.train[0], classes=data.classes)
    >>> clf.n_tasks_seen_
    1
    """


class CrashingBLASError(RuntimeError):
    """Work refused up front because the loaded BLAS would segfault running it.

    OpenBLAS's threaded ``syrk`` (releases 0.3.29 to 0.3.34 on two
    threads) crashes the process for products and Choleskys wider than
    about 16,000 columns. skcl builds its own wider ones from blocks, but
    scikit-learn's models it runs (RanDumb's, in ``skcl reproduce``) cannot
    be blocked: they are refused before any data loads, with the library's
    version and the workaround (one BLAS thread, or another BLAS) in the
    message. A RuntimeError, so code that caught that still does.

    Examples
    --------
    >>> from skcl.exceptions import CrashingBLASError
    >>> issubclass(CrashingBLASError, RuntimeError)
    True
    """
