"""Why skcl's EWC and Avalanche's part on Permuted MNIST: one factor at a time.

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
shipped). Each run is a fresh process, one thread (torch, XLA, BLAS). The data are
``bench_field_scenarios``' Permuted MNIST (``load_permuted_mnist``,
``random_state=0``; every task permuted), domain-IL. Run, at the reduced
budget of docs/experiments.md (5 tasks of 10,000 rows, 28×28, 784-400-400,
Adam 10⁻³, one epoch ≈ 78 iterations per task, λ = 500)::

    SKCL_DATA_DIR=/work/shared/data PYTHONPATH=. nice -n 10 \\
        /work/venv-avalanche/bin/python benchmarks/accuracy/bench_ewc_gap.py
    # a check that it runs (a minute): two small tasks, three of the runs
    ... bench_ewc_gap.py --tasks 2 --rows-per-task 500 --hidden 20 \\
        --runs "naive: avalanche" "ewc: + true fisher" "skcl ewc"

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


def true_fisher(net, X, chunk=500):
    """The diagonal Fisher averaged over the rows of ``X``: Σ_c p_c (∂ log p_c/∂θ)².

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
        log_p = torch.log_softmax(h, 1)
        p = log_p.exp().detach()
        for c in range(log_p.shape[1]):
            deltas = torch.autograd.grad(log_p[:, c].sum(), outputs, retain_graph=True)
            for (fw, fb), a, d in zip(fisher, inputs, deltas):
                weighted = p[:, c:c + 1] * d ** 2
                fw += weighted.T @ a.detach() ** 2
                fb += weighted.sum(0)
    return [t / len(X) for pair in fisher for t in pair]


def run_avalanche(method, step, tasks, cfg, lam, alone=False):
    import torch
    from avalanche.benchmarks.scenarios.deprecated.generators import tensors_benchmark
    from avalanche.training.plugins import EvaluationPlugin, EWCPlugin, SupervisedPlugin
    from avalanche.training.supervised import EWC, Naive
    from avalanche.training.utils import zerolike_params_dict

    torch.set_num_threads(1)
    torch.manual_seed(0)
    factors = [step[2:]] if alone and step != "avalanche" else FACTORS[:STEPS.index(step)]
    tensors = [(torch.from_numpy(X.astype(np.float32) / 255), torch.from_numpy(y.astype(int)))
               for X, y, _, _ in tasks]
    bench = tensors_benchmark(train_tensors=tensors, test_tensors=tensors[:1],
                              task_labels=[0] * len(tasks))
    net = _network(tasks[0][0].shape[1], cfg["hidden"], 10, factors)
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
    if method == "naive":
        strategy = Naive(model=net, optimizer=adam, criterion=ce, **common)
    else:
        if "true fisher" in factors:
            def importances(self, model, criterion, optimizer, dataset, device, batch_size,
                            num_workers=0):
                X = torch.stack([dataset[i][0] for i in range(len(dataset))])
                result = zerolike_params_dict(model)
                for imp, value in zip(result.values(), true_fisher(model, X)):
                    imp.data = value.detach().clone()
                return result
            EWCPlugin.compute_importances = importances
        strength = lam * (B / 2 if summed or "true fisher" not in factors else 1 / 2)
        mode = dict(mode="online", decay_factor=1.0) if "one anchor" in factors else {}
        strategy = EWC(net, adam, ce, ewc_lambda=strength, **mode, **common)
    fit_s = field.train_avalanche(strategy, bench)

    @torch.no_grad()
    def predict(X, task=None):
        net.eval()
        return net(torch.from_numpy(X)).argmax(1).numpy()

    return fit_s, predict


def run_skcl(method, tasks, cfg, lam):
    from skcl import EWCClassifier, FineTuningClassifier

    N = float(np.mean([len(y) for _, y, _, _ in tasks]))
    common = dict(hidden_layer_sizes=(cfg["hidden"],) * 2, n_epochs=cfg["n_epochs"],
                  batch_size=cfg["batch"], learning_rate=cfg["lr"],
                  learning_rate_schedule="constant", prior_precision=field.PRIOR_PRECISION,
                  random_state=0)
    model = (FineTuningClassifier(**common) if method == "skcl fine-tuning"
             else EWCClassifier(N * lam, **common))
    with harness.Stopwatch() as watch:
        for X, y, _, _ in tasks:
            model.partial_fit(X.astype(np.float32) / 255, y, classes=np.arange(10))
    return watch.seconds, lambda X, task=None: model.predict(X)


def child(name, path, cfg, lam, alone=False):
    """One run in this (fresh) process: its accuracy %, per task, and fit seconds."""
    tasks = field.load_tasks(path)
    if name in SKCL:
        fit_s, predict = run_skcl(name, tasks, cfg, lam)
    else:
        method, step = name.split(": ")
        fit_s, predict = run_avalanche(method, step, tasks, cfg, lam, alone)
    accuracy, per_task = field.mean_accuracy(predict, tasks)
    return dict(accuracy=accuracy, per_task=per_task, fit_s=fit_s)


def main():
    parser = harness.parser(__doc__)
    parser.add_argument("--tasks", type=int, default=5)
    parser.add_argument("--rows-per-task", type=int, default=10000)
    parser.add_argument("--size", type=int, choices=(28, 32), default=28)
    parser.add_argument("--hidden", type=int, default=400)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--ewc-lambda", type=float, default=500.0, help="the field's λ")
    parser.add_argument("--runs", nargs="+", help="names of the runs (default: all)")
    parser.add_argument("--alone", action="store_true",
                        help="each '+ factor' step changes that factor alone, not the ones before")
    args = parser.parse_args()
    cfg = dict(hidden=args.hidden, batch=128, n_epochs=args.epochs, lr=args.lr)
    runs = ([f"naive: {s}" for s in STEPS[:NAIVE_FACTORS + 1]] + SKCL[:1]
            + [f"ewc: {s}" for s in STEPS] + SKCL[1:])
    runs = args.runs or runs
    print(field.versions())
    if args.alone:
        print("each '+ factor' run changes that factor alone")
    print(f"Permuted MNIST domain-IL: {args.tasks} tasks of {args.rows_per_task} rows, "
          f"{args.size}×{args.size}, MLP {args.size ** 2}-{args.hidden}-{args.hidden}-10, "
          f"Adam {args.lr:g}, batch 128, {args.epochs} epoch(s) per task, EWC λ = "
          f"{args.ewc_lambda:g}; one thread, load average {os.getloadavg()[0]:.1f}\n", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "tasks.npz")
        field.save_tasks(field.permuted_mnist(args.tasks, args.size, args.rows_per_task), path)
        table = harness.Table({"run": "<28", "accuracy %": ">10.2f", "fit s": ">7.1f",
                               "per task %": "<"}, args.csv)
        for name in runs:
            # A fresh process, one thread: a child killed by a signal is a row.
            out = harness.call_isolated("benchmarks.accuracy.bench_ewc_gap:child", name, path,
                                        cfg, args.ewc_lambda, args.alone,
                                        env=field.child_environment(1))
            if out.ok:
                table.row(name, out.value["accuracy"], out.value["fit_s"],
                          out.value["per_task"])
            else:
                table.failed(name, why=out.why)
    table.close()


if __name__ == "__main__":
    main()
