"""What a gradient-trained estimator tells its user while it learns.

Two channels, both opt-in through public hyperparameters: log lines on
the ``skcl.estimators`` logger (``verbose``: one line per task, and with
``verbose > 1`` one per epoch as it ends) and the events of a ``callback``
(an ``"epoch"`` event after each epoch, a ``"task"`` event after each
task). Both read only the estimator's public attributes. A program that
follows the logger at DEBUG (``skcl reproduce``, whose heartbeat says
where a long method is) also gets each epoch of a long task, as a DEBUG
record.
"""

import logging
import time

from .._utils.logging import show_skcl_logs

__all__ = ["EPOCH_PROGRESS_MIN_BATCHES", "epoch_callback", "epoch_progress", "report_task"]

logger = logging.getLogger("skcl.estimators")

#: Progress after each epoch costs one dispatch of the compiled epoch
#: (about a millisecond on 2 cores): a DEBUG listener gets it for tasks
#: whose epochs hold at least this many minibatch steps, where the
#: dispatch is a small part of an epoch; smaller tasks, which train in
#: seconds, are reported at their end. ``verbose > 1`` always gets it.
EPOCH_PROGRESS_MIN_BATCHES = 32


def epoch_callback(estimator, task, progress=None):
    """The ``on_epoch`` of task ``task``'s training: the callback's epoch event.

    Returns a function ``on_epoch(epoch, loss)`` whose true return value
    (the callback's) stops the training there; ``progress`` (an
    :func:`epoch_progress`, or None) is called first.
    """

    def on_epoch(epoch, loss):
        if progress is not None:
            progress(epoch, loss)
        return estimator.callback(
            {"event": "epoch", "estimator": estimator, "task": task, "epoch": epoch,
             "loss": loss}
        )

    return on_epoch


def epoch_progress(estimator, task, n_samples, n_batches):
    """The ``on_epoch`` that reports task ``task``'s epochs as they end, or None.

    Each epoch's line gives the epoch and the epoch count, the loss per
    example and summed (the epoch's minibatch terms: the weighted negative
    log-likelihood summed over the task's ``n_samples`` examples, plus the
    stand-in for the previous loss), the seconds an epoch takes and an
    estimate of what is left of the task. At INFO when ``verbose > 1``,
    else at DEBUG when the logger is followed there and an epoch holds
    ``n_batches >= EPOCH_PROGRESS_MIN_BATCHES`` minibatches; None when no
    one would see it. The record's ``skcl_epoch`` is ``(epoch, n_epochs,
    seconds an epoch)``.
    """
    live = estimator.verbose > 1
    if not live and not (logger.isEnabledFor(logging.DEBUG)
                         and n_batches >= EPOCH_PROGRESS_MIN_BATCHES):
        return None
    if live:
        show_skcl_logs()
    name, n_epochs = type(estimator).__name__, int(estimator.n_epochs)
    started = [time.perf_counter(), None]  # the task's start, the first epoch's end

    def on_epoch(epoch, loss):
        now = time.perf_counter()
        if epoch == 1:  # the first epoch also compiles: the rate counts the others
            started[1] = now
            each = now - started[0]
        else:
            each = (now - started[1]) / (epoch - 1)
        logger.log(
            logging.INFO if live else logging.DEBUG,
            "[%s] task %d, epoch %d/%d: loss %.4g per example (%.6g summed over %d examples, "
            "the penalty included), %.2f s an epoch, about %.0f s left", name, task, epoch,
            n_epochs, loss / n_samples, loss, n_samples, each, each * (n_epochs - epoch),
            extra={"skcl_epoch": (epoch, n_epochs, each)},
        )

    return on_epoch


def report_task(estimator):
    """The last task's log lines (``verbose``) and the ``callback``'s task event."""
    record = estimator.history_[-1]
    if estimator.verbose:
        _log_task(type(estimator).__name__, record)
    if estimator.callback is not None:
        estimator.callback({"event": "task", "estimator": estimator, **record})


def _log_task(name, record):
    show_skcl_logs()
    n, loss = record["n_samples"], record["loss_curve"][-1]
    logger.info(
        "[%s] task %d: %d samples, final epoch loss %.4g per example (%.6g summed, the "
        "penalty included), %.2f s training, %.2f s consolidating", name, record["task"], n,
        loss / n, loss, record["train_time"], record["consolidation_time"],
    )
