"""How each curvature kind × structure of AQC does on CI Split Iris and Wine.

Table I(a)'s protocol (``skcl reproduce classical``) with AQC's curvature
and structure varied: λ chosen on the validation sequence from the
paper's grid, test final average accuracy (%) reported, for softmax
regression (SR: the GGN equals the Hessian there) and the paper's FCNN.

    PYTHONPATH=. python benchmarks/accuracy/bench_curvature_accuracy.py
"""

from benchmarks import _harness as harness
from skcl import reproduce as rp
from skcl.reproduce._sequences import column_label

COLUMNS = rp.columns_for("classical")
KINDS = ("hessian", "ggn", "empirical_fisher")
STRUCTURES = ("full", "kron", "diag")


def main():
    args = harness.parser(__doc__).parse_args()
    print(harness.machine_line())
    methods = [
        rp.Method(f"AQC {kind} {structure}", "AQCClassifier",
                  {"alpha": rp.LAMBDAS, "curvature": [kind], "structure": [structure]})
        for kind in KINDS for structure in STRUCTURES
    ]
    ewc = [m for m in rp.METHODS if m.name in ("EWC", "AQC")]
    rows = []
    clock = harness.Stopwatch()
    for sequence, model in COLUMNS:
        column_rows, _ = rp.run_column(sequence, model, ewc + methods)
        rows += column_rows
    labels = [column_label(s, m) for s, m in COLUMNS]
    table = harness.Table({"method": "<29", **{label: ">10" for label in labels}}, args.csv,
                          title=f"Test final average accuracy (%), λ chosen on validation; "
                                f"{clock.seconds:.0f} s in all")
    for name in dict.fromkeys(row["method"] for row in rows):
        cells = {row["column"]: row for row in rows if row["method"] == name}
        table.row(name, *(f"{cells[label]['test']:7.2f} λ{cells[label]['best_params']['alpha']:<3g}"
                          for label in labels))
    table.close()

if __name__ == "__main__":
    main()
