"""Cold compilation per estimator: which jitted programs each method compiles
on `skcl reproduce ci-split-iris`, how many times, and for how long.

Runs the command's protocol (grid on the validation sequence, the chosen
candidate on the test sequence, :func:`skcl.reproduce.run_column`) one
method at a time, with JAX's persistent compilation cache off and its
in-memory caches cleared before each method, so every method pays its
own first run. JAX's monitoring events give each compilation's tracing,
lowering and XLA times under the jitted function's name; its compile log
gives the argument shapes, so a program compiled twice with the same
shapes (a new function object or a static argument each time: waste) is
counted apart ("same-shape repeats").

    python benchmarks/timing/bench_compile.py [--sequence ci-split-iris] [--model sr fcnn]
                                       [--methods joint aqc ...] [--top 3]

The wall times are of this machine at this moment (load them beside the
output); the counts are not, and are what to compare across commits.
"""

import logging
import os
import re
from collections import Counter, defaultdict

# Before skcl's training code turns the persistent cache on: every method
# must compile from scratch here.
os.environ["SKCL_COMPILATION_CACHE"] = "0"

import jax
from jax import monitoring

from benchmarks import _harness as harness
from skcl.reproduce import METHODS, run_column

_EVENTS = {
    "/jax/core/compile/jaxpr_trace_duration": "trace",
    "/jax/core/compile/jaxpr_to_mlir_module_duration": "lower",
    "/jax/core/compile/backend_compile_duration": "xla",
}


class _Recorder(logging.Handler):
    """Collects each compilation's seconds (monitoring) and shapes (log)."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.seconds = defaultdict(float)  # (stage, name) → seconds
        self.compiles = Counter()          # name → XLA compilations
        self.signatures = Counter()        # (name, shapes) → XLA compilations

    def duration(self, event, seconds, **kwargs):
        stage = _EVENTS.get(event)
        if stage is None:
            return
        name = re.sub(r"^jit\((.*)\)$", r"\1", str(kwargs.get("fun_name", "?")))
        self.seconds[stage, name] += seconds
        if stage == "xla":
            self.compiles[name] += 1

    def emit(self, record):
        match = re.match(r"Compiling (?:jit\()?(\w+)\)? with global shapes and types (.*)\. "
                         r"Argument mapping", record.getMessage())
        if match:
            self.signatures[match.group(1), match.group(2)] += 1

    def reset(self):
        self.seconds.clear()
        self.compiles.clear()
        self.signatures.clear()


def main():
    parser = harness.parser(__doc__)
    parser.add_argument("--sequence", default="ci-split-iris")
    parser.add_argument("--model", nargs="+", default=["sr", "fcnn"])
    parser.add_argument("--methods", nargs="+", default=None,
                        help="registry names, e.g. 'AQC' or 'aqc' (default: all)")
    parser.add_argument("--top", type=int, default=3, help="programs listed per method")
    args = parser.parse_args()

    wanted = None if args.methods is None else {m.lower() for m in args.methods}
    methods = [m for m in METHODS
               if wanted is None or m.name.lower() in wanted or m.name.lower().replace(" ", "-")
               in wanted]
    recorder = _Recorder()
    monitoring.register_event_duration_secs_listener(recorder.duration)
    # The "Compiling ... with global shapes" line is DEBUG unless log_compiles.
    pxla = logging.getLogger("jax._src.interpreters.pxla")
    pxla.addHandler(recorder)
    pxla.setLevel(logging.DEBUG)

    print(harness.machine_line(extra=f"{args.sequence}, JAX on {jax.default_backend()}, "
                                     "persistent cache off, caches cleared per method"))
    table = harness.Table({"model": "<5", "method": "<21", "wall s": ">7.1f", "compiles": ">8",
                           "compile s": ">9.2f", "xla s": ">6.2f", "repeats": ">7",
                           "costliest programs (name ×compiles seconds)": ""}, args.csv)
    totals = Counter()
    for model in args.model:
        for method in methods:
            jax.clear_caches()
            recorder.reset()
            with harness.Stopwatch() as watch:  # one cold run: what is measured
                run_column(args.sequence, model, [method], log=lambda line: None)
            wall = watch.seconds
            per_name = defaultdict(float)
            for (_, name), seconds in recorder.seconds.items():
                per_name[name] += seconds
            compile_s = sum(per_name.values())
            xla_s = sum(s for (stage, _), s in recorder.seconds.items() if stage == "xla")
            repeats = sum(n - 1 for n in recorder.signatures.values() if n > 1)
            top = sorted(per_name.items(), key=lambda item: -item[1])[:args.top]
            programs = ", ".join(f"{name} ×{recorder.compiles[name]} {s:.2f}"
                                 for name, s in top)
            n = sum(recorder.compiles.values())
            table.row(model, method.name, wall, n, compile_s, xla_s, repeats, programs)
            totals.update(wall=wall, compiles=n, compile_s=compile_s, xla_s=xla_s,
                          repeats=repeats)
    table.row("all", "", totals["wall"], totals["compiles"], totals["compile_s"],
              totals["xla_s"], totals["repeats"])
    table.close()
    print("compile s: tracing + lowering + XLA; repeats: compilations of a program with "
          "shapes it was already compiled for in this method's run.")


if __name__ == "__main__":
    main()
