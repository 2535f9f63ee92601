"""The ``skcl`` command (also ``python -m skcl``).

``skcl reproduce <sequence>`` runs the paper's protocol on a task sequence
of its Table I (classical, or images with a pre-trained extractor) and
compares with the paper's numbers; see ``skcl reproduce --help``.
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
        help="run the paper's experiments on a task sequence of its Table I",
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
        help="task sequence; 'classical' is Table I(a) (Iris and Wine, SR and FCNN), "
             "'images' Table I(b), 'mnist' its CI and DI Split MNIST columns",
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
    images = rep.add_argument_group(
        "image sequences",
        "An extractor is pre-trained on a similar task (appendix C's settings), frozen, and "
        "every method learns one dense layer on its features. Pre-trained weights are kept "
        "in the output folder and reused by later runs.",
    )
    images.add_argument("--pretrain", choices=sorted(rp.PRETRAINING), metavar="TASK",
                        help="pre-training task (default: the paper's; e.g. fashion-mnist "
                             "stands in for emnist-letters offline)")
    images.add_argument("--extractor-weights", metavar="FILE",
                        help="load the extractor from this .npz instead of pre-training")
    images.add_argument("--data-dir", metavar="DIR",
                        help="image data folder (default: $SKCL_DATA_DIR, else ~/skcl_data)")
    images.add_argument("--download", action="store_true",
                        help="let torchvision download missing datasets (pip install "
                             "'skcl[download]')")
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
    if not rp.columns_for(args.sequence, args.model):
        print(f"skcl reproduce: error: {args.sequence} has no {args.model.upper()} column "
              "(image sequences learn one dense layer on features: --model sr)", file=sys.stderr)
        return 2
    log = None if args.quiet else (lambda line: print(line, flush=True))
    start = time.perf_counter()
    try:
        rows, models = rp.reproduce(
            args.sequence, args.model, methods, n_jobs=args.n_jobs, random_state=args.seed,
            log=log, verbose=int(args.verbose), root=args.data_dir, download=args.download,
            pretraining=args.pretrain, extractor_weights=args.extractor_weights,
            cache_dir=args.output,
        )
    except (FileNotFoundError, ImportError, ValueError) as exc:
        # Missing data, torchvision or a bad weights file: say what to do.
        print(f"skcl reproduce: error: {exc}", file=sys.stderr)
        return 2
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
