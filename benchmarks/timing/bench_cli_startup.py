"""Wall time of ``python -m skcl --help`` and ``--version``: the command's startup.

The command imports only the standard library until its arguments are
parsed (the estimators, and so JAX, scikit-learn and matplotlib, are
imported on first use), so help answers in a fraction of a second;
``python -c pass`` is the interpreter's own start beside it. Run from the
repository root, so that ``python -m skcl`` is this checkout's::

    PYTHONPATH=. python benchmarks/timing/bench_cli_startup.py [--repeats N]
"""

import sys

from benchmarks import _harness as harness


class CommandStartup:
    """One run of the command in a new interpreter, to its exit."""

    params = ["python -c pass", "skcl --help", "skcl reproduce --help", "skcl --version"]
    param_names = ["command"]

    def setup(self, command):
        words = command.split()
        self.argv = ([sys.executable, "-c", "pass"] if words[0] == "python"
                     else [sys.executable, "-m", "skcl", *words[1:]])

    def time_command(self, command):
        out = harness.run_isolated(self.argv)
        if not out.ok:
            raise RuntimeError(f"{command}: {out.why}")


if __name__ == "__main__":
    harness.main_of(__name__)
