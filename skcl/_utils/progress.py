"""Optional tqdm progress bars for long work (``progress_bar=True``).

tqdm is an optional dependency, the ``progress`` extra. An estimator
asked for a bar checks, before any work, that its ``progress_bar`` is a
bool and that tqdm imports (:func:`check_progress_bar`); :func:`progress_bar`
then gives a :mod:`tqdm.auto` bar (a widget in a notebook, text on
standard error elsewhere), or a no-op object of the same surface when the
bar is off. A bar only counts: it changes nothing that is computed.
"""

import sys

from sklearn.utils._param_validation import validate_parameter_constraints

__all__ = ["check_progress_bar", "progress_bar"]

EXTRA = "skcl[progress]"


def check_progress_bar(estimator):
    """Validate ``estimator.progress_bar``; when it is True, make sure tqdm imports.

    Raises
    ------
    sklearn.utils._param_validation.InvalidParameterError
        When ``progress_bar`` is not a bool (scikit-learn's message).
    ImportError
        When it is True and tqdm is not installed; the message names the
        extra to install.
    """
    validate_parameter_constraints(
        {"progress_bar": ["boolean"]},
        {"progress_bar": estimator.progress_bar},
        caller_name=type(estimator).__name__,
    )
    if estimator.progress_bar:
        _tqdm(estimator)


def progress_bar(estimator, *, total, desc, unit):
    """A bar of ``total`` units on standard error, or a no-op one.

    On when ``estimator.progress_bar`` is True (checked beforehand with
    :func:`check_progress_bar`). Use it as a context manager, so that the
    bar is closed, and cleared (``leave=False``), however the work ends::

        with progress_bar(self, total=n_batches, desc="transform", unit="batch") as bar:
            for ...:
                ...
                bar.update()
    """
    if not estimator.progress_bar:
        return _NoBar()
    tqdm = _tqdm(estimator)
    return tqdm(
        total=total,
        desc=f"{type(estimator).__name__} {desc}",
        unit=unit,
        leave=False,
        file=sys.stderr,
    )


def _tqdm(estimator):
    try:
        from tqdm.auto import tqdm
    except ImportError as error:
        raise ImportError(
            f"{type(estimator).__name__}(progress_bar=True) shows a tqdm progress bar, "
            f"but tqdm is not installed: pip install '{EXTRA}' (or pip install tqdm), or "
            f"leave progress_bar=False."
        ) from error
    return tqdm


class _NoBar:
    """The bar of ``progress_bar=False``: tqdm's surface, doing nothing."""

    def update(self, n=1):
        pass

    def set_postfix_str(self, s="", refresh=True):
        pass

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        return False
