"""How each curvature kind × structure of AQC does on CI Split Iris and Wine.

Table I(a)'s protocol (``skcl reproduce classical``) with AQC's curvature
and structure varied: λ chosen on the validation sequence from the
paper's grid, test final average accuracy (%) reported, for softmax
regression (SR: the GGN equals the Hessian there) and the paper's FCNN.

    PYTHONPATH=. python benchmarks/accuracy/bench_curvature_accuracy.py
"""

import time

from skcl import reproduce as rp

COLUMNS = rp.columns_for("classical")
KINDS = ("hessian", "ggn", "empirical_fisher")
STRUCTURES = ("full", "kron", "diag")


def main():
    methods = [
        rp.Method(f"AQC {kind} {structure}", "AQCClassifier",
                  {"alpha": rp.LAMBDAS, "curvature": [kind], "structure": [structure]})
        for kind in KINDS for structure in STRUCTURES
    ]
    ewc = [m for m in rp.METHODS if m.name in ("EWC", "AQC")]
    rows = []
    start = time.perf_counter()
    for sequence, model in COLUMNS:
        column_rows, _ = rp.run_column(sequence, model, ewc + methods)
        rows += column_rows
    print(f"Test final average accuracy (%), λ chosen on validation; "
          f"{time.perf_counter() - start:.0f} s in all")
    labels = [rp.column_label(s, m) for s, m in COLUMNS]
    print(f"{'method':<30}" + "".join(f"{label:>11}" for label in labels))
    for name in dict.fromkeys(row["method"] for row in rows):
        cells = {row["column"]: row for row in rows if row["method"] == name}
        print(f"{name:<30}" + "".join(
            f"{cells[label]['test']:7.2f} λ{cells[label]['best_params']['alpha']:<3g}"
            for label in labels))


if __name__ == "__main__":
    main()
