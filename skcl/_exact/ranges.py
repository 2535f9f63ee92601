"""What float64 can square: inputs refused where the exact classifiers' sums would not hold.

The exact family's sums and distances square the inputs. A feature whose
every value is below about 1e-154 squares to zero (the model would read it
as constant), and a test row beyond about 1e154 in the model's units has
squared distances that overflow (its log joints −inf or NaN): both are
refused with a message, rather than a silent wrong answer or NaN.
"""

import numpy as np

__all__ = ["answerable", "refuse_underflow"]

#: Below this magnitude a float64's square is subnormal or zero (√2.2e-308).
_SMALLEST_SQUARABLE = float(np.sqrt(np.finfo(np.float64).tiny))


def refuse_underflow(X):
    """Refuse a task with a feature whose every value is too small to square.

    Its squares (the scatter, every distance) underflow to zero, and the
    model would silently read the feature as constant: on Wine scaled to
    1e-170 both classifiers predicted one class. A pass over X, beside the
    update's D² per row, spared where no value of X's dtype is that small
    (float32's least, 1.4e-45, squares in float64).
    """
    if X.dtype.kind == "f" and np.finfo(X.dtype).smallest_subnormal >= _SMALLEST_SQUARABLE:
        return
    peak = np.abs(X).max(axis=0)
    small = np.flatnonzero((peak > 0) & (peak < _SMALLEST_SQUARABLE))
    if len(small):
        raise ValueError(
            f"Input X has values too small to square in float64: feature {int(small[0])} "
            f"({len(small)} in all) is at most {float(peak[small[0]]):.3g} in magnitude, whose "
            f"square underflows. Rescale the inputs (a StandardScaler, say)."
        )


def answerable(columns):
    """The decision columns or log joints, refused where rows were too large for them.

    A row far beyond the training data (entries past about 1e154 in the
    model's units) has squared distances that overflow float64: its log
    joints are −inf in every column (or NaN), and no answer read from
    them would be right. A column that is −inf alone is a declared class
    with no rows yet.

    Raises
    ------
    ValueError
        Naming the rows, rather than NaN reaching the user.
    """
    with np.errstate(invalid="ignore"):
        bad = (np.isnan(columns).any(axis=1) | np.isposinf(columns).any(axis=1)
               | np.isneginf(columns).all(axis=1))
    if bad.any():
        raise ValueError(
            f"Input X has values too large for this model: the squared distances of "
            f"{int(bad.sum())} row(s) (the first is row {int(np.flatnonzero(bad)[0])}) overflow "
            f"float64. Rescale the inputs as the training rows were."
        )
    return columns
