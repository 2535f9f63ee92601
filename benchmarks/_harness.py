"""The benchmarks' one harness: arguments, timer, machine line, isolated runner, table.

Every script under ``benchmarks/`` takes these from here and defines none
of its own:

* :func:`parser`: the argument set. ``--data-dir`` (default
  ``$SKCL_DATA_DIR``), ``--repeats``, ``--quick`` and ``--csv``, each
  added where the script uses it; a script registers its own options on
  the parser it gets back.
* :func:`timeit`, the timer, with one meaning: **one warm-up call (timed
  apart, ``first``), then the median of ``repeats`` timed calls** (wall
  clock, ``time.perf_counter``), min and max kept beside it.
  :class:`Stopwatch` times one block once: what cannot be repeated (a
  phase of a 1,000-second run, a fresh process, a cold compilation).
* :func:`machine_line`: the machine and the versions, one ``#`` line.
* :func:`call_isolated` / :func:`run_isolated`: a function (or a
  command) in a fresh Python process. A child that fails, times out or is
  killed by a signal (a segmentation fault in OpenBLAS, the OOM killer's
  SIGKILL) comes back as an :class:`Outcome` whose ``why`` says so; the
  caller prints it as a row and goes on.
* :class:`Table`: rows printed as they come (aligned text, or Markdown
  for a docs page), and the same rows written to CSV at the end
  (``--csv``); :func:`read_csv` reads them back.
* :func:`run_benchmarks`: benchmark classes in asv's form (``setup``,
  ``time_*``, ``peakmem_*``), timed and printed as one table
  (``python -m benchmarks``).
"""

import argparse
import csv
import importlib
import importlib.metadata
import inspect
import itertools
import json
import os
import platform
import re
import resource
import signal
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

#: The repository's root: a child process imports ``benchmarks`` from here.
ROOT = Path(__file__).resolve().parent.parent
#: An option's action for ``--x`` / ``--no-x``.
ON_OFF = argparse.BooleanOptionalAction
_VERSIONS = ("numpy", "scipy", "scikit-learn", "jax", "torch")
_RESULT = "@@benchmark-result@@ "


# ----------------------------------------------------------------------- arguments

def parser(doc, *, data=False, repeats=None, quick=None, csv=True):
    """The argument parser of a benchmark script, with the shared options.

    Parameters
    ----------
    doc : str
        The script's docstring; its first line is the description.
    data : bool
        Add ``--data-dir`` (the MNIST files; default ``$SKCL_DATA_DIR``).
    repeats : int or None
        Add ``--repeats`` with this default (the timed calls of
        :func:`timeit`).
    quick : str or None
        Add ``--quick``; the text says what it makes smaller.
    csv : bool
        Add ``--csv PATH`` (the table written as CSV too).

    Returns
    -------
    argparse.ArgumentParser
        The script adds its own options to it and calls ``parse_args``.
    """
    out = argparse.ArgumentParser(description=(doc or "").strip().splitlines()[0] if doc else None)
    if data:
        out.add_argument("--data-dir", default=os.environ.get("SKCL_DATA_DIR"),
                         help="MNIST's files (torchvision layout); default $SKCL_DATA_DIR")
    if repeats is not None:
        out.add_argument("--repeats", type=int, default=repeats,
                         help=f"timed calls after one warm-up, median reported (default {repeats})")
    if quick is not None:
        out.add_argument("--quick", action="store_true", help=quick)
    if csv:
        out.add_argument("--csv", metavar="PATH", help="also write the table to this CSV file")
    return out


# -------------------------------------------------------------------------- timer

@dataclass
class Timing:
    """Seconds of a call: the median of the timed runs, their min and max, and the first.

    ``first`` is the warm-up call's time (compilation and caches included),
    kept apart from ``runs``; None without a warm-up.
    """

    runs: list
    first: float = None

    @property
    def median(self):
        return statistics.median(self.runs)

    @property
    def min(self):
        return min(self.runs)

    @property
    def max(self):
        return max(self.runs)

    @property
    def meaning(self):
        first = ("after one warm-up" if self.first is not None
                 else "with no warm-up (first call included)")
        return f"median of {len(self.runs)} run(s) {first}, wall clock"


def timeit(fn, repeats=5, *, warmup=True):
    """Time ``fn()``: one warm-up call, then the median of ``repeats`` calls.

    Returns a :class:`Timing` (``median``, ``min``, ``max``, ``runs``, and
    ``first``: the warm-up's time, reported apart where compilation is the
    question).
    """
    first = None
    if warmup:
        with Stopwatch() as watch:
            fn()
        first = watch.seconds
    runs = []
    for _ in range(max(int(repeats), 1)):
        with Stopwatch() as watch:
            fn()
        runs.append(watch.seconds)
    return Timing(runs, first)


class Stopwatch:
    """The wall time of one block, once: ``with Stopwatch() as w: ...; w.seconds``.

    It starts when made (or when its block is entered); ``w.seconds`` reads
    the time so far until the block ends, then the block's. ``w.cpu_seconds``
    is this process's CPU time over the same span (all its threads): on a
    loaded machine, the work done, whatever the wait.
    """

    def __init__(self):
        self._start, self._stop = time.perf_counter(), None
        self._cpu_start, self._cpu_stop = time.process_time(), None

    def __enter__(self):
        self.__init__()
        return self

    def __exit__(self, *exc):
        self._stop, self._cpu_stop = time.perf_counter(), time.process_time()

    @property
    def seconds(self):
        return (self._stop or time.perf_counter()) - self._start

    @property
    def cpu_seconds(self):
        return (self._cpu_stop or time.process_time()) - self._cpu_start


def peak_rss_gb():
    """This process's peak resident memory so far, in GiB (Linux's ru_maxrss)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


# ------------------------------------------------------------------ machine line

def _version(name):
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def _processor():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def jax_device():
    """JAX's default device, e.g. ``'cpu'`` or ``'NVIDIA H100 80GB HBM3'``."""
    import jax

    return jax.devices()[0].device_kind


def machine_line(device=False, extra=""):
    """One ``#`` line: the date, CPUs, load, Python and the libraries' versions.

    The versions are read from the installed packages' metadata, so that no
    library is imported here. ``device=True`` asks a child process for
    JAX's device (JAX in this process would take a GPU's memory).
    """
    versions = ", ".join(f"{name} {v}" for name in _VERSIONS if (v := _version(name)))
    line = (f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {os.cpu_count()} CPUs "
            f"({_processor()}), load average {os.getloadavg()[0]:.1f}; "
            f"Python {platform.python_version()}, {versions}")
    if device:
        found = call_isolated("benchmarks._harness:jax_device")
        line += f"; JAX device {found.value if found.ok else found.why}"
    return line + (f"; {extra}" if extra else "")


# ------------------------------------------------------------------ isolated runs

@dataclass
class Outcome:
    """What a child process gave: its value, or why it has none."""

    returncode: int
    seconds: float
    stdout: str = ""
    stderr: str = ""
    value: object = None
    why: str = field(default=None)

    @property
    def ok(self):
        return self.why is None


def _why(returncode, stderr):
    if returncode < 0:
        name = signal.Signals(-returncode).name
        hint = " (the OOM killer?)" if name == "SIGKILL" else ""
        return f"killed by {name}{hint}"
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    return lines[-1] if lines else f"exit status {returncode}"


def run_isolated(command, *, timeout=None, env=None):
    """Run ``command`` (a list) in a fresh process; never raises for the child's end.

    Returns an :class:`Outcome`: ``why`` is None for exit status 0, else
    ``'killed by SIGSEGV'``, ``'timed out after 120 s'`` or the last line of
    its standard error.
    """
    child_env = dict(os.environ if env is None else env)
    child_env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(ROOT), child_env.get("PYTHONPATH")) if p)
    with Stopwatch() as watch:
        try:
            out = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                                 env=child_env)
        except subprocess.TimeoutExpired as expired:
            text = expired.stdout.decode() if isinstance(expired.stdout, bytes) else ""
            return Outcome(-1, watch.seconds, text, "", why=f"timed out after {timeout:g} s")
    why = _why(out.returncode, out.stderr) if out.returncode else None
    return Outcome(out.returncode, watch.seconds, out.stdout, out.stderr, why=why)


_CHILD = f"""
import importlib, json, sys
module, name = sys.argv[1].split(":")
args, kwargs = json.loads(sys.argv[2])
value = getattr(importlib.import_module(module), name)(*args, **kwargs)
print({_RESULT!r} + json.dumps(value), flush=True)
"""


def call_isolated(target, *args, timeout=None, env=None, **kwargs):
    """Call ``module:function`` with JSON arguments in a fresh process.

    The function's return value must be JSON; it comes back as
    ``Outcome.value``. Its peak memory is the child's own, untouched by
    what this process holds. A child killed by a signal, one that raises
    or one past ``timeout`` seconds gives an :class:`Outcome` with ``why``.
    """
    out = run_isolated([sys.executable, "-c", _CHILD, target, json.dumps([args, kwargs])],
                       timeout=timeout, env=env)
    if out.ok:
        lines = [line for line in out.stdout.splitlines() if line.startswith(_RESULT)]
        if lines:
            out.value = json.loads(lines[-1][len(_RESULT):])
        else:
            out.why = "no result printed"
    return out


# -------------------------------------------------------------------------- table

def _cell(value, spec):
    """``value`` in format ``spec`` (e.g. ``'>8.2f'``); text or None keep the width."""
    if value is None or (isinstance(value, float) and value != value):
        value = "–"
    try:
        return format(value, spec)
    except (TypeError, ValueError):
        align, width = re.match(r"([<>^]?)(\d*)", spec).groups()
        return format(str(value), f"{align or '>'}{width}")


class Table:
    """Rows printed as they come, aligned, and kept for a CSV at the end.

    Parameters
    ----------
    columns : dict
        Column name → format spec of its cells (``'<18'``, ``'>8.2f'``, ...);
        the spec's width is the column's.
    csv_path : str or None
        Where :meth:`close` writes the rows as CSV (the script's ``--csv``).
    title : str
        A line printed before the header (the first :meth:`section`'s).
    markdown : bool
        Print a Markdown table (``| a | b |``), as the docs' pages hold.
    header : bool
        Print the header now; ``False`` waits for the first :meth:`section`.
    """

    def __init__(self, columns, csv_path=None, title=None, out=None, markdown=False,
                 header=True):
        self.columns = dict(columns)
        self.csv_path = csv_path
        self.markdown = markdown
        self.rows = []
        self._out = out or sys.stdout
        self._section = None
        if title is not None:
            self.section(title)
        elif header:
            self._header()

    def section(self, title):
        """Start a part of the table: its title, the header again; its rows name it."""
        if self.rows or self._section is not None:
            print(file=self._out)
        print(title, file=self._out)
        self._section = title
        self._header()

    def _header(self):
        self._print([_cell(name, spec) for name, spec in self.columns.items()])
        if self.markdown:
            print("|" + "---|" * len(self.columns), file=self._out, flush=True)

    def _print(self, cells):
        if self.markdown:
            line = "| " + " | ".join(c.strip() for c in cells) + " |"
        else:
            line = " ".join(cells).rstrip()
        print(line, file=self._out, flush=True)

    def row(self, *values, note=None):
        """Print one row (the columns' values in order) and keep it."""
        if len(values) > len(self.columns):
            raise ValueError(f"{len(values)} values for {len(self.columns)} columns")
        cells = [_cell(v, spec) for v, spec in zip(values, self.columns.values())]
        record = {"section": self._section} if self._section is not None else {}
        record.update(zip(self.columns, values))
        if note:
            cells.append(note)
            record["note"] = note
        self.rows.append(record)
        self._print(cells)

    def failed(self, *key_values, why):
        """A row for a run with no figures: its first columns, then ``failed: why``."""
        self.row(*key_values, note=f"failed: {why}")

    def close(self):
        """Write the rows to ``csv_path`` (if any); returns the path."""
        if self.csv_path:
            first = ["section"] if any("section" in row for row in self.rows) else []
            write_csv(self.csv_path, self.rows, first + list(self.columns) + ["note"])
        return self.csv_path


def write_csv(path, rows, columns):
    """Rows (dicts) to CSV; a float keeps every digit (``repr``), None is empty."""
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: "" if v is None else repr(v) if isinstance(v, float) else v
                             for k, v in row.items()})


def read_csv(path):
    """The rows of :func:`write_csv`: numbers back as int or float, empty as None."""
    def parse(text):
        if text == "":
            return None
        for kind in (int, float):
            try:
                return kind(text)
            except ValueError:
                pass
        return text
    with open(path, newline="") as f:
        return [{k: parse(v) for k, v in row.items()} for row in csv.DictReader(f)]


# ------------------------------------------------------- benchmark classes (asv style)

def benchmark_methods(cls):
    """A benchmark class's ``time_*`` and ``peakmem_*`` methods, by name."""
    return [m for m in sorted(vars(cls)) if m.startswith(("time_", "peakmem_"))]


def _cases(cls, quick):
    params = (getattr(cls, "quick_params", None) if quick else None) or getattr(
        cls, "params", None) or [[]]
    if params and not isinstance(params[0], (list, tuple)):
        params = [params]  # one parameter, asv's short form
    return list(itertools.product(*params))


def peakmem(module, class_name, method, params):
    """In a fresh process: ``setup`` then the method; this process's peak GiB."""
    bench = getattr(importlib.import_module(module), class_name)()
    if hasattr(bench, "setup"):
        bench.setup(*params)
    getattr(bench, method)(*params)
    return peak_rss_gb()


def run_benchmarks(classes, args):
    """Run benchmark classes (asv's conventions) and print one table.

    Each class may define ``params`` (lists of values, JSON types) with
    ``param_names`` and a smaller ``quick_params`` (``--quick``);
    ``setup(*params)`` runs untimed; each ``time_*(*params)`` is timed by
    :func:`timeit` (``first``: the warm-up, then the median of
    ``--repeats``); each ``peakmem_*(*params)`` runs after its ``setup`` in
    a fresh process, whose peak resident memory is reported. ``args.k``
    keeps the benchmarks whose name holds it.
    """
    print(machine_line())
    print("# first: the warm-up call (compilation included); median, min, max: "
          f"of {args.repeats} calls after it, wall clock")
    table = Table({"benchmark": "<48", "params": "<22", "first s": ">9.4f", "median s": ">10.4f",
                   "min s": ">9.4f", "max s": ">9.4f", "peak GiB": ">8.3f"}, args.csv)
    for cls in classes:
        short = cls.__module__.rsplit(".", 1)[-1]
        for method in benchmark_methods(cls):
            name = f"{short}.{cls.__name__}.{method}"
            if getattr(args, "k", "") not in name:
                continue
            for params in _cases(cls, args.quick):
                label = ", ".join(map(str, params))
                if method.startswith("peakmem_"):
                    out = call_isolated("benchmarks._harness:peakmem", cls.__module__,
                                        cls.__name__, method, list(params))
                    if out.ok:
                        table.row(name, label, None, None, None, None, out.value)
                    else:
                        table.failed(name, label, why=out.why)
                    continue
                bench = cls()
                if hasattr(bench, "setup"):
                    bench.setup(*params)
                timing = timeit(lambda: getattr(bench, method)(*params), args.repeats)
                table.row(name, label, timing.first, timing.median, timing.min, timing.max)
    return table.close()


def benchmark_classes(module):
    """The benchmark classes a module defines (those with ``time_*``/``peakmem_*``)."""
    return [cls for _, cls in inspect.getmembers(module, inspect.isclass)
            if cls.__module__ == module.__name__ and benchmark_methods(cls)]


def class_parser(doc, repeats=5):
    """The arguments of a run of benchmark classes: the shared ones and ``-k``."""
    out = parser(doc, repeats=repeats, quick="each class's quick_params")
    out.add_argument("-k", default="", help="only benchmarks whose name contains this")
    return out


def main_of(module_name, argv=None):
    """A timing script's ``main``: its own classes through :func:`run_benchmarks`."""
    module = sys.modules[module_name]
    if module_name == "__main__":  # run as a file: import it by its name
        module = importlib.import_module(
            "benchmarks.timing." + Path(module.__file__).stem)
    args = class_parser(module.__doc__).parse_args(argv)
    run_benchmarks(benchmark_classes(module), args)
