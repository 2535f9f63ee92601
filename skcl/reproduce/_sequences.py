"""The task sequences of Table I and their training and pre-training settings.

One :class:`TaskSequence` per sequence (its loader, the paper's learning
rate, epochs, batch size and FCNN, and for image sequences the
pre-training tasks that may give its extractor, :data:`PRETRAINING`), and
the named groups of columns. Adding a task sequence is one entry of
:data:`SEQUENCES`: the command line reads its choices from here (which is
why the loaders are imported when first called, not with this module).
"""

from dataclasses import dataclass, field

from ._field import column as field_column
from ._registry import select_methods

__all__ = ["GROUPS", "MODELS", "PRETRAINING", "Pretraining", "SEQUENCES", "TaskSequence",
           "column_label", "columns_for", "methods_for", "pretraining_tasks"]


def _dataset(name):
    """``skcl.datasets.<name>``, imported when first called.

    ``skcl reproduce`` parses its arguments against these registries;
    importing the datasets with them (scikit-learn's among them) would add
    seconds to every ``skcl --help``.
    """
    def load(*args, **kwargs):
        from .. import datasets

        return getattr(datasets, name)(*args, **kwargs)

    load.__name__ = load.__qualname__ = name
    load.__doc__ = f"skcl.datasets.{name}, imported when first called."
    return load


@dataclass(frozen=True)
class Pretraining:
    """A pre-training task and the extractor's settings for it (appendix C).

    Attributes
    ----------
    key : str
        Command-line name, e.g. "emnist-letters".
    label : str
        E.g. "EMNIST Letters".
    loader : callable
        ``loader(root, download=...)`` → Bunch with ``train`` and
        ``validation`` (X, y) pairs (and ``class_weight`` for BCN-12).
    architecture : {"cnn4", "gn_resnet18"}
    learning_rate : float
    n_epochs, batch_size : int
        The paper: 20 epochs of minibatches of 64.

    Examples
    --------
    >>> from skcl.reproduce import PRETRAINING
    >>> fashion = PRETRAINING["fashion-mnist"]
    >>> fashion.label, fashion.architecture, fashion.learning_rate
    ('Fashion-MNIST', 'cnn4', 0.01)
    """

    key: str
    label: str
    loader: object
    architecture: str
    learning_rate: float
    n_epochs: int = 20
    batch_size: int = 64


PRETRAINING = {
    option.key: option
    for option in [
        Pretraining("emnist-letters", "EMNIST Letters", _dataset("load_emnist_letters"),
                    "cnn4", 0.01),
        Pretraining("fashion-mnist", "Fashion-MNIST", _dataset("load_fashion_mnist"), "cnn4", 0.01),
        Pretraining("mnist", "MNIST", _dataset("load_mnist"), "cnn4", 0.01),
        Pretraining("cifar-100", "CIFAR-100", _dataset("load_cifar100"), "gn_resnet18", 0.001),
        Pretraining("bcn-12", "BCN-12", _dataset("load_bcn12"), "gn_resnet18", 0.0001),
    ]
}
"""Pre-training tasks by command-line name."""


@dataclass(frozen=True)
class TaskSequence:
    """A task sequence of Table I and the paper's training settings for it.

    Attributes
    ----------
    key : str
        Command-line name, e.g. "ci-split-iris".
    label : str
        The column's label stem, e.g. "Iris" (classical) or "CI MNIST".
    loader : callable
        Returns the Bunch of ``train``, ``validation`` and ``test`` task
        sequences (image loaders take ``root`` and ``download``).
    learning_rate : float
        The paper's base learning rate for the sequence.
    fcnn_hidden : tuple of int or None
        Hidden layers of the paper's FCNN; None for image sequences, which
        learn one dense layer on extracted features.
    batch_size, n_epochs : int
    pretraining : tuple of str
        Keys of :data:`PRETRAINING` that may pre-train the extractor, the
        paper's first; empty for classical sequences.
    only_models : tuple of str or None
        The column models when not the default ("sr" and "fcnn"; "sr" on
        features), e.g. ``("fcnn",)`` for the MLP on Split MNIST's pixels.
    reads_files : bool
        Whether the loader reads the data folder (``root``, ``download``)
        although the sequence has no extractor (pixels, not features).
    method_settings : dict
        Method name → fixed estimator parameters for this sequence only,
        e.g. AQC's Kronecker-factored curvature where the paper's full
        Hessian (n_params² floats) cannot fit.
    method_grids : dict
        Method name → grid entries added to the method's own grid for this
        sequence only (searched on validation like λ), e.g. AQC's
        ``curvature_reduction`` where the paper's AQC is not defined.
    default_methods : tuple of str or None
        Keys of the methods its column runs when none are named (None:
        every method run by default), e.g. the exact family and RanDumb
        on Split MNIST's pixels, where the paper's methods would learn a
        7,850-parameter softmax regression for each λ.
    scenario : {"class", "domain", "task"}
        How its validation and test tasks are scored
        (:func:`skcl.metrics.task_accuracies`): "task" lets only each
        task's ``task_labels`` compete.
    task_labels : tuple of tuples of int or None
        Each task's labels, for ``scenario="task"``.
    training : dict
        Further estimator parameters of every method of the column that
        takes them, e.g. the field's constant learning rate and its
        ``scenario`` for the gradient methods of a scenario column.
    note : str or None
        A footnote of the printed table: where the column's "paper"
        numbers come from and its budget, when not Table I's.

    Examples
    --------
    >>> from skcl.reproduce import SEQUENCES
    >>> iris = SEQUENCES["ci-split-iris"]
    >>> iris.label, iris.settings("fcnn")
    ('Iris', {'hidden_layer_sizes': (4,), 'learning_rate': 0.1, 'batch_size': 16, 'n_epochs': 100})
    """

    key: str
    label: str
    loader: object
    learning_rate: float
    fcnn_hidden: tuple = None
    batch_size: int = 16
    n_epochs: int = 100
    pretraining: tuple = ()
    only_models: tuple = None
    reads_files: bool = False
    method_settings: dict = field(default_factory=dict)
    method_grids: dict = field(default_factory=dict)
    default_methods: tuple = None
    scenario: str = "class"
    task_labels: tuple = None
    training: dict = field(default_factory=dict)
    note: str = None

    @property
    def scoring_scenario(self):
        """``scenario`` and ``task_labels``, the keywords of skcl's scoring functions."""
        labels = self.task_labels if self.scenario == "task" else None
        return {"scenario": self.scenario, "task_labels": labels}

    @property
    def models(self):
        """The column models: "sr" and "fcnn", or "sr" alone on features."""
        if self.only_models is not None:
            return self.only_models
        return ("sr",) if self.fcnn_hidden is None else ("sr", "fcnn")

    def settings(self, model):
        """Estimator parameters for model "sr" (softmax regression) or "fcnn"."""
        settings = {
            "hidden_layer_sizes": () if model == "sr" else self.fcnn_hidden,
            "learning_rate": self.learning_rate,
            "batch_size": self.batch_size,
            "n_epochs": self.n_epochs,
        }
        if self.pretraining:
            # Appendix C: G-SFSVI's inducing points on extracted features.
            settings["inducing_bounds"] = (-1.0, 6.0)
        return {**settings, **self.training}


def _pixels(loader):
    """A Split-MNIST loader whose images are flattened pixels in [0, 1].

    For a network learned from scratch on the pixels (no extractor): each
    28×28 uint8 image becomes 784 float32 features.
    """
    def load(root=None, *, download=False):
        import numpy as np

        data = loader(root, download=download)
        for split in ("train", "validation", "test"):
            data[split] = [
                (X.reshape(len(X), -1).astype(np.float32) / 255.0, y) for X, y in data[split]
            ]
        data["DESCR"] += "\nFeatures: the 784 pixels, flattened and scaled to [0, 1]."
        return data

    load.__name__ = f"{loader.__name__}_pixels"
    load.__doc__ = f"{loader.__name__}, with flattened pixels in [0, 1]."
    return load


# The paper's AQC (a full Hessian) needs n_params² floats: 25 GB for the
# pixel MLP's 79,510 parameters. Its curvature there is Kronecker-factored,
# and whether C is summed over samples (the paper's λ) or averaged (EWC's)
# is searched with λ: after 20 epochs a confident network's summed
# curvature is small beside the prior, which the sum's λ scales alike.
_KFAC = {"AQC": {"curvature": "ggn", "structure": "kron"}}
_KFAC_GRID = {"AQC": {"curvature_reduction": ["sum", "mean"]}}


# The classical sequences have about a hundred training rows: 2,000 random
# features (a 2,000² eigendecomposition or OAS-shrunk LDA per task, seconds
# each) add nothing a few hundred do not, and would take most of the
# ci-split-iris run's time; their random-feature rows use 500.
_SMALL_RANDOM_FEATURES = {"RF least squares": {"n_components": 500},
                          "RanDumb": {"n_components": 500}}


def _mlp(key, label, loader):
    """Split MNIST's pixels, an MLP of 100 hidden units learned from scratch.

    Not in the paper: its AQC column stops at softmax regression on 64
    features (650 parameters); this one has 784·100 + 100 + 100·K + K.
    The paper's Split MNIST training settings (20 epochs, minibatches of
    64, learning rate 0.01).
    """
    return TaskSequence(key, label, _pixels(loader), 0.01, fcnn_hidden=(100,), batch_size=64,
                        n_epochs=20, only_models=("fcnn",), reads_files=True,
                        method_settings=_KFAC, method_grids=_KFAC_GRID)


#: The anchor's rows on raw pixels: the exact family alone and on
#: RandomFeatures (M = 2,000, its default), RanDumb's code path at the same
#: M, and scikit-learn's incremental baselines. Pixels share one unit:
#: no per-feature scaler fitted on a first task of two digits.
_PIXEL_METHODS = ("exact-gaussian", "exact-least-squares", "rf-least-squares", "rf-gaussian",
                  "randumb", "gaussiannb", "sgd-log-loss")
_UNSCALED = {"RF least squares": {"standardize": False}, "RF Gaussian": {"standardize": False},
             "RanDumb": {"standardize": False}}


def _pixel_column(key, label, loader):
    """Split MNIST's pixels / 255 with no extractor: the exact family against RanDumb.

    RanDumb (Prabhu et al., 2024) learns Split MNIST from its pixels with
    random Fourier features and a streaming LDA; here skcl's exact family
    at its defaults and RanDumb's code path run side by side on the same
    rows. Other methods run when named (``--methods``), as softmax
    regression on the 784 pixels with the paper's Split MNIST settings.
    """
    return TaskSequence(key, label, _pixels(loader), 0.01, batch_size=64, n_epochs=20,
                        only_models=("sr",), reads_files=True, method_settings=_UNSCALED,
                        default_methods=_PIXEL_METHODS)


#: The field's scenario columns (van de Ven and Tolias), each entry's
#: keywords from :func:`._field.column`: its network, budget and strengths.
_SCENARIO_COLUMNS = [(kind, scenario) for kind in ("split", "permuted")
                     for scenario in ("task", "domain", "class")] + [("rotated", "domain")]


def _image(key, label, loader, learning_rate, pretraining):
    return TaskSequence(key, label, loader, learning_rate, batch_size=64, n_epochs=20,
                        pretraining=pretraining)


#: Every task sequence by command-line name, one :class:`TaskSequence` each:
#: the classical ones of Table I(a) ("ci-split-iris", "ci-split-wine",
#: "ci-split-2d-iris", bundled), the image ones of Table I(b)
#: ("ci-split-mnist", "di-split-mnist", "ci-split-cifar10", "di-split-cifar8",
#: "ci-split-ham8", "di-split-ham6", learned on a frozen pre-trained
#: extractor's features) and Split Fashion-MNIST for the reverse pairing.
SEQUENCES = {
    seq.key: seq
    for seq in [
        TaskSequence("ci-split-iris", "Iris", _dataset("load_ci_split_iris"), 0.1, (4,),
                     method_settings=_SMALL_RANDOM_FEATURES),
        TaskSequence("ci-split-wine", "Wine", _dataset("load_ci_split_wine"), 0.01, (16,),
                     method_settings=_SMALL_RANDOM_FEATURES),
        TaskSequence("ci-split-2d-iris", "2D Iris", _dataset("load_ci_split_2d_iris"), 0.1, (4,),
                     method_settings=_SMALL_RANDOM_FEATURES),
        _image("ci-split-mnist", "CI MNIST", _dataset("load_ci_split_mnist"), 0.01,
               ("emnist-letters", "fashion-mnist", "mnist")),
        _image("di-split-mnist", "DI MNIST", _dataset("load_di_split_mnist"), 0.01,
               ("emnist-letters", "fashion-mnist", "mnist")),
        _image("ci-split-cifar10", "CI CIFAR-10", _dataset("load_ci_split_cifar10"), 0.01,
               ("cifar-100",)),
        _image("di-split-cifar8", "DI CIFAR-8", _dataset("load_di_split_cifar8"), 0.01,
               ("cifar-100",)),
        _image("ci-split-ham8", "CI HAM-8", _dataset("load_ci_split_ham8"), 0.001, ("bcn-12",)),
        _image("di-split-ham6", "DI HAM-6", _dataset("load_di_split_ham6"), 0.001, ("bcn-12",)),
        # Not in the paper: Split MNIST's mirror, for the reverse pairing.
        _image("ci-split-fashion-mnist", "CI Fashion-MNIST",
               _dataset("load_ci_split_fashion_mnist"),
               0.01, ("mnist", "fashion-mnist")),
        _image("di-split-fashion-mnist", "DI Fashion-MNIST",
               _dataset("load_di_split_fashion_mnist"),
               0.01, ("mnist", "fashion-mnist")),
        # Not in the paper: an MLP on the pixels, past the full Hessian's reach.
        _mlp("ci-split-mnist-mlp", "CI MNIST MLP", _dataset("load_ci_split_mnist")),
        _mlp("di-split-mnist-mlp", "DI MNIST MLP", _dataset("load_di_split_mnist")),
        # Not in the paper: RanDumb's setting, the exact family on the pixels.
        _pixel_column("ci-split-mnist-pixels", "CI MNIST pixels",
                      _dataset("load_ci_split_mnist")),
        _pixel_column("di-split-mnist-pixels", "DI MNIST pixels",
                      _dataset("load_di_split_mnist")),
        # Not in the paper: the field's three scenarios (van de Ven and Tolias).
        *[TaskSequence(**field_column(kind, scenario, small)) for small in (False, True)
          for kind, scenario in _SCENARIO_COLUMNS],
    ]
}

MODELS = ("sr", "fcnn")

#: Named groups of (sequence, model) columns. "classical" is Table I(a),
#: "images" Table I(b); "mnist-mlp" an MLP on Split MNIST's pixels and
#: "mnist-pixels" the exact family against RanDumb on them (not in the
#: paper); "scenarios" the field's seven scenario columns (Split and
#: Permuted MNIST task/domain/class, Rotated MNIST domain) and
#: "scenarios-small" the same on a slice of each task.
GROUPS = {
    "classical": [("ci-split-iris", "sr"), ("ci-split-iris", "fcnn"),
                  ("ci-split-wine", "sr"), ("ci-split-wine", "fcnn")],
    "mnist": [("ci-split-mnist", "sr"), ("di-split-mnist", "sr")],
    "fashion-mnist": [("ci-split-fashion-mnist", "sr"), ("di-split-fashion-mnist", "sr")],
    "images": [(key, "sr") for key in ("ci-split-mnist", "ci-split-cifar10", "ci-split-ham8",
                                       "di-split-mnist", "di-split-cifar8", "di-split-ham6")],
    "mnist-mlp": [("ci-split-mnist-mlp", "fcnn"), ("di-split-mnist-mlp", "fcnn")],
    "mnist-pixels": [("ci-split-mnist-pixels", "sr"), ("di-split-mnist-pixels", "sr")],
    "scenarios": [(f"{kind}-mnist-{scenario}", "fcnn") for kind, scenario in _SCENARIO_COLUMNS],
    "scenarios-small": [(f"{kind}-mnist-{scenario}-small", "fcnn")
                        for kind, scenario in _SCENARIO_COLUMNS],
}


def column_label(sequence, model):
    """E.g. "Iris SR"; a sequence of one model is its label: "CI MNIST"."""
    seq = SEQUENCES[sequence]
    return seq.label if len(seq.models) == 1 else f"{seq.label} {model.upper()}"


def columns_for(sequence, model="both"):
    """The (sequence, model) columns that ``skcl reproduce`` runs.

    Parameters
    ----------
    sequence : str
        A key of :data:`SEQUENCES` or of :data:`GROUPS` (e.g. "classical",
        Table I(a); "images", Table I(b)).
    model : {"sr", "fcnn", "both"}, default="both"
        Image sequences have the "sr" column only (one dense layer on
        the extracted features).

    Returns
    -------
    list of (str, str)
        ``(sequence, model)`` pairs, in the table's order.

    Examples
    --------
    >>> from skcl.reproduce import columns_for
    >>> columns_for("classical", "sr")
    [('ci-split-iris', 'sr'), ('ci-split-wine', 'sr')]
    >>> columns_for("ci-split-2d-iris")
    [('ci-split-2d-iris', 'sr'), ('ci-split-2d-iris', 'fcnn')]
    """
    models = MODELS if model == "both" else (model,)
    if sequence in GROUPS:
        columns = GROUPS[sequence]
    elif sequence in SEQUENCES:
        columns = [(sequence, m) for m in SEQUENCES[sequence].models]
    else:
        raise ValueError(
            f"Unknown task sequence {sequence!r}; choose from {sorted(SEQUENCES) + sorted(GROUPS)}."
        )
    return [(s, m) for s, m in columns if m in models]


def pretraining_tasks(sequence, columns, pretraining=None):
    """Each image column's pre-training task: ``pretraining`` where it may, else the paper's.

    What :func:`~skcl.reproduce.reproduce` pre-trains, and what ``skcl
    reproduce`` checks before any work.

    Parameters
    ----------
    sequence : str
        What ``columns`` were made of (for the error message).
    columns : list of (str, str)
        ``(sequence, model)`` columns, as :func:`columns_for` returns.
    pretraining : str, default=None
        A pre-training task the user asked for; None takes the paper's.

    Returns
    -------
    tasks : dict
        Sequence key → pre-training task, for the image columns only.

    Raises
    ------
    ValueError
        When ``pretraining`` is given and no column of ``sequence`` takes it.
    """
    keys = {}
    for seq, _ in columns:
        options = SEQUENCES[seq].pretraining
        if options:
            keys[seq] = pretraining if pretraining in options else options[0]
    if pretraining is not None and pretraining not in keys.values():
        raise ValueError(
            f"No task sequence of {sequence!r} is pre-trained on {pretraining!r}; they take "
            f"{sorted({o for seq, _ in columns for o in SEQUENCES[seq].pretraining})}."
        )
    return keys


def methods_for(sequence, methods=None):
    """The methods a column of ``sequence`` runs: ``methods``, or the sequence's defaults.

    Parameters
    ----------
    sequence : str
        A key of :data:`SEQUENCES`.
    methods : list of Method, default=None
        The methods asked for; None takes the sequence's
        ``default_methods``, or every method run by default.

    Returns
    -------
    list of Method

    Examples
    --------
    >>> from skcl.reproduce import methods_for
    >>> [m.name for m in methods_for("ci-split-mnist-pixels")][:4]
    ['Exact Gaussian', 'Exact least squares', 'RF least squares', 'RF Gaussian']
    """
    if methods:
        return list(methods)
    return select_methods(SEQUENCES[sequence].default_methods)
