"""skcl's progress lines go through :mod:`logging`, under the ``skcl`` logger."""

import logging

__all__ = ["show_skcl_logs", "log_progress"]


def show_skcl_logs():
    """Make INFO lines of the ``skcl`` loggers visible if logging is unconfigured.

    ``verbose`` promises output, as scikit-learn's printing does; a program
    that configured logging itself keeps full control.
    """
    root = logging.getLogger("skcl")
    if not root.hasHandlers():
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(message)s"))
        root.addHandler(handler)
        if root.level == logging.NOTSET:
            root.setLevel(logging.INFO)


def log_progress(logger, message):
    """One progress line of ``verbose`` mode, at INFO, shown as above."""
    show_skcl_logs()
    logger.info(message)
