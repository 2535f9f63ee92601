"""Advice that warns once per estimator and reason, at the user's line.

An advisory warning (a one-class task, a scaler frozen on a task missing
classes) says something about the estimator, not about one call: said
again on every ``partial_fit`` it buries the output (a sequence of
one-class tasks warned once per task, a grid of estimators built on one
line once per estimator and task). Python's own "default" action would
say it once per line, but scikit-learn's ``check_array`` changes the
warning filters on every call, which resets Python's registries of what
was shown; so each estimator keeps its own record of the reasons it
warned for, and this module a record of the (message, line) pairs shown.

The user's filters decide as Python's would: "default" shows a message
once per line of the user's code, "module" once per file, "once" once,
"always" every time (as a user who asks for it, or ``pytest.warns``,
expects), "ignore" never (and records nothing), "error" raises on every
call (the transaction of ``partial_fit`` then restores the record with
the rest of the estimator). Except under "always", an estimator also says
each reason once, wherever it is called from.

The record, ``_skcl_warned``, is a private attribute set by ``partial_fit``
and ``fit``: not a parameter, so ``get_params`` leaves it out and
``clone`` starts a fresh one. It is a tuple of reasons (which skops
persists), replaced, never changed in place, so that a shallow copy of an
estimator does not share it.

A search's candidates are clones, each of which would warn once: inside
:func:`collected`, which a search's worker wraps around a candidate,
advice is gathered instead of shown, and the search repeats each distinct
piece once (:func:`warn_collected`) at the line that called its ``fit``.
"""

import contextlib
import sys
import threading
import warnings

from .stack import user_frame

__all__ = ["collected", "warn_collected", "warn_once"]

_RECORD = "_skcl_warned"
_collecting = threading.local()  # the list a candidate's advice goes to, per thread
_shown = set()  # what "default", "module" and "once" have shown: their registry's keys


def warn_once(estimator, reason, message, category):
    """Warn ``message`` unless ``estimator`` has already warned for ``reason``.

    Parameters
    ----------
    estimator : object
        The estimator the advice is about; it keeps the record.
    reason : str
        What the advice is about, e.g. "single-class task".
    message : str
    category : type of Warning
    """
    gathered = getattr(_collecting, "advice", None)
    if gathered is not None:
        gathered.append((reason, message, category))
        return
    warned = getattr(estimator, _RECORD, ())
    frame, levels = user_frame(sys._getframe(1))
    action, key = _action(message, category, frame)
    if action == "ignore" or (action != "always" and reason in warned):
        return
    if action == "always" or key not in _shown:
        # stacklevel 2 is warn_once's caller; the user's frame is `levels` above it.
        warnings.warn(message, category, stacklevel=2 + levels)
    # Told, whether shown now or already at this line: two estimators learned
    # alike keep the same record.
    setattr(estimator, _RECORD, (*warned, reason))
    if action in ("default", "module", "once"):
        _shown.add(key)


@contextlib.contextmanager
def collected():
    """Gather the advice given in this thread instead of showing it.

    Yields
    ------
    advice : list of (reason, message, category)
        Filled as the block runs.
    """
    previous = getattr(_collecting, "advice", None)
    _collecting.advice = advice = []
    try:
        yield advice
    finally:
        _collecting.advice = previous


def warn_collected(estimator, advice):
    """Give each distinct piece of collected ``advice`` once, as :func:`warn_once`.

    Parameters
    ----------
    estimator : object
        Keeps the record (a search, for its candidates' advice).
    advice : iterable of (reason, message, category)
    """
    for reason, message, category in dict.fromkeys(advice):
        warn_once(estimator, reason, message, category)


def _action(message, category, frame):
    """The action of the first warning filter that matches, as ``warnings.warn`` finds
    it, and the key of what it would show once.

    A filter of ``filterwarnings`` holds compiled patterns of the message and
    the module; one of ``simplefilter`` holds None for both.
    """
    if frame is None:  # only internal frames above: a worker thread or process
        module, filename, lineno = "sys", "sys", 1
    else:
        module = frame.f_globals.get("__name__", "<string>")
        filename, lineno = frame.f_code.co_filename, frame.f_lineno
    action = warnings.defaultaction
    for candidate, text, kind, mod, line in warnings.filters:
        if ((text is None or text.match(message)) and issubclass(category, kind)
                and (mod is None or mod.match(module)) and line in (0, lineno)):
            action = candidate
            break
    key = {"once": (message, category), "module": (message, category, filename)}.get(
        action, (message, category, filename, lineno))
    return action, key
