"""What ``skcl reproduce`` shows: its help's examples and its progress lines.

Standard library only, like the command line's parsing: ``skcl --help``
answers at once. Progress goes through :mod:`logging` (logger ``skcl``):
:func:`progress_shown` prints its INFO records and follows its DEBUG ones
(a method's start, each grid candidate, each task learned, each epoch of
a long task), so that a long method prints where it is, with a rate and
an estimate, when nothing else was printed for 20 s (so that a line
comes at least every 30 s).
"""

import contextlib
import logging
import sys
import textwrap
import threading
import time

__all__ = ["EXAMPLES", "fill", "progress_shown", "wrapped"]

#: One example per group of sequences, and what it takes on 2 CPU cores
#: (AMD EPYC; docs/experiments.md has the measurements).
EXAMPLES = """examples, one per group of sequences (times on 2 CPU cores):
  skcl reproduce ci-split-iris
      Table I(a)'s Iris columns, bundled data: about 80 s
      ('classical', Iris and Wine, SR and FCNN: about 4 min)
  skcl reproduce ci-split-mnist --data-dir DIR
      'images', 'mnist', 'fashion-mnist': a CNN pre-trained for 20 epochs
      (about 12 min, kept in --output for later runs), then every method
      on its features (NC alone about 17 min): about 35 min per column
  skcl reproduce ci-split-mnist-mlp --data-dir DIR --epochs 2
      'mnist-mlp', an MLP on the pixels, shrunk (its time is not measured)
  skcl reproduce mnist-pixels --data-dir DIR \\
      --rows-per-task 1000 --n-components 500
      'mnist-pixels', shrunk: 30 s on 2 quiet cores (572 s with them
      shared by a load of 22; the full run: over 16 min)

a full run prints a line at least every 30 s; --rows-per-task,
--n-components and --epochs shrink a run (the full run is the default).

{sequences}
{groups}
"""


def wrapped(title, names):
    """``title`` and ``names`` joined by commas, wrapped at 79 columns, indented under them."""
    return textwrap.fill(", ".join(names), width=79, initial_indent=title,
                         subsequent_indent=" " * len(title), break_on_hyphens=False,
                         break_long_words=False)


def fill(text):
    """A paragraph wrapped as argparse wraps (the epilog's formatter keeps text as is)."""
    return textwrap.fill(text, width=79)


class _Progress(logging.Handler):
    """Progress lines on a stream, above a tqdm bar that counts finished methods
    (one per seed; a method this build lacks counts all its seeds at once).

    Records below ``shown`` are not printed but followed: a method's start,
    each finished grid candidate and each learned task. When nothing was
    printed for ``every`` seconds, :meth:`heartbeat` prints where the method
    is, with a rate and an estimate of what is left, down to the epoch of
    a task that trains in many minibatches.
    """

    # 20 s, not the promised 30: the heartbeat's thread needs the interpreter,
    # which a long LAPACK call through scipy's wrappers keeps (the exact
    # family's dsytrd on 784 pixels: under 1 s idle, 5-7 s at load average
    # 22 on 2 cores, where lines came 34 s apart at 30 s and 32 s at 25 s).
    def __init__(self, stream, bar=None, shown=logging.INFO, every=20.0):
        super().__init__()
        self.stream, self.bar, self.shown, self.every = stream, bar, shown, every
        self.last_line = self.started = time.monotonic()
        self.activity, self.candidate, self.task, self.epoch = None, None, None, None

    def emit(self, record):
        try:
            self._follow(record)
            if record.levelno < self.shown:
                return
            self._write(self.format(record))
            if self.bar is not None and getattr(record, "skcl_method_done", False):
                self.bar.update(getattr(record, "skcl_runs", 1))
        except Exception:  # pragma: no cover - logging's own convention
            self.handleError(record)

    def _write(self, message):
        self.last_line = time.monotonic()
        if self.bar is not None:
            self.bar.write(message, file=self.stream)
        else:
            self.stream.write(message + "\n")
            self.stream.flush()

    def _follow(self, record):
        now = time.monotonic()
        if hasattr(record, "skcl_method_start"):
            self.activity, self.started = record.skcl_method_start, now
            self.candidate = self.task = self.epoch = None
        elif hasattr(record, "skcl_candidate"):
            self.candidate, self.task, self.epoch = (*record.skcl_candidate, now), None, None
        elif hasattr(record, "skcl_task"):
            self.task, self.epoch = (*record.skcl_task, now), None
        elif hasattr(record, "skcl_epoch"):
            self.epoch = record.skcl_epoch

    def heartbeat(self):
        """One line on where the running method is, when nothing was printed for a while."""
        now = time.monotonic()
        if self.activity is None or now - max(self.last_line, self.started) < self.every:
            return
        parts = [f"{self.activity}: running for {now - self.started:.0f} s"]
        if self.candidate is not None:
            done, total, at = self.candidate
            each = (at - self.started) / done
            parts.append(f"grid candidate {done}/{total} done ({each:.1f} s each, about "
                         f"{each * (total - done):.0f} s left)")
        if self.task is not None:
            done, total, at = self.task
            since = self.started if self.candidate is None else self.candidate[2]
            each = (at - since) / done
            searched = self.candidate is not None and self.candidate[0] == self.candidate[1]
            what = "the chosen setting learned again for the test: " if searched else ""
            parts.append(f"{what}task {done}/{total} learned ({each:.1f} s a task, about "
                         f"{each * (total - done):.0f} s left)")
        if self.epoch is not None:
            done, total, each = self.epoch
            parts.append(f"the next task at epoch {done}/{total} ({each:.1f} s an epoch, about "
                         f"{each * (total - done):.0f} s left in it)")
        self._write("  ... " + "; ".join(parts))


def _beat(handler, stop):
    """Ask ``handler`` for a heartbeat every second until ``stop`` is set."""
    while not stop.wait(1.0):
        handler.acquire()
        try:
            handler.heartbeat()
        finally:
            handler.release()


@contextlib.contextmanager
def progress_shown(args, bar):
    """The ``skcl`` logger's records on stdout (above ``bar``) while the block runs.

    The logger's level and propagation are restored, and the bar closed,
    however the block ends.
    """
    logger = logging.getLogger("skcl")
    handler = _Progress(sys.stdout, bar, shown=logging.WARNING if args.quiet else logging.INFO)
    handler.setFormatter(logging.Formatter("%(message)s"))
    old_level, old_propagate = logger.level, logger.propagate
    logger.addHandler(handler)
    # DEBUG: the handler follows a method's candidates and tasks (and prints INFO).
    logger.setLevel(logging.WARNING if args.quiet else logging.DEBUG)
    logger.propagate = False
    stop = threading.Event()
    beat = threading.Thread(target=_beat, args=(handler, stop), daemon=True)
    if not args.quiet:
        beat.start()
    try:
        yield
    finally:
        stop.set()
        if beat.is_alive():
            beat.join()
        logger.removeHandler(handler)
        logger.setLevel(old_level)
        logger.propagate = old_propagate
        if bar is not None:
            bar.close()
