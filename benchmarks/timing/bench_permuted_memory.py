"""Memory of loading Permuted and Rotated MNIST: views against materialised copies.

Each row runs in a fresh process and reports, for its loader call, the
Python allocations that remain after it (``kept``) and their peak during
it (``peak``), both from ``tracemalloc``, and the process's peak resident
memory (``ru_maxrss``, which includes the interpreter and numpy). The
rows:

* ``CI Split MNIST``: ``load_ci_split_mnist()``, the reference (one copy
  of the 70,000 images, cut into tasks);
* ``Permuted x10`` / ``Permuted x10, 32x32``: ``load_permuted_mnist(10)``
  (with ``pad=True``): ten tasks as views of one copy;
* ``Rotated x10``: ``load_rotated_mnist()`` at its ten default angles;
* ``Permuted x10 materialised``: the same ten tasks with every split's
  view turned into an array (``np.asarray``), what a loader without views
  would hold.

Run::

    SKCL_DATA_DIR=../shared/data PYTHONPATH=. python benchmarks/timing/bench_permuted_memory.py
"""

import json
import platform
import subprocess
import sys

_CHILD = r"""
import json, resource, sys, tracemalloc
import numpy as np
from skcl.datasets import load_ci_split_mnist, load_permuted_mnist, load_rotated_mnist
case = sys.argv[1]
tracemalloc.start()
if case == "CI Split MNIST":
    data = load_ci_split_mnist()
elif case == "Permuted x10":
    data = load_permuted_mnist(10)
elif case == "Permuted x10, 32x32":
    data = load_permuted_mnist(10, pad=True)
elif case == "Rotated x10":
    data = load_rotated_mnist()
else:
    data = load_permuted_mnist(10)
    data = {key: [(np.asarray(X), y) for X, y in data[key]]
            for key in ("train", "validation", "test")}
kept, peak = tracemalloc.get_traced_memory()
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"kept": kept / 2**20, "peak": peak / 2**20, "rss": rss}))
"""

CASES = ["CI Split MNIST", "Permuted x10", "Permuted x10, 32x32", "Rotated x10",
         "Permuted x10 materialised"]


def main():
    print(f"Python {platform.python_version()}, numpy {__import__('numpy').__version__}, "
          f"{platform.machine()}")
    print(f"{'loader':<28}{'kept (MiB)':>12}{'peak (MiB)':>12}{'max RSS (MiB)':>15}")
    for case in CASES:
        out = subprocess.run([sys.executable, "-c", _CHILD, case], capture_output=True,
                             text=True, check=True).stdout
        row = json.loads(out.strip().splitlines()[-1])
        print(f"{case:<28}{row['kept']:>12.0f}{row['peak']:>12.0f}{row['rss']:>15.0f}")


if __name__ == "__main__":
    main()
