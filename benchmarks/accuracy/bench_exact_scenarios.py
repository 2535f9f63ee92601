"""The exact family at its defaults on the field's seven scenario columns, against offline.

Split MNIST (task-, domain- and class-incremental), Permuted MNIST (task,
domain, class; 10 tasks, 32×32 as in the field's code) and Rotated MNIST
(domain; 0°, 18°, …, 162°), each task's **full training set** (the
loaders' training and validation rows together: 60,000 images a Permuted
or Rotated task, 60,000 over Split MNIST's five), all test rows. Pixels /
255 → ``RandomFeatures(M, random_state=0)`` fitted on the first task's
rows → ``GaussianDiscriminantClassifier()`` or ``LeastSquaresClassifier()``
at their defaults, one ``partial_fit`` per task. The score is the field's:
the mean over the tasks of the test accuracy after the last task, beside
the offline upper bound of van de Ven and Tolias (the field's MLP trained
on everything).

One feature map per experiment; each model reads the same features,
recomputed task by task (a task's features, 60,000 × M float32 = 2.4 GB
at M = 10,000, are freed after its ``partial_fit``, so one model and one
task's features are in memory at a time: about 5 GB at M = 10,000).

Labellings: Split and Permuted MNIST's task- and class-incremental columns
share one model (labels the digit, and digit + 10 · task for Permuted),
scored twice from one ``predict_log_proba`` per test task: class-IL its
argmax over every class (``predict``'s class at the defaults), task-IL its
argmax over the task's own labels (``skcl.metrics``' ``scenario="task"``
rule). Domain-IL (the digit's position in its pair; the digit) is a model
of its own, unless ``--domain-from-class``: then the Gaussian's domain-IL
answer is read from the class-labelled model, the label whose tasks' joint
densities sum highest, log Σ_t p(digit + 10·t, x). That is the domain-
labelled Gaussian's own answer whenever ``components="auto"`` keeps every
(task, class) apart (the same 100 components, counts, means, pooled
scatter and OAS shrinkage); without the flag the script prints both, a
check of that identity.

Run (M = 10,000 on a loaded 2-core machine: about half an hour a
Permuted or Rotated model, see docs/experiments.md)::

    SKCL_DATA_DIR=/work/shared/data PYTHONPATH=. nice -n 15 \\
        python -m benchmarks.accuracy.bench_exact_scenarios --M 10000 --experiments split \\
        --jsonl /tmp/scenarios.jsonl

Each row is also appended to ``--jsonl`` as it finishes.
"""

import gc
import json
import time

import numpy as np
from scipy.special import logsumexp

from benchmarks import _harness as harness

#: van de Ven and Tolias (2018/19): the field's MLP trained on everything.
OFFLINE = {
    ("split", "task"): 99.64, ("split", "domain"): 98.41, ("split", "class"): 97.93,
    ("permuted", "task"): 97.68, ("permuted", "domain"): 97.59,
    ("permuted", "class"): 97.59, ("rotated", "domain"): None,
}


def make_model(name, pooling):
    from skcl import GaussianDiscriminantClassifier, LeastSquaresClassifier

    return {
        "gaussian": lambda: GaussianDiscriminantClassifier(),
        "least-squares": lambda: LeastSquaresClassifier(),
        "gaussian-per-domain": lambda: GaussianDiscriminantClassifier(covariance="per_domain"),
        "gaussian-per-domain-pooled": lambda: GaussianDiscriminantClassifier(
            covariance="per_domain", domain_pooling=pooling),
        "gaussian-per-domain-gated": lambda: GaussianDiscriminantClassifier(
            covariance="per_domain", domain_gate="shared"),
        "gaussian-per-domain-volume": lambda: GaussianDiscriminantClassifier(
            covariance="per_domain", domain_gate="volume"),
    }[name]()


def load(experiment, n_tasks):
    """The tasks' (train, test) views and their labels: digit (+ 10 · task)."""
    from skcl import datasets

    if experiment == "split":
        data = datasets.load_split_mnist(scenario="class")
    elif experiment == "permuted":
        data = datasets.load_permuted_mnist(n_tasks, pad=True, scenario="class")
    else:
        data = datasets.load_rotated_mnist(scenario="class")
    return data


def rows(view, n):
    X = np.asarray(view if n is None else view[:n])
    return X.reshape(len(X), -1).astype(np.float32) / 255


def train_task(data, t, n):
    (Xa, ya), (Xv, yv) = data.train[t], data.validation[t]
    X = np.concatenate([rows(Xa, None), rows(Xv, None)])
    y = np.concatenate([ya, yv])
    return (X, y) if n is None else (X[:n], y[:n])


def domain_labels(experiment, y):
    """Split: the digit's position in its pair; Permuted, Rotated: the digit."""
    return y % 2 if experiment == "split" else y % 10


def labellings(experiment, names, derive):
    """(labelling, model name) pairs to train: "class" serves task- and class-IL."""
    out = []
    for name in names:
        if experiment != "rotated":
            out.append(("class", name))
        if experiment == "rotated" or not (derive and name.startswith("gaussian")):
            out.append(("domain", name))
    return out


def run_one(experiment, data, features, labelling, name, args):
    model = make_model(name, args.pooling)
    n_tasks = len(data.train)
    classes = (np.unique(domain_labels(experiment, np.asarray(data.classes)))
               if labelling == "domain" else np.asarray(data.classes))
    fitting = harness.Stopwatch()
    for t in range(n_tasks):
        X, y = train_task(data, t, args.rows)
        F = features.transform(X)
        del X
        model.partial_fit(F, y if labelling == "class" else domain_labels(experiment, y),
                          classes=classes)
        del F
        gc.collect()
        print(f"  {experiment} {labelling} {name}: task {t + 1}/{n_tasks} learned "
              f"({fitting.seconds:.0f} s)", flush=True)
    fit_s = fitting.seconds
    predicting = harness.Stopwatch()
    scores = {}
    for t in range(n_tasks):
        Xt, yt = data.test[t]
        Xt, yt = rows(Xt, args.test), np.asarray(yt if args.test is None else yt[:args.test])
        log_proba = model.predict_log_proba(features.transform(Xt))
        known = model.classes_
        if labelling == "class":
            scores.setdefault("class", []).append(np.mean(known[np.argmax(log_proba, 1)] == yt))
            own = np.isin(known, data.task_labels[t])
            task = known[own][np.argmax(log_proba[:, own], 1)]
            scores.setdefault("task", []).append(np.mean(task == yt))
            if name.startswith("gaussian"):
                # log p(label | x) summed over the tasks' components of each label.
                by_label = domain_labels(experiment, known)
                labels = np.unique(by_label)
                summed = np.stack([logsumexp(log_proba[:, by_label == c], axis=1)
                                   for c in labels], axis=1)
                scores.setdefault("domain (from class)", []).append(
                    np.mean(labels[np.argmax(summed, 1)] == domain_labels(experiment, yt)))
        else:
            scores.setdefault("domain", []).append(
                np.mean(known[np.argmax(log_proba, 1)] == domain_labels(experiment, yt)))
    predict_s = predicting.seconds
    del model
    gc.collect()
    return scores, fit_s, predict_s


def report(experiment, name, scenario, per_task, fit_s, predict_s, args):
    accuracy = 100 * float(np.mean(per_task))
    bound = OFFLINE.get((experiment, scenario.split()[0]))
    gap = "" if bound is None else f"{bound - accuracy:+7.2f}"
    print(f"{experiment:<9}{scenario:<21}{name:<28}{accuracy:>8.2f}"
          f"{'' if bound is None else bound:>8}{gap:>8}{fit_s:>8.0f}{predict_s:>8.0f}",
          flush=True)
    if args.jsonl:
        with open(args.jsonl, "a") as f:
            f.write(json.dumps(dict(
                experiment=experiment, scenario=scenario, model=name, M=args.M,
                rows=args.rows, test=args.test, accuracy=accuracy, bound=bound,
                per_task=[round(100 * float(a), 2) for a in per_task], fit_s=fit_s,
                predict_s=predict_s, when=time.strftime("%Y-%m-%d %H:%M:%S"))) + "\n")


def main():
    parser = harness.parser(__doc__, csv=False)
    parser.add_argument("--M", type=int, default=10000, help="random features")
    parser.add_argument("--experiments", nargs="+", default=["split", "permuted", "rotated"],
                        choices=["split", "permuted", "rotated"])
    parser.add_argument("--models", nargs="+", default=["gaussian", "least-squares"],
                        choices=["gaussian", "least-squares", "gaussian-per-domain",
                                 "gaussian-per-domain-pooled", "gaussian-per-domain-gated",
                                 "gaussian-per-domain-volume"])
    parser.add_argument("--labellings", nargs="+", default=["class", "domain"],
                        choices=["class", "domain"],
                        help="train the class-labelled (task- and class-IL) or domain models")
    parser.add_argument("--pooling", type=float, default=0.5,
                        help="domain_pooling of gaussian-per-domain-pooled")
    parser.add_argument("--tasks", type=int, default=10, help="Permuted MNIST's tasks")
    parser.add_argument("--rows", type=int, help="training rows kept per task (all by default)")
    parser.add_argument("--test", type=int, help="test rows kept per task (all by default)")
    parser.add_argument("--domain-from-class", action="store_true",
                        help="the Gaussian's domain-IL read from the class-labelled model")
    parser.add_argument("--jsonl", help="append each row here as it finishes")
    args = parser.parse_args()
    print(harness.machine_line(extra=f"M = {args.M}, rows {args.rows or 'all'}, "
                                     f"test {args.test or 'all'}"), flush=True)
    from skcl.feature_extraction import RandomFeatures

    print(f"{'':<9}{'scenario':<21}{'model':<28}{'accuracy':>8}{'offline':>8}{'gap':>8}"
          f"{'fit s':>8}{'pred s':>8}")
    for experiment in args.experiments:
        data = load(experiment, args.tasks)
        features = RandomFeatures(args.M, random_state=0).fit(train_task(data, 0, args.rows)[0])
        for labelling, name in labellings(experiment, args.models, args.domain_from_class):
            if labelling not in args.labellings:
                continue
            scores, fit_s, predict_s = run_one(experiment, data, features, labelling, name, args)
            for scenario, per_task in scores.items():
                report(experiment, name, scenario, per_task, fit_s, predict_s, args)
        del data, features
        gc.collect()


if __name__ == "__main__":
    main()
