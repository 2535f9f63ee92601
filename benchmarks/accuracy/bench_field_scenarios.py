"""The field's scenarios, side by side: Avalanche's strategies and skcl's methods.

Split MNIST (task-, domain- and class-incremental) and Permuted MNIST
(domain-incremental), on the same rows, network, optimiser and budget, one
seed, each method in a fresh process (a child killed by a signal is a row
of the table, not a crash of it):

* Avalanche (``avalanche-lib``, ``pip install skcl[avalanche]``): Naive
  (fine-tuning), EWC, online EWC, SI (as shipped, and with its kept
  weights copied, see ``patch_si_weights``), LwF and StreamingLDA (deep
  SLDA, on the pixels: its per-sample covariance update makes random
  features too slow). The rows reach Avalanche as tensors, through its
  tensor-list benchmark generator (``tensors_benchmark``), one experience
  per task, task label 0 (domain- and class-IL: one head); the network is a
  torch ``Sequential`` MLP; the accuracy is computed here, from the model's
  argmax (StreamingLDA: its ``predict``), with the same code as skcl's.
  Task-IL (``split-task``): each experience carries its task label and the
  MLP is a ``MultiTaskModule`` whose outputs outside the task's two digits
  are masked (set to -10⁹) in training, in EWC's and SI's importances and at
  test: the field's task-IL, equal to five two-unit heads on a shared trunk.
  skcl's gradient methods train with ``scenario="task"`` (the same mask)
  and every skcl row is scored among the task's digits.
* skcl: FineTuningClassifier, EWCClassifier, EWC with the empirical Fisher
  (AQCClassifier, diagonal, averaged: the Fisher Avalanche estimates),
  OnlineEWCClassifier, SIClassifier on the same MLP (fine-tuning and SI also
  at a constant learning rate, as Avalanche's); and the exact family,
  pixels / 255 → ``RandomFeatures()`` (M = 2,000) →
  GaussianDiscriminantClassifier or LeastSquaresClassifier at their
  defaults (plus the Gaussian on the pixels, StreamingLDA's peer), learned
  task by task with ``partial_fit``.

The data: Split MNIST from ``skcl.datasets.load_ci_split_mnist`` (its
training and validation rows together: the official 60,000 training and
10,000 test images), domain-IL labelled by the digit's position in its
pair (``digit % 2``); Permuted MNIST from
``skcl.datasets.load_permuted_mnist`` (every task permuted, the first too;
padded to 32×32 as in the field's code unless ``--permuted-size 28``).
``--rows-per-task`` keeps a task's first rows (the loaders shuffle them).

The budget (the field's: van de Ven et al.'s "Three scenarios" code) is
the default: Split MNIST 2,000 iterations × 128 per task, Adam 1e-3,
784-400-400; Permuted MNIST 10 tasks, 5,000 × 128, Adam 1e-4,
1024-1000-1000. Both libraries run epochs, so ``n_epochs`` =
round(iterations × batch / mean rows per task) for both; the table names
the iterations that gives. skcl's training loop runs Adam under a cosine
one-cycle schedule peaking at the learning rate (it has no constant-rate
option); Avalanche's runs it constant, as the field's code does.

The regularisation strengths are the field's (its ``param_values.py`` per
experiment and scenario: EWC λ, online EWC λ and γ, SI c), each converted
to the library's convention so that the per-sample objective is the
field's, mean NLL + λ/2 Σ F_k Δθ_k² (EWC, F the per-sample Fisher) and
mean NLL + c Σ Ω_k Δθ_k² (SI):

* skcl minimises, per minibatch, the batch's summed NLL + (λ_skcl/2)
  Σ (p + C_k) Δθ_k² / n_batches (``skcl._gradient.training``), C the mean
  Fisher (EWC) or ω/(Δ² + ξ) with ω from the summed NLL's gradient (SI):
  λ_skcl = N λ (EWC, online EWC) and λ_skcl = 2 N c / B (SI), N the rows
  of a task, B the batch. The prior precision p is multiplied by λ_skcl
  after the first task, which at these λ would pin every weight, so it is
  set to 1e-12 (the field's networks have none).
* Avalanche's EWC multiplies λ_A Σ I_k Δθ_k² (no ½) with I the mean over
  minibatches of the squared gradient of the *batch-mean* loss, at the
  labels, ≈ F / B: λ_A = λ B / 2. Its SI adds λ_A/2 Σ Ω_k Δθ_k² with Ω
  clipped at 0.001: λ_A = 2 c. LwF: α = 1, temperature 2.

Run, at the reduced budget of docs/experiments.md (one epoch per task,
one thread per process on a loaded 2-core machine; the defaults, the
field's budget, take hours)::

    SKCL_DATA_DIR=/work/shared/data PYTHONPATH=. nice -n 10 \\
        /work/venv-avalanche/bin/python benchmarks/accuracy/bench_field_scenarios.py \\
        --threads 1 --iterations 100 --scenarios split-domain split-class
    ... --scenarios permuted-domain --iterations 100 --hidden 400 \\
        --permuted-tasks 5 --permuted-size 28 --permuted-lr 1e-3 --rows-per-task 10000
    # a check that it runs (a minute): 500 rows a task, one epoch, three methods
    ... --scenarios split-task split-domain --iterations 4 --rows-per-task 500 \\
        --hidden 20 --methods "avalanche ewc" "skcl ewc" "skcl gaussian (pixels)"

``--csv PATH`` writes every row (method × scenario, with its budget) to PATH;
``--repeats N`` runs the methods N times, round-robin, each row in a fresh
process, and gives the median fit time with the range (one seed: the
accuracy is the same in every run, checked).

EWCClassifier and OnlineEWCClassifier compute the exact diagonal Fisher
(the GGN's) by default, through the outputs that compete: one reverse pass
per output and row (ten in domain-IL); the "sampled fisher" rows draw one
label per row from the model's predictive instead (``fisher="sampled"``):
one reverse pass per row.
"""

import json
import os
import tempfile

import numpy as np

from benchmarks import _harness as harness

FIELD = {  # the field's budget and network per experiment
    "split": dict(iterations=2000, batch=128, lr=1e-3, hidden=400, n_tasks=5),
    "permuted": dict(iterations=5000, batch=128, lr=1e-4, hidden=1000, n_tasks=10),
}
# The field's param_values.py: (EWC λ, online EWC λ, γ, SI c) per scenario.
STRENGTH = {
    # Split task-IL: recalled from the field's param_values.py (not obtainable here).
    "split-task": dict(ewc=1e7, online=1e8, gamma=0.8, si=50.0),
    "split-domain": dict(ewc=1e6, online=1e8, gamma=0.7, si=500.0),
    "split-class": dict(ewc=1e8, online=1e9, gamma=0.8, si=0.5),
    "permuted-domain": dict(ewc=500.0, online=1000.0, gamma=0.9, si=5.0),
}
SCENARIOS = list(STRENGTH)
# van de Ven and Tolias (2018/19), 20 seeds, the field's full budget.
PUBLISHED = {
    "fine-tuning": {"split-task": 85.15, "split-domain": 57.33, "split-class": 19.90,
                    "permuted-domain": 78.51},
    "ewc": {"split-task": 85.48, "split-domain": 57.80, "split-class": 19.90,
            "permuted-domain": 94.31},
    "online-ewc": {"split-task": 85.22, "split-domain": 57.60, "split-class": 19.90,
                   "permuted-domain": 94.42},
    "si": {"split-task": 99.14, "split-domain": 63.77, "split-class": 20.04,
           "permuted-domain": 95.33},
    "offline": {"split-task": 99.64, "split-domain": 98.41, "split-class": 97.93,
                "permuted-domain": 97.59},
}
METHODS = {  # name: (library, published row)
    "avalanche naive": ("avalanche", "fine-tuning"),
    "avalanche ewc": ("avalanche", "ewc"),
    "avalanche online-ewc": ("avalanche", "online-ewc"),
    "avalanche si": ("avalanche", "si"),
    "avalanche si (weights copied)": ("avalanche", "si"),
    "avalanche si (weights copied, no clip)": ("avalanche", "si"),
    "avalanche lwf": ("avalanche", None),
    "avalanche slda (pixels)": ("avalanche", None),
    "skcl fine-tuning": ("skcl", "fine-tuning"),
    "skcl ewc": ("skcl", "ewc"),
    "skcl ewc, empirical fisher": ("skcl", "ewc"),
    "skcl online-ewc": ("skcl", "online-ewc"),
    "skcl si": ("skcl", "si"),
    "skcl fine-tuning, constant rate": ("skcl", "fine-tuning"),
    "skcl si, constant rate": ("skcl", "si"),
    "skcl ewc, constant rate": ("skcl", "ewc"),
    "skcl online-ewc, constant rate": ("skcl", "online-ewc"),
    "skcl ewc, sampled fisher, constant rate": ("skcl", "ewc"),
    "skcl online-ewc, sampled fisher, constant rate": ("skcl", "online-ewc"),
    "skcl gaussian (pixels)": ("skcl", None),
    "skcl gaussian (random features)": ("skcl", "offline"),
    "skcl least squares (random features)": ("skcl", "offline"),
}
PRIOR_PRECISION = 1e-12


# ----------------------------------------------------------------- the data


def _rows(X, y, n):
    X = np.asarray(X).reshape(len(y), -1)
    return (X, np.asarray(y)) if n is None else (X[:n], np.asarray(y)[:n])


def split_mnist(scenario, rows_per_task):
    """Split MNIST's tasks: (X_train uint8, y_train, X_test, y_test) per task."""
    from skcl.datasets import load_ci_split_mnist

    data = load_ci_split_mnist()
    tasks = []
    for (Xa, ya), (Xv, yv), (Xt, yt) in zip(data.train, data.validation, data.test):
        X, y = _rows(np.concatenate([Xa, Xv]), np.concatenate([ya, yv]), rows_per_task)
        Xt, yt = _rows(Xt, yt, None)
        if scenario == "domain":  # the digit's position in its pair
            y, yt = y % 2, yt % 2
        # Task- and class-IL: the digit (task-IL scores it among its pair).
        tasks.append((X, y, Xt, yt))
    return tasks


def permuted_mnist(n_tasks, size, rows_per_task):
    """Permuted MNIST's tasks (domain-IL: the digit), each permuted."""
    from skcl import datasets

    if not hasattr(datasets, "load_permuted_mnist"):
        raise RuntimeError("skcl.datasets.load_permuted_mnist is not in this skcl")
    data = datasets.load_permuted_mnist(n_tasks, pad=size == 32, scenario="domain",
                                        random_state=0)
    tasks = []
    for (Xa, ya), (Xv, yv), (Xt, yt) in zip(data.train, data.validation, data.test):
        X, y = _rows(np.concatenate([np.asarray(Xa), np.asarray(Xv)]),
                     np.concatenate([ya, yv]), rows_per_task)
        tasks.append((X, y, *_rows(Xt, yt, None)))
    return tasks


def save_tasks(tasks, path):
    arrays = {f"{k}{t}": a for t, task in enumerate(tasks)
              for k, a in zip(("X", "y", "Xt", "yt"), task)}
    np.savez(path, n_tasks=len(tasks), **arrays)


def load_tasks(path):
    with np.load(path) as f:
        return [tuple(f[f"{k}{t}"] for k in ("X", "y", "Xt", "yt"))
                for t in range(int(f["n_tasks"]))]


def mean_accuracy(predict, tasks, task_il=False):
    """Average over the tasks of the test accuracy after the last task (%).

    ``predict(X, t)``: the labels of ``X`` as task ``t``'s (task-IL: among
    its classes), or of every class (``t`` None).
    """
    per_task = [float(np.mean(predict(Xt.astype(np.float32) / 255, t if task_il else None)
                              == yt))
                for t, (_, _, Xt, yt) in enumerate(tasks)]
    return 100 * float(np.mean(per_task)), [round(100 * a, 2) for a in per_task]


# ----------------------------------------------------------- the two sides


def run_avalanche(method, tasks, cfg, strength):
    import torch

    torch.set_num_threads(cfg["threads"])
    from avalanche.benchmarks.scenarios.deprecated.generators import tensors_benchmark
    from avalanche.training.plugins import EvaluationPlugin
    from avalanche.training.supervised import EWC, LwF, Naive, StreamingLDA, SynapticIntelligence

    torch.manual_seed(0)
    n_classes = int(max(y.max() for _, y, _, _ in tasks)) + 1
    as_tensors = [(torch.from_numpy(X.astype(np.float32) / 255), torch.from_numpy(y.astype(int)))
                  for X, y, _, _ in tasks]
    task_il = cfg.get("task_il", False)
    bench = tensors_benchmark(train_tensors=as_tensors, test_tensors=as_tensors[:1],
                              task_labels=list(range(len(tasks))) if task_il
                              else [0] * len(tasks))
    n_in, h = tasks[0][0].shape[1], cfg["hidden"]
    net = torch.nn.Sequential(torch.nn.Linear(n_in, h), torch.nn.ReLU(), torch.nn.Linear(h, h),
                              torch.nn.ReLU(), torch.nn.Linear(h, n_classes))
    if task_il:
        net = masked_by_task(net, [np.unique(y) for _, y, _, _ in tasks], n_classes)
    quiet = EvaluationPlugin(loggers=[])
    common = dict(train_mb_size=cfg["batch"], train_epochs=cfg["n_epochs"], eval_mb_size=1000,
                  evaluator=quiet, device="cpu")
    adam = torch.optim.Adam(net.parameters(), lr=cfg["lr"])
    ce = torch.nn.CrossEntropyLoss()
    B = cfg["batch"]
    if method == "avalanche naive":
        strategy = Naive(model=net, optimizer=adam, criterion=ce, **common)
    elif method == "avalanche ewc":
        strategy = EWC(net, adam, ce, ewc_lambda=strength["ewc"] * B / 2, mode="separate", **common)
    elif method == "avalanche online-ewc":
        strategy = EWC(net, adam, ce, ewc_lambda=strength["online"] * B / 2, mode="online",
                       decay_factor=strength["gamma"], **common)
    elif method == "avalanche si":
        strategy = SynapticIntelligence(net, adam, ce, si_lambda=2 * strength["si"], eps=0.1,
                                        **common)
    elif method.startswith("avalanche si ("):
        patch_si_weights(clip=not method.endswith("no clip)"))
        strategy = SynapticIntelligence(net, adam, ce, si_lambda=2 * strength["si"], eps=0.1,
                                        **common)
    elif method == "avalanche lwf":
        strategy = LwF(net, adam, ce, alpha=1.0, temperature=2.0, **common)
    elif method == "avalanche slda (pixels)":
        common.update(train_epochs=1, evaluator=quiet)
        strategy = StreamingLDA(slda_model=torch.nn.Identity(), criterion=ce, input_size=n_in,
                                num_classes=n_classes, shrinkage_param=1e-4,
                                streaming_update_sigma=True, **common)
    else:
        raise ValueError(method)
    fit_s = train_avalanche(strategy, bench)
    if not method.startswith("avalanche slda"):
        return fit_s, network_predictor(net)

    @torch.no_grad()
    def predict(X, task=None):
        scores = strategy.predict(torch.from_numpy(X)).numpy()
        return _among(scores, None if task is None else np.unique(tasks[task][1]))

    return fit_s, predict


def network_predictor(net):
    """``predict(X, task=None)`` of a torch network, for :func:`mean_accuracy`.

    With a task, ``net`` is a :func:`masked_by_task` module and is given it.
    """
    import torch

    @torch.no_grad()
    def predict(X, task=None):
        net.eval()
        X = torch.from_numpy(X)
        if task is None:
            return net(X).argmax(1).numpy()
        return net(X, torch.full((len(X),), task)).argmax(1).numpy()

    return predict


def train_avalanche(strategy, bench):
    """Seconds to train an Avalanche ``strategy`` on every experience of ``bench``'s stream."""
    with harness.Stopwatch() as watch:
        for experience in bench.train_stream:
            strategy.train(experience)
    return watch.seconds


def _among(scores, classes):
    """The argmax of ``scores`` (n, n_classes), over ``classes`` only if given."""
    if classes is None:
        return scores.argmax(1)
    return classes[scores[:, classes].argmax(1)]


def masked_by_task(net, task_classes, n_classes):
    """``net`` as an Avalanche ``MultiTaskModule``: outputs outside the row's task masked.

    ``task_classes[t]``: the classes of task t. The masked logits are -10⁹,
    so the softmax, the loss and its gradients are the task's alone.
    """
    import torch
    from avalanche.models import MultiTaskModule

    masks = torch.ones(len(task_classes), n_classes, dtype=torch.bool)
    for t, classes in enumerate(task_classes):
        masks[t, torch.from_numpy(classes.astype(np.int64))] = False

    class Masked(MultiTaskModule):
        def __init__(self):
            super().__init__()
            self.body = net

        def forward(self, x, task_labels):
            task_labels = torch.as_tensor(task_labels).reshape(-1).expand(len(x))
            return self.body(x).masked_fill(masks[task_labels], -1e9)

    return Masked()


def patch_si_weights(clip=True):
    """Avalanche 0.6.0's SI with its kept weights copied (and Ω unclipped if not ``clip``).

    Its ``extract_weights`` keeps ``param.detach().cpu().flatten()``: on the
    CPU that is the parameter itself, not a copy, so the weights kept before
    a step move with the step, every Δθ of the path integral is 0, Ω is 0 and
    SI is fine-tuning (checked: the kept tensor shares the parameter's
    memory). This wraps it to keep copies, as on a GPU. Its ``update_ewc_data``
    also clips every Ω at 0.001 (the field's code does not); without ``clip``
    the bound is lifted, to tell the two apart.
    """
    from avalanche.training.plugins import SynapticIntelligencePlugin

    extract = SynapticIntelligencePlugin.extract_weights
    update = SynapticIntelligencePlugin.update_ewc_data

    def copied(model, target, excluded_parameters):
        extract(model, target, excluded_parameters)
        for kept in target.values():
            kept.data = kept.data.clone()

    def unclipped(net, ewc_data, syn_data, clip_to, *rest, **kwargs):
        update(net, ewc_data, syn_data, float("inf"), *rest, **kwargs)

    SynapticIntelligencePlugin.extract_weights = staticmethod(copied)
    if not clip:
        SynapticIntelligencePlugin.update_ewc_data = staticmethod(unclipped)


def run_skcl(method, tasks, cfg, strength):
    from skcl import (
        AQCClassifier,
        EWCClassifier,
        FineTuningClassifier,
        GaussianDiscriminantClassifier,
        LeastSquaresClassifier,
        OnlineEWCClassifier,
        SIClassifier,
    )
    from skcl.feature_extraction import RandomFeatures
    from skcl.pipeline import make_pipeline

    classes = np.unique(np.concatenate([y for _, y, _, _ in tasks]))
    N = float(np.mean([len(y) for _, y, _, _ in tasks]))
    task_il = cfg.get("task_il", False)
    gradient = dict(hidden_layer_sizes=(cfg["hidden"],) * 2, n_epochs=cfg["n_epochs"],
                    batch_size=cfg["batch"], learning_rate=cfg["lr"],
                    prior_precision=PRIOR_PRECISION, random_state=0,
                    scenario="task" if task_il else "class",
                    activation=cfg.get("activation", "swish"))
    model = {
        "skcl fine-tuning": lambda: FineTuningClassifier(**gradient),
        "skcl ewc": lambda: EWCClassifier(N * strength["ewc"], **gradient),
        # EWC with the Fisher at the labels (one gradient per sample), as
        # Avalanche's: AQC's diagonal empirical Fisher averaged over the rows.
        "skcl ewc, empirical fisher": lambda: AQCClassifier(
            N * strength["ewc"], curvature="empirical_fisher", structure="diag",
            curvature_reduction="mean", **gradient),
        "skcl online-ewc": lambda: OnlineEWCClassifier(N * strength["online"],
                                                       decay=strength["gamma"], **gradient),
        "skcl si": lambda: SIClassifier(2 * N * strength["si"] / cfg["batch"], damping=0.1,
                                        **gradient),
        # Adam at a constant rate, as Avalanche's and the field's.
        "skcl fine-tuning, constant rate": lambda: FineTuningClassifier(
            learning_rate_schedule="constant", **gradient),
        "skcl si, constant rate": lambda: SIClassifier(
            2 * N * strength["si"] / cfg["batch"], damping=0.1,
            learning_rate_schedule="constant", **gradient),
        "skcl ewc, constant rate": lambda: EWCClassifier(
            N * strength["ewc"], learning_rate_schedule="constant", **gradient),
        "skcl online-ewc, constant rate": lambda: OnlineEWCClassifier(
            N * strength["online"], decay=strength["gamma"], learning_rate_schedule="constant",
            **gradient),
        # One label per row drawn from the model's predictive: the exact
        # Fisher's unbiased estimate at one reverse pass per row.
        "skcl ewc, sampled fisher, constant rate": lambda: EWCClassifier(
            N * strength["ewc"], fisher="sampled", learning_rate_schedule="constant",
            **gradient),
        "skcl online-ewc, sampled fisher, constant rate": lambda: OnlineEWCClassifier(
            N * strength["online"], decay=strength["gamma"], fisher="sampled",
            learning_rate_schedule="constant", **gradient),
        "skcl gaussian (pixels)": lambda: GaussianDiscriminantClassifier(),
        "skcl gaussian (random features)": lambda: make_pipeline(
            RandomFeatures(random_state=0), GaussianDiscriminantClassifier()),
        "skcl least squares (random features)": lambda: make_pipeline(
            RandomFeatures(random_state=0), LeastSquaresClassifier()),
    }[method]()
    with harness.Stopwatch() as watch:
        for X, y, _, _ in tasks:
            model.partial_fit(X.astype(np.float32) / 255, y, classes=classes)
    return watch.seconds, skcl_predictor(model, tasks)


def skcl_predictor(model, tasks):
    """``predict(X, task=None)`` of a fitted skcl ``model``, for :func:`mean_accuracy`.

    With a task, only its classes compete (task-IL), ranked by the logits
    (or log joint).
    """
    def predict(X, task=None):
        if task is None:
            return model.predict(X)
        scores = (model.decision_function(X) if hasattr(model, "decision_function")
                  else model.predict_proba(X))
        columns = np.searchsorted(model.classes_, np.unique(tasks[task][1]))
        return model.classes_[columns[scores[:, columns].argmax(1)]]

    return predict


def child(method, jobs):
    """One method on each scenario in turn, in the child: one JSON line each as it ends.

    The scenarios done before a crash keep their rows.
    """
    run = run_avalanche if METHODS[method][0] == "avalanche" else run_skcl
    for job in jobs:
        tasks = load_tasks(job["path"])
        fit_s, predict = run(method, tasks, job["cfg"], job["strength"])
        with harness.Stopwatch() as watch:
            accuracy, per_task = mean_accuracy(predict, tasks, job["cfg"].get("task_il", False))
        print(json.dumps(dict(scenario=job["scenario"], accuracy=accuracy, per_task=per_task,
                              fit_s=fit_s, predict_s=watch.seconds)), flush=True)


# --------------------------------------------------------------- the table


def versions():
    import importlib.metadata as md

    def v(name):
        try:
            return md.version(name)
        except md.PackageNotFoundError:
            return "not installed"

    import skcl

    return harness.machine_line(extra=f"skcl {skcl.__version__}; avalanche-lib "
                                      f"{v('avalanche-lib')}")


def budget(experiment, args, tasks, kind=None):
    field = dict(FIELD[experiment])
    if args.iterations is not None:
        field["iterations"] = args.iterations
    if args.hidden is not None:
        field["hidden"] = args.hidden
    lr = args.split_lr if experiment == "split" else args.permuted_lr
    field["lr"] = field["lr"] if lr is None else lr
    rows = float(np.mean([len(y) for _, y, _, _ in tasks]))
    field["threads"] = args.threads
    field["activation"] = args.activation
    field["n_epochs"] = max(1, round(field["iterations"] * field["batch"] / rows))
    field["rows"] = rows
    field["task_il"] = experiment == "split" and kind == "task"
    field["iterations_run"] = round(field["n_epochs"] * rows / field["batch"])
    return field


def main():
    parser = harness.parser(__doc__)
    parser.add_argument("--scenarios", nargs="+", choices=SCENARIOS, default=SCENARIOS)
    parser.add_argument("--methods", nargs="+", choices=list(METHODS), default=list(METHODS))
    parser.add_argument("--iterations", type=int, help="per task (field: 2,000 / 5,000)")
    parser.add_argument("--hidden", type=int, help="units per hidden layer (field: 400 / 1,000)")
    parser.add_argument("--rows-per-task", type=int, help="training rows kept per task")
    parser.add_argument("--permuted-tasks", type=int, default=10)
    parser.add_argument("--permuted-size", type=int, choices=(28, 32), default=32)
    parser.add_argument("--split-lr", type=float, help="field: 1e-3")
    parser.add_argument("--permuted-lr", type=float, help="field: 1e-4")
    parser.add_argument("--threads", type=int, default=os.cpu_count(),
                        help="threads per child (torch, XLA, BLAS); 1 on a loaded machine")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds per child")
    parser.add_argument("--repeats", type=int, default=1,
                        help="rounds over the methods, interleaved, each row in a fresh "
                             "process: the table gives the median fit time and its range")
    parser.add_argument("--activation", default="swish",
                        help="skcl's hidden units: swish (its default, the tables above) or "
                             "relu (the field's, as Avalanche's MLP here)")
    args = parser.parse_args()

    try:
        import avalanche  # noqa: F401
        have_avalanche = True
    except ImportError:
        have_avalanche = False
        print("avalanche is not installed (pip install 'skcl[avalanche]', best in a "
              "virtual environment): its rows are skipped.\n")
    print(versions())
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        jobs = []
        for scenario in args.scenarios:
            experiment, kind = scenario.split("-")
            try:
                tasks = (split_mnist(kind, args.rows_per_task) if experiment == "split" else
                         permuted_mnist(args.permuted_tasks, args.permuted_size,
                                        args.rows_per_task))
            except (RuntimeError, OSError) as error:
                print(f"{scenario}: no data ({error})")
                rows += [dict(method=m, scenario=scenario, status=f"no data: {error}")
                         for m in args.methods]
                continue
            path = os.path.join(tmp, f"{scenario}.npz")
            save_tasks(tasks, path)
            cfg = budget(experiment, args, tasks, kind)
            n_in = tasks[0][0].shape[1]
            print(f"{scenario}: {len(tasks)} tasks of {cfg['rows']:.0f} rows on average, "
                  f"MLP {n_in}-{cfg['hidden']}-{cfg['hidden']} (skcl's units: "
                  f"{cfg['activation']}), Adam {cfg['lr']:g}, batch "
                  f"{cfg['batch']}, {cfg['n_epochs']} epochs (~{cfg['iterations_run']} "
                  f"iterations) per task; the field's strengths {STRENGTH[scenario]}")
            jobs.append(dict(scenario=scenario, path=path, cfg=cfg, strength=STRENGTH[scenario]))
        print(flush=True)
        for _ in range(args.repeats):  # round-robin: the machine's drift hits all alike
            for method in args.methods:
                rows += run_method(method, jobs, have_avalanche, args.timeout, args.threads)
    rows = merged_repeats(rows)
    print_table(rows, args.scenarios)
    if args.csv:
        harness.write_csv(args.csv, rows, ["method", "scenario", "status", "accuracy",
                                           "published", "fit_s", "fit_s_runs", "epochs",
                                           "iterations", "hidden", "lr", "rows_per_task",
                                           "per_task"])
        print(f"\nwrote {args.csv}")


def child_environment(threads):
    """The environment of a child: ``threads`` threads for torch, XLA and BLAS alike."""
    env = dict(os.environ)
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[name] = str(threads)
    if threads == 1:  # XLA:CPU's Eigen pool off: one thread, as torch's
        env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " --xla_cpu_multi_thread_eigen=false"
                            " intra_op_parallelism_threads=1").strip()
    return env


def run_method(method, jobs, have_avalanche, timeout, threads):
    """One method on every scenario, in a child process: its rows."""
    library, published = METHODS[method]
    rows = {job["scenario"]: dict(
        method=method, scenario=job["scenario"], epochs=job["cfg"]["n_epochs"],
        iterations=job["cfg"]["iterations_run"], hidden=job["cfg"]["hidden"],
        lr=job["cfg"]["lr"], rows_per_task=round(job["cfg"]["rows"]),
        published=PUBLISHED.get(published, {}).get(job["scenario"], ""),
        status="not run") for job in jobs}
    if library == "avalanche" and not have_avalanche:
        for row in rows.values():
            row["status"] = "avalanche not installed"
            print(f"  {row['scenario']:16s} {method:38s} {row['status']}", flush=True)
        return list(rows.values())
    # In a fresh process: a child killed by a signal (a segfault, the OOM
    # killer) or past the timeout leaves the rows it printed and a reason.
    out = harness.call_isolated("benchmarks.accuracy.bench_field_scenarios:child", method,
                                jobs, timeout=timeout, env=child_environment(threads))
    for line in out.stdout.splitlines():
        if line.startswith("{"):
            result = json.loads(line)
            rows[result["scenario"]].update(
                status="ok", accuracy=round(result["accuracy"], 2),
                per_task=" ".join(map(str, result["per_task"])), fit_s=round(result["fit_s"], 1))
    if not out.ok:
        for row in rows.values():
            if row["status"] == "not run":
                row["status"] = out.why[:200]
    for row in rows.values():
        shown = f"{row['accuracy']:6.2f} %" if row["status"] == "ok" else row["status"]
        print(f"  {row['scenario']:16s} {method:38s} {shown:>9s}  fit {row.get('fit_s', '-')} s"
              f"  (published {row['published'] or '-'})", flush=True)
    return list(rows.values())


def merged_repeats(rows):
    """One row per method and scenario: its first successful run's (else its first run's),
    with the median fit time of the successful runs, each one's (``fit_s_runs``) and their
    range (``fit_s_spread``, from two runs). One seed: every run's accuracy must be the same
    (checked)."""
    groups = {}
    for row in rows:
        groups.setdefault((row["method"], row["scenario"]), []).append(row)
    merged = []
    for group in groups.values():
        ok = [r for r in group if r["status"] == "ok"]
        row = dict((ok or group)[0])
        times = [r["fit_s"] for r in ok]
        row["fit_s_runs"] = " ".join(f"{t:.1f}" for t in times)
        if times:
            row["fit_s"] = round(float(np.median(times)), 1)
        if len(times) > 1:
            row["fit_s_spread"] = (min(times), max(times))
        accuracies = sorted({r["accuracy"] for r in ok})
        if len(accuracies) > 1:
            row["status"] = f"accuracy moved between runs: {accuracies}"
        merged.append(row)
    return merged


def print_table(rows, scenarios):
    table = harness.Table({"method": "<38", **{s: ">34" for s in scenarios}},
                          title="\naccuracy % after the last task (fit time s: the median "
                                "of the runs, and their range); published: the field's mean, "
                                "full budget")
    for method in dict.fromkeys(r["method"] for r in rows):
        cells = []
        for s in scenarios:
            r = next((r for r in rows if r["method"] == method and r["scenario"] == s), None)
            if r is None:
                cells.append("")
            elif r["status"] == "ok":
                pub = f" [{r['published']}]" if r["published"] != "" else ""
                spread = ("" if "fit_s_spread" not in r else
                          ", {:.1f}–{:.1f}".format(*r["fit_s_spread"]))
                cells.append(f"{r['accuracy']:.2f} ({r['fit_s']:.1f} s{spread}){pub}")
            else:
                cells.append(r["status"][:24])
        table.row(method, *cells)


if __name__ == "__main__":
    main()
