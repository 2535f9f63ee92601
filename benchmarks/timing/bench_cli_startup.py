"""Wall time of ``python -m skcl --help`` and ``--version``: the command's startup.

The command imports only the standard library until its arguments are
parsed (the estimators, and so JAX, scikit-learn and matplotlib, are
imported on first use), so help answers in a fraction of a second. Run
from the repository root, so that ``python -m skcl`` is this checkout's:

    python benchmarks/timing/bench_cli_startup.py [--repeats N]
"""

import argparse
import statistics
import subprocess
import sys
import time


def wall_times(args, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "skcl", *args], check=True,
                       stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return times


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    repeats = parser.parse_args().repeats
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    python = time.perf_counter() - start
    print(f"{'command':<32} {'median s':>9} {'max s':>7}")
    print(f"{'python -c pass':<32} {python:9.3f} {python:7.3f}")
    for args in (["--help"], ["reproduce", "--help"], ["--version"]):
        times = wall_times(args, repeats)
        label = "python -m skcl " + " ".join(args)
        print(f"{label:<32} {statistics.median(times):9.3f} {max(times):7.3f}")


if __name__ == "__main__":
    main()
