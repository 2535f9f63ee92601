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

import tracemalloc

import numpy as np

from benchmarks import _harness as harness

CASES = ["CI Split MNIST", "Permuted x10", "Permuted x10, 32x32", "Rotated x10",
         "Permuted x10 materialised"]


def load(case):
    """In the child: load one case; MiB kept and at the peak (tracemalloc), max RSS."""
    from skcl.datasets import load_ci_split_mnist, load_permuted_mnist, load_rotated_mnist

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
    del data
    return {"kept": kept / 2**20, "peak": peak / 2**20, "rss": harness.peak_rss_gb() * 1024}


def main():
    args = harness.parser(__doc__).parse_args()
    print(harness.machine_line())
    table = harness.Table({"loader": "<27", "kept (MiB)": ">11.0f", "peak (MiB)": ">11.0f",
                           "max RSS (MiB)": ">14.0f"}, args.csv)
    for case in CASES:
        out = harness.call_isolated("benchmarks.timing.bench_permuted_memory:load", case)
        if out.ok:
            table.row(case, out.value["kept"], out.value["peak"], out.value["rss"])
        else:
            table.failed(case, why=out.why)
    table.close()


if __name__ == "__main__":
    main()
