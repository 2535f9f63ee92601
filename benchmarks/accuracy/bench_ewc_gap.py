"""Why skcl's EWC and Avalanche's part (Permuted MNIST, Split MNIST task-IL): one factor at a time.

``bench_field_scenarios.py`` runs both libraries' EWC on the same rows,
network, optimiser and budget, and they differ by several points. This
script walks Avalanche's EWC (and ``Naive``, its fine-tuning) towards skcl's
definitions, one factor per step, each step keeping the previous ones, and
prints the accuracy after every step beside skcl's at a constant learning
rate (Avalanche's schedule):

1. ``adam reset``: Adam's state cleared at every experience (skcl starts
   each task with a fresh Adam; Avalanche 0.6.0's ``make_optimizer`` keeps
   the moments across experiences).
2. ``swish``: SiLU hidden units (skcl's) instead of ReLUs.
3. ``lecun init``: weights drawn from LeCun's normal, biases 0 (skcl's)
   instead of torch's uniform ±1/√fan_in.
4. ``one anchor``: the importances summed and anchored at the last task's
   solution (Avalanche's ``mode="online"``, γ = 1: skcl's
   λ/2 (θ − θ*_{t-1})ᵀ (Σ_i C_i) (θ − θ*_{t-1})) instead of one penalty per
   task anchored at its own solution (``mode="separate"``).
5. ``true fisher``: the importance is the diagonal Fisher averaged over the
   task's rows, the expectation under the model's predictive of each row's
   squared log-likelihood gradient (skcl's ``EWCClassifier``), instead of the
   squared gradient of each minibatch's mean loss at the labels, averaged
   over minibatches (Avalanche's). Strength λ_A = λ/2 (no longer λB/2).
6. ``summed loss``: the minibatch's summed cross-entropy (skcl's) instead of
   its mean, with λ_A = B λ/2: the same objective up to the factor B, which
   Adam removes but for its ε.

With ``--alone`` each step changes its factor alone (from Avalanche as
shipped). Each run is a fresh process, one thread (torch, XLA, BLAS). The
data (``--scenario``) are ``bench_field_scenarios``' Permuted MNIST
(``load_permuted_mnist``, ``random_state=0``; every task permuted),
domain-IL, or its Split MNIST task-IL (``split-task``: all of a task's rows;
Avalanche's MLP a ``MultiTaskModule`` masking the outputs outside the row's
task, in training, in the importances and at test; skcl's
``scenario="task"``; scored among the task's two digits), each at the
scenario's field λ (``bench_field_scenarios.STRENGTH``). More runs, by name
(``--runs``): ``ewc: fisher sizes`` (Avalanche's EWC as shipped, printing
per task the sums over θ of its importances × B and of the true and
empirical Fisher at the same θ: whether the converted λ weighs the same
penalty; and the share of θ left free, true Fisher under 10⁻³ of its mean),
``ewc: fisher sizes, swish`` (the same on SiLU units), ``skcl ewc, empirical
fisher`` (skcl's EWC with the Fisher at the labels), ``online-ewc: <step>``
and ``skcl online-ewc`` (at the scenario's online λ and γ), and
``--lambdas`` adds skcl's EWC at other field λ (a sweep, reported as such).
Every skcl run has a ReLU twin, its name followed by ``, relu`` (``skcl
ewc, relu``: ``activation="relu"``, the field's hidden units).
``--seed`` sets torch's seed and skcl's ``random_state`` (the data stay).
Run, at the reduced budget of docs/experiments.md (one epoch per task;
Permuted: 5 tasks of 10,000 rows, 28×28, 784-400-400, Adam 10⁻³, ≈ 78
iterations per task, λ = 500; Split task-IL: ≈ 94 iterations per task, λ =
10⁷)::

    SKCL_DATA_DIR=/work/shared/data PYTHONPATH=. nice -n 10 \\
        /work/venv-avalanche/bin/python benchmarks/accuracy/bench_ewc_gap.py
    ... bench_ewc_gap.py --scenario split-task
    # a check that it runs (a minute): two small tasks, three of the runs
    ... bench_ewc_gap.py --tasks 2 --rows-per-task 500 --hidden 20 \\
        --runs "naive: avalanche" "ewc: + true fisher" "skcl ewc"
    ... bench_ewc_gap.py --scenario split-task --tasks 3 --rows-per-task 500 \\
        --hidden 20 --runs "ewc: fisher sizes" "skcl online-ewc" --lambdas 1e5

``--csv PATH`` writes the runs' table to PATH too.
"""

import os
import tempfile

import numpy as np

from benchmarks import _harness as harness
from benchmarks.accuracy import bench_field_scenarios as field

FACTORS = ["adam reset", "swish", "lecun init", "one anchor", "true fisher", "summed loss"]
STEPS = ["avalanche"] + [f"+ {factor}" for factor in FACTORS]
SKCL = ["skcl fine-tuning", "skcl ewc"]
SCENARIOS = ["permuted-domain", "split-task"]
NAIVE_FACTORS = 3  # the factors that touch fine-tuning too: the first three


def _network(n_in, hidden, n_out, factors):
    import torch

    act = torch.nn.SiLU if "swish" in factors else torch.nn.ReLU
    net = torch.nn.Sequential(torch.nn.Linear(n_in, hidden), act(),
                              torch.nn.Linear(hidden, hidden), act(),
                              torch.nn.Linear(hidden, n_out))
    if "lecun init" in factors:
        for layer in net:
            if isinstance(layer, torch.nn.Linear):
                torch.nn.init.normal_(layer.weight, std=layer.in_features ** -0.5)
                torch.nn.init.zeros_(layer.bias)
    return net


def true_fisher(net, X, classes=None, labels=None, chunk=500):
    """The diagonal Fisher averaged over the rows of ``X``: Σ_c p_c (∂ log p_c/∂θ)².

    ``net``: a torch ``Sequential`` MLP. The softmax is over ``classes``
    (task-IL: the task's columns; None: every output). With ``labels``
    (column indices into ``classes``), the empirical Fisher instead: each
    row's squared gradient at its label, (∂ log p_y/∂θ)².

    Per row and class, from each ``Linear``'s input a and the gradient δ at its
    output (rows are independent in an MLP): (δ²)ᵀ(a²) for the weight, δ²
    for the bias; one backward pass per class.
    """
    import torch

    linears = [m for m in net if isinstance(m, torch.nn.Linear)]
    fisher = [(torch.zeros_like(m.weight), torch.zeros_like(m.bias)) for m in linears]
    for start in range(0, len(X), chunk):
        inputs, outputs, h = [], [], X[start:start + chunk]
        for module in net:
            if isinstance(module, torch.nn.Linear):
                inputs.append(h)
                h = module(h)
                outputs.append(h)
            else:
                h = module(h)
        log_p = torch.log_softmax(h if classes is None else h[:, classes], 1)
        if labels is None:
            weights = log_p.exp().detach()
        else:
            rows = labels[start:start + chunk]
            weights = torch.nn.functional.one_hot(rows, log_p.shape[1]).to(log_p.dtype)
        for c in range(log_p.shape[1]):
            deltas = torch.autograd.grad(log_p[:, c].sum(), outputs, retain_graph=True)
            for (fw, fb), a, d in zip(fisher, inputs, deltas):
                weighted = weights[:, c:c + 1] * d ** 2
                fw += weighted.T @ a.detach() ** 2
                fb += weighted.sum(0)
    return [t / len(X) for pair in fisher for t in pair]


def _task_rows(dataset):
    """An Avalanche experience's rows: X, y and the task's classes (sorted)."""
    import torch

    X = torch.stack([dataset[i][0] for i in range(len(dataset))])
    y = torch.as_tensor([int(dataset[i][1]) for i in range(len(dataset))])
    return X, y, torch.unique(y)


def _patch_importances(body, task_il, sizes=None):
    """Avalanche's EWC importances replaced by the true Fisher of ``body`` (the MLP).

    Task-IL: the softmax over the experience's classes, as the mask makes
    it. With a list ``sizes``, the importances are Avalanche's own, and each
    task appends the sums over θ of B × them, of the true Fisher and of the
    empirical Fisher at the labels (both averaged over rows), at the same θ,
    and the share of θ whose true Fisher is under 10⁻³ of its mean (free).
    """
    import torch
    from avalanche.training.plugins import EWCPlugin
    from avalanche.training.utils import zerolike_params_dict

    own = EWCPlugin.compute_importances

    def importances(self, model, criterion, optimizer, dataset, device, batch_size,
                    num_workers=0):
        X, y, classes = _task_rows(dataset)
        columns = classes if task_il else None
        if sizes is not None:
            result = own(self, model, criterion, optimizer, dataset, device, batch_size,
                         num_workers)
            labels = torch.searchsorted(classes, y) if task_il else y
            fisher = torch.cat([v.flatten() for v in true_fisher(body, X, columns)])
            sizes.append(dict(
                batch=batch_size * float(sum(v.data.sum() for v in result.values())),
                true=float(fisher.sum()),
                empirical=float(sum(v.sum() for v in true_fisher(body, X, columns, labels))),
                free=float((fisher < 1e-3 * fisher.mean()).double().mean())))
            return result
        result = zerolike_params_dict(model)
        for imp, value in zip(result.values(), true_fisher(body, X, columns)):
            imp.data = value.detach().clone()
        return result

    EWCPlugin.compute_importances = importances


def run_avalanche(method, step, tasks, cfg, lam, alone=False):
    """Avalanche's ``method`` at ``step`` of the walk: (fit s, predict, sizes).

    ``method``: "naive", "ewc" (at ``lam``) or "online-ewc" (always one
    anchor, at the scenario's online λ and γ, ``cfg["online"]``). ``step``
    "fisher sizes": as shipped, with the importances' sizes measured
    (:func:`_patch_importances`; "fisher sizes, swish": on SiLU units);
    ``sizes`` is None otherwise.
    """
    import torch
    from avalanche.benchmarks.scenarios.deprecated.generators import tensors_benchmark
    from avalanche.training.plugins import EvaluationPlugin, SupervisedPlugin
    from avalanche.training.supervised import EWC, Naive

    torch.set_num_threads(1)
    torch.manual_seed(cfg.get("seed", 0))
    steps = STEPS + ["fisher sizes", "fisher sizes, swish"]
    factors = ([step[2:]] if alone and step.startswith("+ ")
               else FACTORS[:STEPS.index(step)] if step in STEPS
               else ["swish"] if step.endswith("swish") else [])
    if step not in steps:
        raise ValueError(f"unknown step {step!r}: one of {steps}")
    task_il = cfg["task_il"]
    tensors = [(torch.from_numpy(X.astype(np.float32) / 255), torch.from_numpy(y.astype(int)))
               for X, y, _, _ in tasks]
    bench = tensors_benchmark(train_tensors=tensors, test_tensors=tensors[:1],
                              task_labels=list(range(len(tasks))) if task_il
                              else [0] * len(tasks))
    body = _network(tasks[0][0].shape[1], cfg["hidden"], 10, factors)
    # Task-IL: the outputs outside the row's task masked (field.masked_by_task).
    net = (field.masked_by_task(body, [np.unique(y) for _, y, _, _ in tasks], 10)
           if task_il else body)
    B = cfg["batch"]
    summed = "summed loss" in factors
    ce = torch.nn.CrossEntropyLoss(reduction="sum" if summed else "mean")
    plugins = []
    if "adam reset" in factors:
        class ResetAdam(SupervisedPlugin):
            def before_training_exp(self, strategy, **kwargs):
                strategy.optimizer.state.clear()
        plugins.append(ResetAdam())
    common = dict(train_mb_size=B, train_epochs=cfg["n_epochs"], eval_mb_size=1000,
                  evaluator=EvaluationPlugin(loggers=[]), device="cpu", plugins=plugins)
    adam = torch.optim.Adam(net.parameters(), lr=cfg["lr"])
    sizes = [] if step.startswith("fisher sizes") else None
    if method == "naive":
        strategy = Naive(model=net, optimizer=adam, criterion=ce, **common)
    else:
        if "true fisher" in factors or sizes is not None:
            _patch_importances(body, task_il, sizes)
        mode = dict(mode="online", decay_factor=1.0) if "one anchor" in factors else {}
        if method == "online-ewc":
            lam, gamma = cfg["online"]
            mode = dict(mode="online", decay_factor=gamma)
        strength = lam * (B / 2 if summed or "true fisher" not in factors else 1 / 2)
        strategy = EWC(net, adam, ce, ewc_lambda=strength, **mode, **common)
    fit_s = field.train_avalanche(strategy, bench)
    return fit_s, field.network_predictor(net), sizes


def run_skcl(name, tasks, cfg, lam):
    """skcl's run ``name`` at a constant learning rate: (fit s, predict).

    "skcl ewc, empirical fisher": EWC with the Fisher at the labels, one
    gradient per row, averaged (AQC's diagonal empirical Fisher); "skcl
    ewc, λ = V": ``EWCClassifier`` at the field's λ = V instead of ``lam``;
    "skcl online-ewc": ``OnlineEWCClassifier`` at ``cfg["online"]``'s λ and γ;
    any of them with ", relu" at the end: on ReLU hidden units
    (``activation="relu"``, the field's network) instead of skcl's swish.
    """
    from skcl import AQCClassifier, EWCClassifier, FineTuningClassifier, OnlineEWCClassifier

    N = float(np.mean([len(y) for _, y, _, _ in tasks]))
    common = dict(hidden_layer_sizes=(cfg["hidden"],) * 2, n_epochs=cfg["n_epochs"],
                  batch_size=cfg["batch"], learning_rate=cfg["lr"],
                  learning_rate_schedule="constant", prior_precision=field.PRIOR_PRECISION,
                  random_state=cfg.get("seed", 0), scenario="task" if cfg["task_il"] else "class")
    if name.endswith(", relu"):
        name, common["activation"] = name[: -len(", relu")], "relu"
    if name.startswith("skcl ewc, λ = "):
        name, lam = "skcl ewc", float(name.rsplit("= ", 1)[1])
    if name == "skcl fine-tuning":
        model = FineTuningClassifier(**common)
    elif name == "skcl ewc":
        model = EWCClassifier(N * lam, **common)
    elif name == "skcl online-ewc":
        model = OnlineEWCClassifier(N * cfg["online"][0], decay=cfg["online"][1], **common)
    elif name == "skcl ewc, empirical fisher":
        model = AQCClassifier(N * lam, curvature="empirical_fisher", structure="diag",
                              curvature_reduction="mean", **common)
    else:
        raise ValueError(f"unknown skcl run {name!r}")
    classes = np.arange(10)
    with harness.Stopwatch() as watch:
        for X, y, _, _ in tasks:
            model.partial_fit(X.astype(np.float32) / 255, y, classes=classes)
    return watch.seconds, field.skcl_predictor(model, tasks)


def child(name, path, cfg, lam, alone=False):
    """One run in this (fresh) process: its accuracy %, per task, and fit seconds.

    The Fisher sizes run adds, per task, the importances' sums (see
    :func:`_patch_importances`).
    """
    tasks = field.load_tasks(path)
    sizes = None
    if name.startswith("skcl "):
        fit_s, predict = run_skcl(name, tasks, cfg, lam)
    else:
        method, step = name.split(": ")
        fit_s, predict, sizes = run_avalanche(method, step, tasks, cfg, lam, alone)
    accuracy, per_task = field.mean_accuracy(predict, tasks, cfg["task_il"])
    return dict(accuracy=accuracy, per_task=per_task, fit_s=fit_s, sizes=sizes)


def load_scenario(scenario, n_tasks, size, rows_per_task):
    """The tasks of ``scenario``, from ``bench_field_scenarios``' loaders."""
    if scenario == "split-task":
        return field.split_mnist("task", rows_per_task)[:n_tasks]
    return field.permuted_mnist(n_tasks, size, 10000 if rows_per_task is None else rows_per_task)


def main():
    parser = harness.parser(__doc__)
    parser.add_argument("--scenario", choices=SCENARIOS, default="permuted-domain")
    parser.add_argument("--tasks", type=int, default=5, help="(Split MNIST: its first ones)")
    parser.add_argument("--rows-per-task", type=int,
                        help="default: 10,000 (Permuted MNIST), all (Split MNIST)")
    parser.add_argument("--size", type=int, choices=(28, 32), default=28)
    parser.add_argument("--hidden", type=int, default=400)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--ewc-lambda", type=float,
                        help="the field's λ (default: the scenario's, bench_field_scenarios)")
    parser.add_argument("--runs", nargs="+", help="names of the runs (default: the walk)")
    parser.add_argument("--lambdas", nargs="+", type=float, default=[],
                        help="more runs: skcl's EWC at each of these field λ")
    parser.add_argument("--seed", type=int, default=0,
                        help="torch's seed and skcl's random_state (the data stay the same)")
    parser.add_argument("--alone", action="store_true",
                        help="each '+ factor' step changes that factor alone, not the ones before")
    args = parser.parse_args()
    strength = field.STRENGTH[args.scenario]
    lam = strength["ewc"] if args.ewc_lambda is None else args.ewc_lambda
    task_il = args.scenario == "split-task"
    cfg = dict(hidden=args.hidden, batch=128, n_epochs=args.epochs, lr=args.lr, task_il=task_il,
               seed=args.seed, online=[strength["online"], strength["gamma"]])
    runs = ([f"naive: {s}" for s in STEPS[:NAIVE_FACTORS + 1]] + SKCL[:1]
            + [f"ewc: {s}" for s in STEPS] + SKCL[1:])
    runs = (args.runs or runs) + [f"skcl ewc, λ = {v:g}" for v in args.lambdas]
    print(field.versions())
    if args.alone:
        print("each '+ factor' run changes that factor alone")
    tasks = load_scenario(args.scenario, args.tasks, args.size, args.rows_per_task)
    n_in = tasks[0][0].shape[1]
    rows = np.mean([len(y) for _, y, _, _ in tasks])
    print(f"{args.scenario}: {len(tasks)} tasks of {rows:.0f} rows on average, MLP "
          f"{n_in}-{args.hidden}-{args.hidden}-10{', masked by task' if task_il else ''}, "
          f"Adam {args.lr:g}, batch 128, {args.epochs} epoch(s) per task, EWC λ = {lam:g} "
          f"(online: λ = {strength['online']:g}, γ = {strength['gamma']:g}), "
          f"seed {args.seed}; "
          f"one thread, load average {os.getloadavg()[0]:.1f}\n", flush=True)
    sizes = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "tasks.npz")
        field.save_tasks(tasks, path)
        table = harness.Table({"run": "<28", "accuracy %": ">10.2f", "fit s": ">7.1f",
                               "per task %": "<"}, args.csv)
        for name in runs:
            # A fresh process, one thread: a child killed by a signal is a row.
            out = harness.call_isolated("benchmarks.accuracy.bench_ewc_gap:child", name, path,
                                        cfg, lam, args.alone, env=field.child_environment(1))
            if out.ok:
                table.row(name, out.value["accuracy"], out.value["fit_s"],
                          out.value["per_task"])
                if out.value["sizes"]:
                    sizes[name] = out.value["sizes"]
            else:
                table.failed(name, why=out.why)
    table.close()
    print_sizes(sizes)


def print_sizes(sizes):
    """Per task, the sums over θ of each importance (the Fisher sizes run)."""
    for name, per_task in sizes.items():
        print(f"\n{name}: Σ_θ of each importance, per task (B × Avalanche's; the true and "
              "the empirical Fisher, row means; at Avalanche's θ*_t)")
        for t, s in enumerate(per_task):
            print(f"  task {t + 1}: B·I {s['batch']:.4g}  true {s['true']:.4g}  empirical "
                  f"{s['empirical']:.4g}  true / B·I {s['true'] / s['batch']:.3g}  "
                  f"true / empirical {s['true'] / s['empirical']:.3g}  free {s['free']:.3f}")


if __name__ == "__main__":
    main()
