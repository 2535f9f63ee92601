"""Run the timing benchmarks: every class in ``benchmarks/timing/`` in the asv style.

A benchmark class (one per estimator or operation) may define ``params``
(a list of value lists, asv's convention) with ``param_names``, and a
smaller ``quick_params`` for ``--quick``; ``setup(*params)`` builds its
data untimed; each ``time_*(*params)`` method is timed by the harness's
timer (one warm-up, then the median of ``--repeats`` calls); each
``peakmem_*(*params)`` runs with its ``setup`` in a fresh process, whose
peak resident memory is reported. One command runs them all::

    PYTHONPATH=. python -m benchmarks [--quick] [--repeats 5] [-k pattern] [--csv out.csv]

The scripts' own tables (``python benchmarks/timing/bench_x.py``) stay
for the measurements a class does not fit (a grid of processes, a GPU).
"""

import importlib
import inspect
import itertools
import pkgutil

from benchmarks import _harness, timing


def benchmark_classes():
    """(module name, class) of every benchmark class under ``benchmarks.timing``."""
    found = []
    for info in sorted(pkgutil.iter_modules(timing.__path__), key=lambda i: i.name):
        module = importlib.import_module(f"benchmarks.timing.{info.name}")
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__ and _methods(cls):
                found.append((info.name, cls))
    return found


def _methods(cls):
    return [m for m in sorted(vars(cls)) if m.startswith(("time_", "peakmem_"))]


def _cases(cls, quick):
    params = getattr(cls, "quick_params", None) if quick else None
    params = params or getattr(cls, "params", None) or [[]]
    if params and not isinstance(params[0], (list, tuple)):
        params = [params]  # one parameter, asv's short form
    return list(itertools.product(*params))


def peakmem(module, class_name, method, params):
    """In a fresh process: ``setup`` then the method; the process's peak GiB."""
    cls = getattr(importlib.import_module(f"benchmarks.timing.{module}"), class_name)
    bench = cls()
    if hasattr(bench, "setup"):
        bench.setup(*params)
    getattr(bench, method)(*params)
    return _harness.peak_rss_gb()


def main(argv=None):
    parser = _harness.parser(__doc__, repeats=5, quick="each class's quick_params")
    parser.add_argument("-k", default="", help="only benchmarks whose name contains this")
    args = parser.parse_args(argv)
    print(_harness.machine_line())
    print(f"# time: {_harness.timeit.__doc__.splitlines()[0]}")
    table = _harness.Table({"benchmark": "<46", "params": "<22", "median s": ">10.4f",
                            "min s": ">9.4f", "max s": ">9.4f", "peak GiB": ">8.3f"},
                           csv_path=args.csv)
    for module, cls in benchmark_classes():
        for method in _methods(cls):
            name = f"{module}.{cls.__name__}.{method}"
            if args.k not in name:
                continue
            for params in _cases(cls, args.quick):
                label = ", ".join(map(str, params))
                if method.startswith("peakmem_"):
                    out = _harness.call_isolated("benchmarks.__main__:peakmem", module,
                                                 cls.__name__, method, list(params))
                    if out.ok:
                        table.row(name, label, None, None, None, out.value)
                    else:
                        table.failed(name, label, why=out.why)
                    continue
                bench = cls()
                if hasattr(bench, "setup"):
                    bench.setup(*params)
                timing = _harness.timeit(lambda: getattr(bench, method)(*params), args.repeats)
                table.row(name, label, timing.median, timing.min, timing.max)
    table.close()


if __name__ == "__main__":
    main()
