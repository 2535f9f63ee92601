"""How sure is it? Accuracy, log loss and ECE of the plug-in and the Laplace predictive.

On CI Split Iris and CI Split Wine (the paper's softmax regression and
training settings) and on the bundled 8×8 digits (1,797 images, pixels
/ 16, 64 features like the paper's MNIST features; ``load_ci_split_digits``
and ``load_di_split_digits``: the paper's stratified splits, five tasks
of two digits; softmax regression, 50 epochs, minibatches of
32, learning rate 0.01) as CI Split Digits (ten classes) and DI Split
Digits (even vs odd, one Bernoulli output), each row learns the training
sequence one task at a time and is scored on the whole test sequence
after the last task:

* AQC and EWC at the default λ = 1 and at λ tuned as the paper does
  (appendix D's grid, the best final average accuracy on the validation
  sequence, per seed, with the plug-in), each predicting four ways from
  the same fitted model: the plug-in softmax of f(x; θ*) ("map") and the
  linearised Laplace predictive over N(θ*, (λ H)⁻¹) by the probit
  approximation, the pairwise (mean-field) probit and Monte Carlo (1,000
  samples of the logits);
* the exact family at its defaults: the Gaussian classifier with a shared
  and with per-class covariances, least squares with each of its
  ``probabilities`` readings;
* scikit-learn's ``LogisticRegression`` fitted on all training tasks at
  once (standardised), the strongest simple baseline: not continual.

Columns: test final average accuracy (%, the mean of the tasks'
accuracies, as in the paper), log loss and ECE (%, 10 equal-width bins of
the top-label confidence) of the probabilities of every test sample
pooled; mean ± sample sd over seeds (the seed draws the paper methods'
initialisation and minibatches and the exact family's held-out rows).

Run::

    PYTHONPATH=. python benchmarks/accuracy/bench_calibration.py --seeds 5 --output calibration.json

and ``--rst calibration.json`` prints a saved run as the list-tables of
the user guide's "How sure is it?" page, without rerunning it.
``--evidence`` measures instead AQC and EWC (the same fits) with the
mean-field predictive and the prior precision δ chosen by the Laplace
evidence (``predictive_prior_precision="evidence"``), and prints each δ.
"""

import json
import warnings

import numpy as np
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import skcl
from benchmarks import _harness as harness
from skcl import AQCClassifier, EWCClassifier
from skcl import reproduce as rp
from skcl._gradient.consolidation.evidence import evidence_prior_precision
from skcl.datasets import load_ci_split_digits, load_di_split_digits
from skcl.metrics import expected_calibration_error, final_average_accuracy

PREDICTIVES = ("map", "probit", "mean_field", "mc")
LAMBDAS = (1, 10, 100, 1000, 10000)
COLUMNS = {"ci-split-iris": "CI Split Iris", "ci-split-wine": "CI Split Wine",
           "ci-split-digits": "CI Split Digits", "di-split-digits": "DI Split Digits"}
DIGITS_SETTINGS = dict(hidden_layer_sizes=(), n_epochs=50, batch_size=32, learning_rate=0.01)


def sequence(key):
    """(data, softmax-regression settings) of a column."""
    if key.endswith("digits"):
        load = load_di_split_digits if key.startswith("di") else load_ci_split_digits
        return load(), DIGITS_SETTINGS
    seq = rp.SEQUENCES[key]
    return seq.loader(), seq.settings("sr")


def exact_family(seed):
    """Every exact-family classifier of skcl that has predict_proba, at its defaults."""
    out = {}
    candidates = {
        "Gaussian classes, shared covariance (defaults)": dict(),
        "Gaussian classes, per-class covariance": dict(covariance="per_class"),
    }
    for name, params in candidates.items():
        out[name] = skcl.GaussianDiscriminantClassifier(random_state=seed, **params)
    for probabilities in ("scores", "discriminant", "ranked"):
        default = " (default)" if probabilities == "scores" else ""
        out[f'Least squares, probabilities="{probabilities}"{default}'] = (
            skcl.LeastSquaresClassifier(probabilities=probabilities, random_state=seed))
    return {name: est for name, est in out.items() if hasattr(est, "predict_proba")}


def learn(estimator, data):
    for X, y in data.train:
        estimator.partial_fit(X, y, classes=data.classes)
    return estimator


def scores(estimator, data):
    """Final average accuracy (%), pooled log loss and ECE (%) on the test sequence."""
    X = np.concatenate([X for X, _ in data.test])
    y = np.concatenate([y for _, y in data.test])
    P = estimator.predict_proba(X)
    return {
        "accuracy": 100 * final_average_accuracy(estimator, data.test),
        "log_loss": log_loss(y, P, labels=estimator.classes_),
        "ece": 100 * expected_calibration_error(y, P, labels=estimator.classes_),
    }


def quadratic_rows(cls, name, seed, settings, data, table, label, evidence=False):
    """One method's fits over λ's grid: default λ = 1 and λ tuned on validation.

    With ``evidence``, only the mean-field predictive with the prior
    precision by the Laplace evidence (``predictive_prior_precision``),
    and the δ it chose.
    """
    fitted, validation = {}, {}
    for alpha in LAMBDAS:
        est = learn(cls(alpha=alpha, random_state=seed, **settings), data)
        fitted[alpha] = est
        validation[alpha] = final_average_accuracy(est, data.validation)
    best = max(LAMBDAS, key=lambda a: (validation[a], -a))  # ties: the smaller λ
    for tag, alpha in (("λ = 1", 1), ("λ tuned", best)):
        est = fitted[alpha]
        if evidence:
            est.set_params(predictive="mean_field", predictive_prior_precision="evidence")
            delta = evidence_prior_precision(est.consolidation_, float(alpha),
                                             np.asarray(est.theta_), est.network_.layer_shapes)
            row = table.setdefault(f"{name}, {tag}, mean_field, evidence δ", {})
            cell = row.setdefault(label, {"accuracy": [], "log_loss": [], "ece": [],
                                          "alpha": [], "delta": []})
            for key, value in scores(est, data).items():
                cell[key].append(value)
            cell["alpha"].append(alpha)
            cell["delta"].append(delta)
            continue
        for predictive in PREDICTIVES:
            est.set_params(predictive=predictive)
            row = table.setdefault(f"{name}, {tag}, {predictive}", {})
            cell = row.setdefault(label, {"accuracy": [], "log_loss": [], "ece": [],
                                          "alpha": []})
            for key, value in scores(est, data).items():
                cell[key].append(value)
            cell["alpha"].append(alpha)


def fmt(values, digits):
    sd = np.std(values, ddof=1) if len(values) > 1 else 0.0
    return f"{np.mean(values):.{digits}f} ± {sd:.{digits}f}"


def rst_tables(saved):
    """The saved run as one RST list-table per column: accuracy, log loss, ECE."""
    out = []
    table = saved["table"]
    labels = list(next(iter(table.values())))
    for label in labels:
        out += [f".. list-table:: {label}", "   :header-rows: 1", "   :widths: 50 17 17 16", "",
                "   * - row", "     - accuracy (%)", "     - log loss", "     - ECE (%)"]
        for name, cells in table.items():
            c = cells[label]
            out += [f"   * - {name}", f"     - {fmt(c['accuracy'], 1)}",
                    f"     - {fmt(c['log_loss'], 3)}", f"     - {fmt(c['ece'], 1)}"]
        out.append("")
    return "\n".join(out)


def main():
    parser = harness.parser(__doc__)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--output", default=None, help="write the numbers as JSON")
    parser.add_argument("--columns", nargs="+", default=list(COLUMNS), choices=list(COLUMNS))
    parser.add_argument("--evidence", action="store_true",
                        help="only AQC and EWC, mean field with the prior precision by the "
                             "Laplace evidence, and the δ chosen")
    parser.add_argument("--rst", default=None, metavar="JSON",
                        help="print a saved run (--output's file) as RST tables and stop")
    args = parser.parse_args()
    if args.rst:
        with open(args.rst) as f:
            saved = json.load(f)
        print(saved["versions"], "\n")
        print(rst_tables(saved))
        return
    versions = harness.machine_line()
    print(versions)
    warnings.simplefilter("ignore")  # one-class tasks warn by design here
    table, clock = {}, harness.Stopwatch()
    columns = {key: COLUMNS[key] for key in args.columns}
    for key, label in columns.items():
        data, settings = sequence(key)
        for seed in range(args.seeds):
            quadratic_rows(AQCClassifier, "AQC", seed, settings, data, table, label,
                           args.evidence)
            quadratic_rows(EWCClassifier, "EWC", seed, settings, data, table, label,
                           args.evidence)
            if args.evidence:
                print(f"{label} seed {seed} done ({clock.seconds:.0f} s)", flush=True)
                continue
            baselines = {**exact_family(seed)}
            for name, est in baselines.items():
                cell = table.setdefault(name, {}).setdefault(
                    label, {"accuracy": [], "log_loss": [], "ece": []})
                for k, v in scores(learn(clone(est), data), data).items():
                    cell[k].append(v)
            joint = make_pipeline(StandardScaler(), LogisticRegression(max_iter=5000))
            X = np.concatenate([X for X, _ in data.train])
            y = np.concatenate([y for _, y in data.train])
            joint.fit(X, y)
            cell = table.setdefault("LogisticRegression, all tasks at once (not continual)",
                                    {}).setdefault(label, {"accuracy": [], "log_loss": [],
                                                           "ece": []})
            for k, v in scores(joint, data).items():
                cell[k].append(v)
            print(f"{label} seed {seed} done ({clock.seconds:.0f} s)", flush=True)

    print(f"\nAccuracy (%), log loss, ECE (%): mean ± sd over seeds 0–{args.seeds - 1}; "
          f"{clock.seconds:.0f} s.")
    out = harness.Table({"row": "", "accuracy (%)": "", "log loss": "", "ECE (%)": ""},
                        args.csv, markdown=True, header=False)
    for label in columns.values():
        out.section(f"\n{label}:\n")
        for name, cells in table.items():
            c = cells[label]
            out.row(name, fmt(c['accuracy'], 1), fmt(c['log_loss'], 3), fmt(c['ece'], 1))
    out.close()
    print()

    if args.evidence:
        for name, cells in table.items():
            print(name, {label: np.round(c["delta"], 4).tolist() for label, c in cells.items()})
        tuned = None
    else:
        tuned = {label: {m: table[f"{m}, λ tuned, map"][label]["alpha"]
                         for m in ("AQC", "EWC")} for label in columns.values()}
        print(f"\nTuned λ per seed: {tuned}")
    if args.output:
        with open(args.output, "w") as f:
            json.dump({"versions": versions, "table": table, "tuned_alpha": tuned}, f, indent=1)


if __name__ == "__main__":
    main()
