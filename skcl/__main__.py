"""The ``skcl`` command (also ``python -m skcl``).

``skcl reproduce <sequence>`` runs the paper's protocol on a task sequence
of its Table I (classical, or images with a pre-trained extractor) and
compares with the paper's numbers; see ``skcl reproduce --help``.

Only the standard library is imported until the arguments are parsed, so
``skcl --help`` answers at once. Every check that needs no training (the
arguments, the optional dependencies the run will need, a writable output
folder) runs before the first model trains; a user error is one line on
stderr and exit status 2. Progress goes through :mod:`logging` (logger
``skcl``), shown on stdout by a handler this command installs, with a
progress bar on a terminal when tqdm is installed (``pip install
'skcl[progress]'``).
"""

import argparse
import importlib.util
import logging
import os
import sys
import tempfile
import textwrap
import time
import zipfile
from pathlib import Path

# The registries import only the standard library: parsing stays light.
from .exceptions import CrashingBLASError
from .reproduce._console import EXAMPLES, fill, progress_shown, wrapped
from .reproduce._registry import METHODS
from .reproduce._sequences import GROUPS, PRETRAINING, SEQUENCES, pretraining_tasks

__all__ = ["main"]


# Sequences and pre-training tasks read from ISIC images, which need pillow.
_ISIC = {"ci-split-ham8", "di-split-ham6", "bcn-12"}


class UserError(Exception):
    """A mistake in the command line or the environment: one line, exit 2."""


def _version():
    import skcl

    return skcl.__version__


def _non_negative_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer, got {text!r}") from None
    if not 0 <= value < 2**32:
        raise argparse.ArgumentTypeError(
            f"must be an integer from 0 to 2**32 - 1 (a random seed), got {value}"
        )
    return value


def _n_jobs(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer, got {text!r}") from None
    if value == 0:
        raise argparse.ArgumentTypeError("must not be 0 (1: serial; -1: all cores)")
    return value


class _VersionAction(argparse.Action):
    """``--version``, reading skcl's version only when asked."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS,
                 help="print skcl's version and exit"):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"skcl {_version()}")
        parser.exit()


def _positive(what):
    """An argparse type: a positive integer, ``what`` naming it in the error."""
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"must be a positive integer ({what}), got {text!r}") from None
        if value < 1:
            raise argparse.ArgumentTypeError(
                f"must be a positive integer ({what}), got {value}")
        return value
    return parse


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Option help wrapped at spaces only: a method key such as
    ``rf-least-squares`` is never cut at its hyphens."""

    def _split_lines(self, text, width):
        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False)


def _parser():
    parser = argparse.ArgumentParser(
        prog="skcl",
        description="skcl: continual learning by sequential MAP inference.",
    )
    parser.add_argument("--version", action=_VersionAction)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    rep = commands.add_parser(
        "reproduce",
        formatter_class=_HelpFormatter,
        epilog=EXAMPLES.format(
            sequences=wrapped("sequences: ", sorted(SEQUENCES)),
            groups=wrapped("groups: ", sorted(GROUPS)),
        ),
        help="run the paper's experiments on a task sequence of its Table I",
        description=fill(
            "Tune each method of the paper's Table I on the validation task sequence "
            "with the grids of its appendix D, evaluate the selected model on the test "
            "sequence, print the table beside the paper's numbers and write CSV, JSON "
            "and text results with accuracy, forgetting, log loss and calibration error, "
            "a figure of each method's test accuracy on every task at the end when "
            "matplotlib is installed "
            "(and Figure 2 for CI Split 2D Iris, which needs it)."
        ),
    )
    rep.add_argument("--version", action=_VersionAction)
    rep.add_argument(
        "sequence",
        choices=sorted(SEQUENCES) + sorted(GROUPS),
        metavar="SEQUENCE",
        help="a task sequence or a group of them (listed below); "
             "'classical' is Table I(a) (Iris and Wine, SR and FCNN), "
             "'images' Table I(b), 'mnist' its CI and DI Split MNIST columns, "
             "'mnist-pixels' the exact family against RanDumb on Split MNIST's pixels",
    )
    rep.add_argument("--model", choices=["sr", "fcnn", "both"], default="both",
                     help="softmax regression, the paper's FCNN, or both (default)")
    rep.add_argument("--methods", nargs="+", metavar="METHOD",
                     help=f"subset of {[m.key for m in METHODS]} (default: every method "
                          "but rf-gaussian and online-ewc; on mnist-pixels the exact family, "
                          "RanDumb and scikit-learn's baselines; on the scenario columns, "
                          "their gradient methods and random-feature rows)")
    rep.add_argument("--output", default="results", metavar="DIR",
                     help="folder for the results, created if missing (default: ./results)")
    rep.add_argument("--n-jobs", type=_n_jobs, default=None, metavar="N",
                     help="grid candidates run in parallel (default: 1; -1: all cores)")
    rep.add_argument("--seed", type=_non_negative_int, default=0,
                     help="random_state of every estimator, from 0 to 2**32 - 1 (default: 0); "
                          "with --seeds, the first seed")
    rep.add_argument("--seeds", type=_positive("the number of seeds"), default=1, metavar="N",
                     help="run the whole protocol for N seeds, --seed to --seed + N - 1, one "
                          "after another in this process (the data and a pre-trained "
                          "extractor are shared; the extractor keeps the first seed); the "
                          "table shows each cell's mean ± sample standard deviation over the "
                          "seeds and how many reach the paper's number; the CSV and JSON keep "
                          "every seed, plus a <sequence>_summary.csv (default: 1)")
    rep.add_argument("--defaults", action="store_true",
                     help="run every method at its defaults with the column's training "
                          "settings and no grid search: no validation sequence of future "
                          "tasks (default: the paper's protocol, each grid chosen on it)")
    rep.add_argument("--figure", action="store_true",
                     help="also draw Figure 2 (runs CI Split 2D Iris if needed; needs "
                          "matplotlib: pip install 'skcl[plot]')")
    images = rep.add_argument_group(
        "image sequences",
        fill("An extractor is pre-trained on a similar task (appendix C's settings), frozen, and "
        "every method learns one dense layer on its features. Pre-trained weights are kept "
        "in the output folder and reused by later runs."),
    )
    images.add_argument("--pretrain", choices=sorted(PRETRAINING), metavar="TASK",
                        help=f"pre-training task, one of {', '.join(sorted(PRETRAINING))} "
                             "(default: the paper's; e.g. fashion-mnist stands in for "
                             "emnist-letters offline)")
    images.add_argument("--extractor-weights", metavar="FILE",
                        help="load the extractor from this .npz (written by "
                             "PretrainedFeatureExtractor.save_weights) instead of pre-training")
    images.add_argument("--data-dir", metavar="DIR",
                        help="image data folder (default: $SKCL_DATA_DIR, else ~/skcl_data)")
    images.add_argument("--download", action="store_true",
                        help="let torchvision download missing datasets (pip install "
                             "'skcl[download]')")
    shrink = rep.add_argument_group(
        "a shorter run",
        fill("Fewer rows, features or epochs, to try the command or a machine quickly; "
              "the numbers are then not the paper's protocol's (the options are recorded "
              "in the result files)."),
    )
    shrink.add_argument("--rows-per-task", type=_positive("rows per task"), metavar="N",
                        help="keep N rows of each task of the training, validation and "
                             "test sequences (a seeded draw; default: all)")
    shrink.add_argument("--n-components", "--features", type=_positive("random features"),
                        metavar="M", dest="n_components",
                        help="M random features for the methods that draw them (default: "
                             "each method's, 2,000 on mnist-pixels)")
    shrink.add_argument("--epochs", type=_positive("epochs"), metavar="N",
                        help="N training epochs per task for the gradient-trained methods "
                             "(default: the paper's, 100 or 20)")
    talk = rep.add_mutually_exclusive_group()
    talk.add_argument("--quiet", action="store_true", help="no progress lines")
    talk.add_argument("--verbose", action="store_true", help="one line per grid candidate")
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
        The exit status: 0 on success, 2 for a user error (one line on
        stderr). Malformed arguments exit with status 2 through argparse.
    """
    args = _parser().parse_args(argv)
    if args.command == "reproduce":
        try:
            return _reproduce(args)
        except UserError as exc:
            print(f"skcl reproduce: error: {exc}", file=sys.stderr)
            return 2
    return 2


def _has_module(name):
    """Whether ``name`` can be imported, without importing it."""
    if name in sys.modules:  # None there blocks the import
        return sys.modules[name] is not None
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _in_flag_terms(message):
    """A library message, with its Python arguments named by their flags."""
    for python, flag in [
        ("the root argument", "the --data-dir option"),
        ("pass root=...", "pass --data-dir DIR"),
        ("root=...", "--data-dir DIR"),
        ("(see the FileNotFoundError without download=True)",
         "(run without --download to see where)"),
        ("download=True", "--download"),
        ("extractor_weights", "--extractor-weights"),
        ("methods=", "--methods "),
    ]:
        message = message.replace(python, flag)
    return message


def _check_before_work(args, rp, columns):
    """Everything that can fail without training; raises UserError.

    Returns whether Figure 2 is drawn.
    """
    # The pre-training task of each image sequence, as rp.reproduce picks it.
    pretraining = pretraining_tasks(args.sequence, columns, args.pretrain)
    figure = args.figure or args.sequence == "ci-split-2d-iris"
    _check_extras(args, {seq for seq, _ in columns}, pretraining, figure)
    if args.extractor_weights is not None:
        _check_extractor_weights(args, pretraining)
    _check_output(Path(args.output))
    return figure


def _check_extras(args, sequences, pretraining, figure):
    """Every optional dependency the run needs is installed, or one UserError naming all."""
    missing = []
    if figure and not _has_module("matplotlib"):
        missing.append(("matplotlib", "plot", "Figure 2"))
    if args.download and not _has_module("torchvision"):
        missing.append(("torchvision", "download", "--download"))
    isic = sequences & _ISIC
    if args.extractor_weights is None:
        isic |= set(pretraining.values()) & _ISIC
    if isic and not _has_module("PIL"):
        missing.append(("pillow", "images", f"the ISIC images of {sorted(isic)[0]}"))
    if missing:
        names = " and ".join(name for name, _, _ in missing)
        extras = ",".join(extra for _, extra, _ in missing)
        needs = "; ".join(f"{what} needs {name}" for name, _, what in missing)
        raise UserError(f"{names} not installed ({needs}): pip install 'skcl[{extras}]'")


def _check_extractor_weights(args, pretraining):
    """``--extractor-weights`` fits the run: image sequences of one pre-training task, a .npz."""
    if not pretraining:
        raise UserError(
            f"--extractor-weights is for image sequences; {args.sequence} learns on raw "
            "features"
        )
    if len(set(pretraining.values())) > 1:
        raise UserError(
            f"--extractor-weights needs image sequences that share one pre-training "
            f"task; {args.sequence!r} uses {sorted(set(pretraining.values()))}: run "
            "them one by one, or pass --pretrain"
        )
    path = Path(args.extractor_weights)
    if not path.is_file():
        raise UserError(f"--extractor-weights {path}: no such file")
    if not zipfile.is_zipfile(path):
        raise UserError(
            f"--extractor-weights {path} is not a .npz weights file (written by "
            f"PretrainedFeatureExtractor.save_weights); "
            + ("a .npy file holds a single array" if path.suffix == ".npy" else
               "it is not a zip archive")
        )


def _check_output(output):
    """Create the output folder and prove it writable, before any work."""
    if output.exists() and not output.is_dir():
        raise UserError(f"--output {output} is a file, not a folder")
    try:
        output.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=output):
            pass
    except OSError as exc:
        raise UserError(f"--output {output} is not a writable folder ({exc.strerror or exc})")
    if not os.access(output, os.W_OK | os.X_OK):
        raise UserError(f"--output {output} is not a writable folder")


def _progress_bar(args, total, unit="method"):
    """A tqdm bar on a terminal's stderr, when tqdm is installed; else None."""
    if args.quiet or not _has_module("tqdm") or not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit=unit, file=sys.stderr, leave=False)


def _reproduce(args):
    """The ``reproduce`` command once its arguments are parsed: checks, then the run."""
    from . import reproduce as rp

    methods, columns = _check_arguments(args, rp)
    figure = _check_before_work(args, rp, columns)
    extra_columns = []
    if figure:
        extra_columns = [c for c in rp.columns_for("ci-split-2d-iris", args.model)
                         if c not in columns]
    n_runs = sum(len(rp.methods_for(seq, methods)) for seq, _ in [*columns, *extra_columns])
    bar = _progress_bar(args, n_runs * args.seeds, unit="method" if args.seeds == 1 else "run")
    with progress_shown(args, bar):
        return _run(args, rp, methods, figure, extra_columns)


def _check_arguments(args, rp):
    """The methods (None: each column's own) and the columns the arguments name.

    Raises UserError.
    """
    try:
        methods = rp.select_methods(args.methods) if args.methods else None
    except ValueError as exc:
        raise UserError(str(exc)) from None
    columns = rp.columns_for(args.sequence, args.model)
    if not columns:
        if {m for _, m in rp.columns_for(args.sequence)} == {"fcnn"}:
            raise UserError(f"{args.sequence} has no {args.model.upper()} column (it learns "
                            "an MLP on the pixels: --model fcnn)")
        raise UserError(f"{args.sequence} has no {args.model.upper()} column (image sequences "
                        "learn one dense layer on features: --model sr)")
    if args.pretrain is not None:
        options = {o for seq, _ in columns for o in rp.SEQUENCES[seq].pretraining}
        if args.pretrain not in options:
            raise UserError(
                f"No task sequence of {args.sequence!r} is pre-trained on {args.pretrain!r}; "
                f"they take {sorted(options)} (--pretrain)."
            )
    if args.seed + args.seeds - 1 >= 2**32:
        raise UserError(f"--seed {args.seed} --seeds {args.seeds} goes past the largest seed, "
                        "2**32 - 1")
    return methods, columns


def _run(args, rp, methods, figure, extra_columns):
    """Run the columns, write the results, print the table; the exit status."""
    from .reproduce._files import environment_line

    protocol = "defaults" if args.defaults else "tuned"
    start = time.perf_counter()
    _ = rp.reproduce  # imports the experiment's modules (scikit-learn, skcl): timed apart
    imported = time.perf_counter() - start

    def write_so_far(rows):  # each row as it finishes; the final files replace these
        rp.write_results(rows, Path(args.output), args.sequence,
                         meta={**_meta(args, protocol), "complete": False,
                               "wall_time_s": time.perf_counter() - start})

    rows, models = _run_columns(args, rp, methods, extra_columns, protocol, write_so_far)
    ran = time.perf_counter() - start
    paths = _write_outputs(args, rp, rows, protocol, ran)
    if figure:
        paths["png"] = _write_figure(models, args)
    elapsed = time.perf_counter() - start
    print(rp.format_table(rows))
    print(f"Environment: {environment_line(rp.environment())}.")
    runs = f" for {args.seeds} seeds" if args.seeds > 1 else ""
    in_rows = sum(row.get("time_s", 0.0) for row in rows)
    print(f"\nWall time {elapsed:.1f} s{runs}: {in_rows:.1f} s in the rows' methods, "
          f"{imported:.1f} s importing, {ran - imported - in_rows:.1f} s loading the data "
          f"(and pre-training, features), {elapsed - ran:.1f} s writing the results. "
          "Results: " + ", ".join(str(p) for p in paths.values()))
    return 0


def _shrinking(args):
    """``rows_per_task`` and the ``overrides`` of the options that shrink a run."""
    overrides = {"n_components": args.n_components, "n_epochs": args.epochs}
    return {"rows_per_task": args.rows_per_task,
            "overrides": {k: v for k, v in overrides.items() if v is not None} or None}


def _meta(args, protocol):
    """What the result files record of the command line."""
    shrunk = {k: v for k, v in [("rows_per_task", args.rows_per_task),
                                ("n_components", args.n_components),
                                ("n_epochs", args.epochs)] if v is not None}
    return {"command": "skcl reproduce " + args.sequence, "model": args.model,
            "seed": args.seed, **({"seeds": list(range(args.seed, args.seed + args.seeds))}
                                  if args.seeds > 1 else {}),
            "n_jobs": args.n_jobs, "protocol": protocol, **({"shrunk": shrunk} if shrunk else {})}


def _run_columns(args, rp, methods, extra_columns, protocol, on_row=None):
    """``rp.reproduce`` of the sequence, then the extra columns Figure 2 needs.

    Returns the rows and the models, as ``rp.reproduce``; a missing data
    file, torchvision or a bad weights file is a UserError in the
    command's terms.
    """
    # One seed: the call, the files and the table as before --seeds existed.
    seeds = {"n_seeds": args.seeds} if args.seeds > 1 else {}
    try:
        rows, models = rp.reproduce(
            args.sequence, args.model, methods, n_jobs=args.n_jobs, random_state=args.seed,
            **seeds, verbose=int(args.verbose), root=args.data_dir, download=args.download,
            pretraining=args.pretrain, extractor_weights=args.extractor_weights,
            cache_dir=args.output, protocol=protocol, on_row=on_row, **_shrinking(args),
        )
        for seq, mod in extra_columns:
            extra_rows, models[seq, mod] = rp.run_column(
                seq, mod, methods, n_jobs=args.n_jobs, random_state=args.seed, **seeds,
                verbose=int(args.verbose), protocol=protocol, **_shrinking(args),
            )
            rows += extra_rows
    except (FileNotFoundError, ImportError, ValueError, CrashingBLASError) as exc:
        # Missing data, torchvision, a bad weights file or a BLAS that
        # would crash (refused before any data loads): say what to do.
        raise UserError(_in_flag_terms(str(exc))) from None
    return rows, models


def _write_outputs(args, rp, rows, protocol, elapsed):
    """The CSV, JSON and text results, and the accuracy matrices' figure; their paths."""
    output = Path(args.output)
    paths = rp.write_results(
        rows, output, args.sequence,
        meta={**_meta(args, protocol), "complete": True, "wall_time_s": elapsed},
    )
    drawable = any(row.get("available") and "test_accuracy_matrix" in row for row in rows)
    if _has_module("matplotlib"):
        if drawable:  # else no method ran: nothing to draw
            paths["matrices"] = _write_accuracy_matrices(
                rows, output / f"{args.sequence}_accuracy_matrices.png")
    else:
        logging.getLogger("skcl.reproduce").info(
            "matplotlib is not installed: no accuracy-matrix figure (pip install 'skcl[plot]')")
    return paths


def _write_accuracy_matrices(rows, path):
    from .reproduce._files import write_accuracy_matrices

    return write_accuracy_matrices(rows, path)


def _write_figure(models, args):
    from .reproduce._files import write_figure2

    return write_figure2(models, args.model, args.output)


if __name__ == "__main__":
    sys.exit(main())
