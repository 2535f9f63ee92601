"""The field's scenario columns: their data, network, budget and strengths.

van de Ven and Tolias ("Generative replay with feedback connections",
2018/19; the code of "Three scenarios") learn Split MNIST (5 tasks of two
digits) and Permuted MNIST (10 pixel orders, 32×32) task-, domain- and
class-incrementally with an MLP trained by Adam at a constant rate, and set
each regularisation strength per experiment and scenario. :func:`column`
gives the keywords of one such :class:`~skcl.reproduce.TaskSequence`
(``_sequences.py`` builds the entries of ``SEQUENCES`` from them): its
loader, the field's network and budget (or the "-small" slice's), and the
single-candidate grids that set EWC's, online EWC's, SI's and AQC's
strengths to the field's, converted to skcl's convention.
"""

__all__ = ["PAIRS", "SMALL", "SMALL_ROWS", "STRENGTHS", "column", "field_budget", "grids"]

PAIRS = ((0, 1), (2, 3), (4, 5), (6, 7), (8, 9))

#: The slice of the "-small" scenario columns: training and test (and
#: validation) rows per task, for a run of minutes.
SMALL_ROWS = (1000, 500)

#: The field's network and budget per experiment: hidden layers, Adam's
#: constant learning rate, iterations of 128 rows per task, and the mean
#: training rows per task of skcl's loaders (the official training split
#: less its 20 % validation split), which turn iterations into epochs and
#: the field's per-sample strengths into skcl's summed ones. Rotated MNIST
#: is not in the field's table: it takes Permuted MNIST's network and
#: budget on its 784 pixels.
FIELD = {
    "split": dict(hidden=(400, 400), learning_rate=1e-3, iterations=2000, rows=9600),
    "permuted": dict(hidden=(1000, 1000), learning_rate=1e-4, iterations=5000, rows=48000),
    "rotated": dict(hidden=(1000, 1000), learning_rate=1e-4, iterations=5000, rows=48000),
}
BATCH = 128

#: The "-small" budget: the field's network on :data:`SMALL_ROWS` rows per
#: task, 10 epochs (78 iterations of 128, 4 % of Split MNIST's and 1.6 % of
#: Permuted MNIST's), at Adam 10⁻³ (at 10⁻⁴, Permuted MNIST's rate, 80
#: iterations leave the network far from fitting a task).
SMALL = dict(learning_rate=1e-3, n_epochs=10)

#: The field's strengths, (EWC λ, online EWC λ, online EWC γ, SI c), per
#: experiment and scenario (its ``params/param_values.py``). The domain- and
#: class-IL values of Split MNIST and Permuted MNIST's domain-IL are those
#: ``benchmarks/accuracy/bench_field_scenarios.py`` runs; the task-IL ones and
#: Permuted MNIST's class-IL are recalled from the same file, which is not
#: obtainable here (not checked). Rotated MNIST takes Permuted MNIST's.
STRENGTHS = {
    ("split", "task"): (1e7, 1e8, 0.8, 50.0),
    ("split", "domain"): (1e6, 1e8, 0.7, 500.0),
    ("split", "class"): (1e8, 1e9, 0.8, 0.5),
    ("permuted", "task"): (500.0, 5000.0, 1.0, 5.0),
    ("permuted", "domain"): (500.0, 1000.0, 0.9, 5.0),
    ("permuted", "class"): (1.0, 5.0, 1.0, 0.1),
    ("rotated", "domain"): (500.0, 1000.0, 0.9, 5.0),
}
#: SI's ξ in the field's code.
SI_DAMPING = 0.1

#: The gradient methods a scenario column runs by default, with the exact
#: family on random features (M = 2,000, its default).
METHODS = ("joint", "fine-tuning", "ewc", "online-ewc", "si", "aqc", "rf-gaussian",
           "rf-least-squares")

#: Every gradient method of a scenario column: the field's ReLU units (its
#: strengths were chosen for them: on skcl's swish units the field's λ costs
#: EWC 4–5 points of Split task-IL, docs/experiments.md); Adam at a constant
#: rate, as the field's; a prior precision of 10⁻¹² (the field's networks
#: have none, and skcl's λ multiplies the prior too from the second task on,
#: which at the field's strengths would pin every weight); and,
#: task-incrementally, only each task's classes compete in its likelihood.
_TRAINING = {"activation": "relu", "learning_rate_schedule": "constant",
             "prior_precision": 1e-12}

#: AQC on the MLP: the paper's full Hessian needs n_params² floats (915 GB
#: in float32 for Split MNIST's 478,410 parameters), so its curvature is
#: the Kronecker-factored GGN, averaged over the task's rows as EWC's
#: Fisher, at EWC's strength.
_SETTINGS = {
    "AQC": {"curvature": "ggn", "structure": "kron", "curvature_reduction": "mean"},
    "RF least squares": {"standardize": False},
    "RF Gaussian": {"standardize": False},
    "RanDumb": {"standardize": False},
}

NOTE = ("{label}: paper = van de Ven and Tolias's published mean (20 seeds, the field's "
        "full budget); ReLU MLP {network}, Adam {learning_rate:g} at a constant rate, batch 128, "
        "{n_epochs} epochs of {rows:,} rows per task (≈ {iterations:,} iterations; the "
        "field: {field_iterations:,}); EWC, online EWC, SI and AQC at the field's strengths.")


def field_budget(kind, small=False):
    """The network and budget of a column: hidden layers, rate, epochs, rows per task.

    Parameters
    ----------
    kind : {"split", "permuted", "rotated"}
    small : bool, default=False
        The "-small" slice's budget (:data:`SMALL`, :data:`SMALL_ROWS`).

    Returns
    -------
    dict
        ``hidden``, ``learning_rate``, ``n_epochs``, ``rows`` (training rows
        per task), ``iterations`` (of 128 rows, per task) and the field's
        ``field_iterations``.

    Examples
    --------
    >>> from skcl.reproduce._field import field_budget
    >>> budget = field_budget("split")
    >>> budget["hidden"], budget["n_epochs"], budget["iterations"]
    ((400, 400), 27, 2025)
    >>> field_budget("permuted", small=True)["iterations"]
    78
    """
    field = FIELD[kind]
    if small:
        rows, rate, epochs = SMALL_ROWS[0], SMALL["learning_rate"], SMALL["n_epochs"]
    else:
        rows, rate = field["rows"], field["learning_rate"]
        epochs = round(field["iterations"] * BATCH / rows)
    return dict(hidden=field["hidden"], learning_rate=rate, n_epochs=epochs, rows=rows,
                iterations=round(epochs * rows / BATCH), field_iterations=field["iterations"])


def grids(kind, scenario, rows):
    """The field's strengths as single-candidate grids, in skcl's convention.

    skcl minimises a task's *summed* NLL + α/2 Σ C_k Δθ_k², C the Fisher
    averaged over the task's rows (EWC, online EWC, AQC's curvature here)
    or SI's ω/(Δθ² + ξ) with ω from the summed minibatch NLL's gradient;
    the field minimises the *mean* NLL + λ/2 Σ F_k Δθ_k² (EWC) and
    + c Σ Ω_k Δθ_k² (SI). Dividing skcl's by the N rows of a task gives the
    field's when α = N λ (EWC, online EWC, AQC) and α = 2 N c / B (SI, B the
    batch of 128).

    Parameters
    ----------
    kind, scenario : str
        A key of :data:`STRENGTHS`.
    rows : int
        N, the training rows of a task.

    Returns
    -------
    dict
        Method name → grid entries, replacing the method's own.

    Examples
    --------
    >>> from skcl.reproduce._field import grids
    >>> grids("permuted", "domain", 1000)["EWC"]
    {'alpha': [500000.0]}
    """
    ewc, online, gamma, c = STRENGTHS[kind, scenario]
    return {
        "EWC": {"alpha": [rows * ewc]},
        "Online EWC": {"alpha": [rows * online], "decay": [gamma]},
        "SI": {"alpha": [2 * rows * c / BATCH], "damping": [SI_DAMPING]},
        "AQC": {"alpha": [rows * ewc]},
    }


def _loader(kind, scenario, rows=None):
    """Split, Permuted (10 tasks, 32×32) or Rotated MNIST labelled for ``scenario``.

    Pixels in [0, 1] as float32 rows; Permuted and Rotated MNIST's tasks stay
    views (:func:`~skcl.datasets.load_permuted_mnist`), scaled on access.
    ``rows``: (training, test) rows kept per task, the first ones.
    """
    def load(root=None, *, download=False):
        import numpy as np

        from .. import datasets

        if kind == "split":
            data = datasets.load_split_mnist(root, scenario=scenario, download=download)
            for split in ("train", "validation", "test"):
                data[split] = [(X.reshape(len(X), -1).astype(np.float32) / 255.0, y)
                               for X, y in data[split]]
        else:
            loader = (datasets.load_permuted_mnist if kind == "permuted"
                      else datasets.load_rotated_mnist)
            options = {"pad": True} if kind == "permuted" else {}
            data = loader(root=root, download=download, scenario=scenario, **options)
            for split in ("train", "validation", "test"):
                data[split] = [(X.scaled(1 / 255), y) for X, y in data[split]]
        if rows is not None:
            for split, n in zip(("train", "validation", "test"), (rows[0], rows[1], rows[1])):
                data[split] = [(X[:n], y[:n]) for X, y in data[split]]
        return data

    load.__name__ = f"load_{kind}_mnist_{scenario}"
    return load


def column(kind, scenario, small=False):
    """The keywords of one scenario column's :class:`~skcl.reproduce.TaskSequence`.

    Keys like ``permuted-mnist-domain``; ``-small``: :data:`SMALL_ROWS` rows
    per task at the :data:`SMALL` budget. Pixels in [0, 1]; the field's
    network (``fcnn_hidden``, the column's one model "fcnn") and budget.

    Parameters
    ----------
    kind : {"split", "permuted", "rotated"}
    scenario : {"task", "domain", "class"}
    small : bool, default=False

    Returns
    -------
    dict

    Examples
    --------
    >>> from skcl.reproduce._field import column
    >>> keywords = column("split", "task", small=True)
    >>> keywords["key"], keywords["fcnn_hidden"], keywords["n_epochs"]
    ('split-mnist-task-small', (400, 400), 10)
    """
    if scenario == "task":
        labels = PAIRS if kind == "split" else tuple(
            tuple(range(10 * t, 10 * t + 10)) for t in range(10))
    else:
        labels = None
    budget = field_budget(kind, small)
    label = f"{kind.capitalize()} MNIST {scenario}" + (" (slice)" if small else "")
    inputs = 1024 if kind == "permuted" else 784
    outputs = 2 if (kind, scenario) == ("split", "domain") else (
        10 if kind == "split" or scenario == "domain" else 100)
    network = "-".join(map(str, (inputs, *budget["hidden"], outputs)))
    return dict(
        key=f"{kind}-mnist-{scenario}" + ("-small" if small else ""),
        label=label,
        loader=_loader(kind, scenario, SMALL_ROWS if small else None),
        learning_rate=budget["learning_rate"], fcnn_hidden=budget["hidden"],
        batch_size=BATCH, n_epochs=budget["n_epochs"], only_models=("fcnn",),
        reads_files=True, method_settings=_SETTINGS,
        method_grids=grids(kind, scenario, budget["rows"]), default_methods=METHODS,
        scenario=scenario, task_labels=labels,
        training={**_TRAINING, "scenario": scenario},
        note=NOTE.format(label=label, network=network, **budget),
    )
