"""The ``skcl`` command (also ``python -m skcl``).

``skcl reproduce <sequence>`` runs the paper's protocol on the classical
task sequences and compares with the paper's Table I(a); see
``skcl reproduce --help``.
"""

import argparse
import sys
import time

from . import reproduce as rp

__all__ = ["main"]

_FIGURE_ROWS = {"sr": "Softmax regression", "fcnn": "Fully connected neural network"}


def _parser():
    parser = argparse.ArgumentParser(
        prog="skcl",
        description="skcl: continual learning by sequential MAP inference.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    rep = commands.add_parser(
        "reproduce",
        help="run the paper's experiments on a classical task sequence",
        description=(
            "Tune each method of the paper's Table I on the validation task sequence "
            "with the grids of its appendix D, evaluate the selected model on the test "
            "sequence, print the table beside the paper's numbers and write CSV, JSON "
            "and text results (and Figure 2 for CI Split 2D Iris)."
        ),
    )
    rep.add_argument(
        "sequence",
        choices=sorted(rp.SEQUENCES) + sorted(rp.GROUPS),
        help="task sequence; 'classical' is Table I(a): Iris and Wine, SR and FCNN",
    )
    rep.add_argument("--model", choices=["sr", "fcnn", "both"], default="both",
                     help="softmax regression, the paper's FCNN, or both (default)")
    rep.add_argument("--methods", nargs="+", metavar="METHOD",
                     help=f"subset of {[m.key for m in rp.METHODS]} (default: all)")
    rep.add_argument("--output", default="results", metavar="DIR",
                     help="folder for the results (default: ./results)")
    rep.add_argument("--n-jobs", type=int, default=None, metavar="N",
                     help="grid candidates run in parallel (default: 1; -1: all cores)")
    rep.add_argument("--seed", type=int, default=0, help="random_state of every estimator")
    rep.add_argument("--figure", action="store_true",
                     help="also draw Figure 2 (runs CI Split 2D Iris if needed)")
    rep.add_argument("--quiet", action="store_true", help="no progress lines")
    rep.add_argument("--verbose", action="store_true", help="one line per grid candidate")
    return parser


def main(argv=None):
    """Entry point of the ``skcl`` console script.

    Parameters
    ----------
    argv : list of str, default=None
        Arguments without the program name; None reads ``sys.argv``.

    Returns
    -------
    int
        The exit status, 0 on success.
    """
    args = _parser().parse_args(argv)
    if args.command == "reproduce":
        return _reproduce(args)
    return 2


def _reproduce(args):
    try:
        methods = rp.select_methods(args.methods)
    except ValueError as exc:
        print(f"skcl reproduce: error: {exc}", file=sys.stderr)
        return 2
    log = None if args.quiet else (lambda line: print(line, flush=True))
    start = time.perf_counter()
    rows, models = rp.reproduce(
        args.sequence, args.model, methods, n_jobs=args.n_jobs, random_state=args.seed,
        log=log, verbose=int(args.verbose),
    )
    figure = args.figure or args.sequence == "ci-split-2d-iris"
    if figure:
        needed = [c for c in rp.columns_for("ci-split-2d-iris", args.model) if c not in models]
        for seq, mod in needed:
            extra_rows, models[seq, mod] = rp.run_column(
                seq, mod, methods, n_jobs=args.n_jobs, random_state=args.seed, log=log
            )
            rows += extra_rows
    elapsed = time.perf_counter() - start
    paths = rp.write_results(
        rows, args.output, args.sequence,
        meta={"command": "skcl reproduce " + args.sequence, "model": args.model,
              "seed": args.seed, "n_jobs": args.n_jobs, "wall_time_s": elapsed},
    )
    if figure:
        paths["png"] = _write_figure(models, args)
    print(rp.format_table(rows))
    print(f"\nWall time {elapsed:.1f} s. Results: " + ", ".join(str(p) for p in paths.values()))
    return 0


def _write_figure(models, args):
    from .plotting import plot_figure2

    data = rp.SEQUENCES["ci-split-2d-iris"].loader()
    X = [X for X, _ in data.train]
    y = [y for _, y in data.train]
    import numpy as np

    rows = {
        _FIGURE_ROWS[mod]: models[seq, mod]
        for seq, mod in rp.columns_for("ci-split-2d-iris", args.model)
        if models.get((seq, mod))
    }
    fig = plot_figure2(rows, np.concatenate(X), np.concatenate(y),
                       feature_names=data.feature_names)
    path = rp.Path(args.output) / "figure2_ci-split-2d-iris.png"
    fig.savefig(path)
    return path


if __name__ == "__main__":
    sys.exit(main())
