"""Run every timing benchmark class in ``benchmarks/timing/``, asv style, in one table.

A benchmark class (one per estimator or operation) defines ``setup`` and
``time_*`` / ``peakmem_*`` methods, with ``params`` and ``quick_params``;
``benchmarks._harness.run_benchmarks`` says what each column means::

    PYTHONPATH=. python -m benchmarks [--quick] [--repeats 5] [-k pattern] [--csv out.csv]

A script's own classes alone: ``PYTHONPATH=. python benchmarks/timing/bench_core.py``.
"""

import importlib
import re
from pathlib import Path

from benchmarks import _harness, timing


def main(argv=None):
    args = _harness.class_parser(__doc__).parse_args(argv)
    classes = []
    for path in sorted(Path(timing.__path__[0]).glob("bench_*.py")):
        # Only the modules that define benchmark methods are imported: a
        # script may set its process up on import (bench_compile turns the
        # compilation cache off).
        if re.search(r"def (time|peakmem)_", path.read_text()):
            module = importlib.import_module(f"benchmarks.timing.{path.stem}")
            classes += _harness.benchmark_classes(module)
    _harness.run_benchmarks(classes, args)


if __name__ == "__main__":
    main()
