"""Where a warning points: at the user's line, however deep skcl called it from.

A warning raised inside ``partial_fit`` is reached through skcl's surface,
its transaction, perhaps a ``Pipeline`` or a search, scikit-learn's
wrappers and joblib's dispatch; a fixed ``stacklevel`` is right for one of
those paths only.
"""

import contextlib
import functools
import inspect
import os

import joblib
import sklearn

__all__ = ["user_frame", "user_stacklevel"]

# Frames in these folders and files are skcl's, scikit-learn's, joblib's (a
# search's candidates run inside its Parallel) or their decorators'.
_INTERNAL = (
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep,  # skcl/
    os.path.dirname(os.path.abspath(sklearn.__file__)) + os.sep,
    os.path.dirname(os.path.abspath(joblib.__file__)) + os.sep,
    os.path.abspath(contextlib.__file__),
    os.path.abspath(functools.__file__),
)


def _is_internal(frame):
    return os.path.abspath(frame.f_code.co_filename).startswith(_INTERNAL)


def user_frame(frame):
    """The first frame at or above ``frame`` outside skcl, and how far up it is.

    Parameters
    ----------
    frame : frame
        Where to start.

    Returns
    -------
    frame : frame or None
        None when every frame above is internal (a worker thread or process).
    levels : int
        The number of frames skipped.
    """
    levels = 0
    while frame is not None and _is_internal(frame):
        frame = frame.f_back
        levels += 1
    return frame, levels


def user_stacklevel():
    """The ``stacklevel`` of ``warnings.warn`` that names the first frame outside skcl.

    Called by the function that warns; frames of skcl, scikit-learn,
    joblib, ``contextlib`` and ``functools`` between it and the user's
    code are skipped.

    Returns
    -------
    int
        2 when the warning function's own caller is the user's code.
    """
    _, levels = user_frame(inspect.currentframe().f_back.f_back)  # the warning function's caller
    return 2 + levels
