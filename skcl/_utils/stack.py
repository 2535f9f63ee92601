"""Where a warning points: at the user's line, however deep skcl called it from.

A warning raised inside ``partial_fit`` is reached through skcl's surface,
its transaction, perhaps a ``Pipeline`` or a search, and scikit-learn's
wrappers; a fixed ``stacklevel`` is right for one of those paths only.
"""

import contextlib
import functools
import inspect
import os

import sklearn

__all__ = ["user_stacklevel"]

# Frames in these folders and files are skcl's, scikit-learn's or their decorators'.
_INTERNAL = (
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep,  # skcl/
    os.path.dirname(os.path.abspath(sklearn.__file__)) + os.sep,
    os.path.abspath(contextlib.__file__),
    os.path.abspath(functools.__file__),
)


def user_stacklevel():
    """The ``stacklevel`` of ``warnings.warn`` that names the first frame outside skcl.

    Called by the function that warns; frames of skcl, scikit-learn,
    ``contextlib`` and ``functools`` between it and the user's code are
    skipped.

    Returns
    -------
    int
        2 when the warning function's own caller is the user's code.
    """
    frame = inspect.currentframe().f_back.f_back  # the warning function's caller
    level = 2
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_INTERNAL):
        frame = frame.f_back
        level += 1
    return level
