"""What a gradient-trained estimator tells its user while it learns.

Two channels, both opt-in through public hyperparameters: log lines on
the ``skcl.estimators`` logger (``verbose``: one line per task, and with
``verbose > 1`` one per epoch) and the events of a ``callback`` (an
``"epoch"`` event after each epoch, a ``"task"`` event after each task).
Both read only the estimator's public attributes.
"""

import logging

from .._utils.logging import show_skcl_logs

__all__ = ["epoch_callback", "report_task"]

logger = logging.getLogger("skcl.estimators")


def epoch_callback(estimator, task):
    """The ``on_epoch`` of task ``task``'s training: the callback's epoch event.

    Returns a function ``on_epoch(epoch, loss)`` whose true return value
    (the callback's) stops the training there.
    """

    def on_epoch(epoch, loss):
        return estimator.callback(
            {"event": "epoch", "estimator": estimator, "task": task, "epoch": epoch,
             "loss": loss}
        )

    return on_epoch


def report_task(estimator):
    """The last task's log lines (``verbose``) and the ``callback``'s task event."""
    record = estimator.history_[-1]
    if estimator.verbose:
        _log_task(type(estimator).__name__, record, estimator.verbose)
    if estimator.callback is not None:
        estimator.callback({"event": "task", "estimator": estimator, **record})


def _log_task(name, record, verbose):
    show_skcl_logs()
    logger.info(
        "[%s] task %d: %d samples, final epoch loss %.4g, %.2f s training, "
        "%.2f s consolidating", name, record["task"], record["n_samples"],
        record["loss_curve"][-1], record["train_time"], record["consolidation_time"],
    )
    if verbose > 1:
        for epoch, loss in enumerate(record["loss_curve"], start=1):
            logger.info("[%s] task %d, epoch %d: loss %.6g", name, record["task"], epoch, loss)
