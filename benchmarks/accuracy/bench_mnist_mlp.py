"""Beyond the paper's limit: an MLP on Split MNIST's pixels, with wall time.

The paper's AQC stops at softmax regression on 64 extracted features (650
parameters), where a full Hessian is cheap. Here a multilayer perceptron
(784 pixels → 100 hidden units → 10 or 2 classes: 79,510 or 78,702
parameters) learns CI and DI Split MNIST from scratch, without extractor.
A full Hessian would be 79,510² floats (25 GB), so AQC's curvature is the
generalised Gauss-Newton matrix, Kronecker-factored per layer (K-FAC), as
``skcl reproduce mnist-mlp`` runs it. Each method's λ (and SI's ξ) is
chosen on the validation sequence from the paper's grids (appendix D);
the table gives test final average accuracy and each method's search time.

    SKCL_DATA_DIR=../shared/data PYTHONPATH=. python benchmarks/accuracy/bench_mnist_mlp.py \\
        [--epochs 20] [--methods joint fine-tuning ewc si aqc] [--output DIR]

``--epochs`` shortens training (default: the paper's 20); the columns'
other settings are the paper's Split MNIST ones (minibatches of 64,
learning rate 0.01).
"""

import dataclasses
import json
from pathlib import Path

from benchmarks import _harness as harness
from skcl import reproduce as rp

METHODS = ["joint", "fine-tuning", "ewc", "si", "aqc"]


def main():
    parser = harness.parser(__doc__)
    parser.add_argument("--epochs", type=int, default=20, help="epochs per task (paper: 20)")
    parser.add_argument("--methods", nargs="+", default=METHODS)
    parser.add_argument("--sequences", nargs="+",
                        default=["di-split-mnist-mlp", "ci-split-mnist-mlp"])
    parser.add_argument("--output", default="mnist_mlp_results")
    args = parser.parse_args()
    print(harness.machine_line())
    methods = rp.select_methods(args.methods)
    all_rows = []
    for key in args.sequences:
        # The column as registered, with the number of epochs overridden.
        rp.SEQUENCES[key] = dataclasses.replace(rp.SEQUENCES[key], n_epochs=args.epochs)
        with harness.Stopwatch() as watch:
            rows, _ = rp.run_column(key, "fcnn", methods,
                                    log=lambda line: print(line, flush=True))
        elapsed = watch.seconds
        print(f"[{key}] {elapsed:.0f} s in all ({args.epochs} epochs per task)", flush=True)
        all_rows += rows
        rp.write_results(all_rows, args.output, "mnist-mlp",
                         meta={"epochs": args.epochs, "wall_time_s": elapsed})
    print()
    print(rp.format_table(all_rows))
    print()
    table = harness.Table({"column": "<14", "method": "<12", "test %": ">7.2f",
                           "forgetting": ">10.2f", "best": "<32", "candidates": ">10",
                           "search s": ">9.0f"}, args.csv)
    for row in all_rows:
        table.row(row["column"], row["method"], row["test"], row["test_forgetting"],
                  json.dumps(row["best_params"]), row["n_candidates"], row["search_time_s"])
    table.close()
    Path(args.output).mkdir(exist_ok=True)


if __name__ == "__main__":
    main()
