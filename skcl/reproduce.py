"""The paper's experiments: Table I's task sequences, methods and grids.

The protocol (paper, section IV and appendix D): for each method, every
hyperparameter setting of its grid learns the training task sequence and
is scored by final average accuracy on the validation sequence; the best
one is evaluated by final average accuracy on the test sequence.

Classical sequences (Table I(a)) learn on the raw features with softmax
regression (SR) or the paper's FCNN. Image sequences (Table I(b)) first
pre-train a :class:`~skcl.feature_extraction.PretrainedFeatureExtractor`
on a similar task, freeze it, and learn the sequence with one dense layer
on its features; :data:`SEQUENCES` names the paper's pre-training task of
each and the offline stand-ins (:data:`PRETRAINING`).

:data:`METHODS` is the registry of Table I's rows: the estimator (looked
up lazily in :mod:`skcl`, so a method whose estimator is not in this build
is reported as "not available" rather than failing), its grid from
appendix D, and the numbers of the paper and of the paper's public code.
:func:`reproduce` runs it; ``skcl reproduce`` is its command line.

Besides the test final average accuracy, each method's row reports the
average forgetting on the test sequence, and the log loss and expected
calibration error of every test task after the last one. Progress goes to
the :mod:`logging` logger ``skcl.reproduce`` (INFO), unless a ``log``
callable is given; ``skcl reproduce`` shows it.

The paper reports one run (one seed) per cell. On sequences this small the
seed alone moves a cell by whole classes, so ``n_seeds`` repeats the whole
protocol (grid on validation, best candidate on test) for consecutive
seeds; :func:`summarize` gives each cell's mean, sample standard deviation
and range over them, and how many seeds reach the paper's number.
"""

import csv
import importlib
import json
import logging
import numbers
import os
import platform
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import numpy as np
from sklearn.base import clone
from sklearn.metrics import log_loss

from . import datasets
from ._base import SingleClassTaskWarning
from .metrics import average_forgetting, expected_calibration_error, task_accuracies, task_scores
from .model_selection import SequenceGridSearch, learn_task_sequence
from .model_selection._sequence import is_skcl_classifier
from .pipeline import make_pipeline

logger = logging.getLogger("skcl.reproduce")


def _say(log, message, **extra):
    """One progress line: to ``log`` when given, else to the logger at INFO."""
    if log is not None:
        log(message)
    else:
        logger.info(message, extra=extra)

__all__ = [
    "METHODS",
    "SEQUENCES",
    "GROUPS",
    "PRETRAINING",
    "Method",
    "Pretraining",
    "TaskSequence",
    "columns_for",
    "environment",
    "environment_line",
    "format_table",
    "pretrained_extractor",
    "reproduce",
    "run_column",
    "summarize",
    "write_results",
]

#: λ's grid for EWC, SI, AQC and NC (appendix D).
LAMBDAS = [1, 10, 100, 1000, 10000]


@dataclass(frozen=True)
class Method:
    """One row of Table I.

    Attributes
    ----------
    name : str
        The paper's name, e.g. "AQC".
    estimator : str or class
        Name of the estimator class in :mod:`skcl` (or "module:Class"),
        resolved lazily by :meth:`resolve`.
    param_grid : dict
        The appendix-D grid (``{}``: no hyperparameter to tune).
    paper : dict
        Table I(a)'s test final average accuracy (%) by column label.
    reference : dict
        The paper's public code run on a 2-core CPU (REFERENCE-RESULTS).
    params : dict
        Constructor parameters every run sets (e.g. SGD's log loss).
    origin : {"paper", "skcl", "scikit-learn"}
        A row of Table I, or a baseline the paper does not have: skcl's
        exact family, or scikit-learn's incremental estimators (learned by
        ``partial_fit`` with no search). The table marks the last two.

    Examples
    --------
    >>> from skcl.reproduce import METHODS
    >>> aqc = next(m for m in METHODS if m.name == "AQC")
    >>> aqc.key, aqc.param_grid
    ('aqc', {'alpha': [1, 10, 100, 1000, 10000]})
    >>> aqc.resolve().__name__
    'AQCClassifier'
    >>> aqc.paper["Iris SR"]
    66.6667
    """

    name: str
    estimator: str
    param_grid: dict = field(default_factory=dict)
    paper: dict = field(default_factory=dict)
    reference: dict = field(default_factory=dict)
    params: dict = field(default_factory=dict)
    origin: str = "paper"

    @property
    def key(self):
        """Command-line name: lower case, e.g. "aqc", "fine-tuning", "exact-gaussian"."""
        return self.name.lower().replace(" ", "-")

    @property
    def label(self):
        """The name in a table: marked † for skcl's baselines, ‡ for scikit-learn's."""
        return self.name + {"paper": "", "skcl": " †", "scikit-learn": " ‡"}[self.origin]

    def resolve(self):
        """The estimator class, or None when this build of skcl lacks it.

        ``estimator`` may be a class, a name in :mod:`skcl`, or an import
        path "package.module:Class".
        """
        if isinstance(self.estimator, type):
            return self.estimator
        module_name, _, name = self.estimator.rpartition(":")
        try:
            module = importlib.import_module(module_name or "skcl")
        except ImportError:
            return None
        return getattr(module, name, None)


def _row(*values, images=()):
    """Column label → value: Table I(a)'s (and 2D Iris), then Table I(b)'s."""
    labels = ["Iris SR", "Iris FCNN", "Wine SR", "Wine FCNN", "2D Iris SR", "2D Iris FCNN"]
    image_labels = ["CI MNIST", "CI CIFAR-10", "CI HAM-8", "DI MNIST", "DI CIFAR-8", "DI HAM-6"]
    pairs = [*zip(labels, values), *zip(image_labels, images)]
    return {label: value for label, value in pairs if value is not None}


_T = 100 / 3  # 33.33 %: only the last task's class is ever predicted

#: Table I's rows in the paper's order, one :class:`Method` each: Joint,
#: Fine-tuning, G-VCL, GM-VCL, G-SFSVI, EWC, SI, AQC and NC, with their
#: appendix-D grids and the numbers of the paper and of its public code;
#: then the baselines the paper does not have (``origin``): skcl's exact
#: Gaussian and least-squares classifiers, scikit-learn's GaussianNB and
#: SGDClassifier(loss="log_loss").
METHODS = (
    Method("Joint", "JointClassifier", {},
           _row(96.6667, 100.0, 91.1111, 91.1111,
                images=(95.1077, 76.2500, 43.0531, 93.4338, 96.6250, 68.3237)),
           _row(96.67, 100.0, 91.11, 93.89, 93.33, 93.33)),
    Method("Fine-tuning", "FineTuningClassifier", {},
           _row(_T, _T, _T, _T, images=(19.8382, 19.0400, 21.9512, 64.4789, 89.6250, 63.8068)),
           _row(_T, _T, _T, _T, _T, _T)),
    Method("G-VCL", "GVCLClassifier", {},
           _row(_T, _T, _T, _T, images=(25.8657, 19.0100, 21.6463, 80.1092, 92.9000, 63.3071)),
           _row(_T, _T, _T, _T, _T, _T)),
    Method("GM-VCL", "GMVCLClassifier", {},
           _row(_T, _T, _T, _T, images=(25.2141, 18.9800, 21.0366, 77.3996, 92.6000, 63.6112)),
           _row(_T, _T, _T, _T, _T, _T)),
    Method("G-SFSVI", "GSFSVIClassifier", {},
           _row(66.6667, _T, _T, _T,
                images=(51.1918, 32.8000, 34.6563, 72.5471, 91.2375, 63.3381)),
           _row(66.67, _T, _T, _T, 66.67, 66.67)),
    Method("EWC", "EWCClassifier", {"alpha": LAMBDAS},
           _row(63.3333, _T, 46.6667, _T,
                images=(73.3744, 31.9400, 30.8636, 82.9540, 94.6625, 63.8068)),
           _row(63.33, _T, 46.67, _T, 63.33, 66.67)),
    Method("SI", "SIClassifier", {"alpha": LAMBDAS, "damping": [0.1, 1.0, 10.0]},
           _row(_T, _T, _T, _T, images=(30.2364, 27.0500, 21.6463, 79.4063, 95.0750, 64.0020)),
           _row(_T, _T, _T, _T, _T, 66.67)),
    Method("AQC", "AQCClassifier", {"alpha": LAMBDAS},
           _row(66.6667, 63.3333, 49.6032, 33.3333,
                images=(92.5394, 61.3100, 41.6660, 90.9951, 96.2000, 66.1442)),
           _row(66.67, 66.67, 49.60, _T, 66.67, 43.33)),
    Method("NC", "NCClassifier", {"alpha": LAMBDAS, "radius": [1.0, 10.0, 100.0]},
           _row(93.3333, 63.3333, 62.6984, 48.2540,
                images=(77.5334, 40.2500, 24.1040, 89.9168, 93.8000, 62.2400)),
           _row(93.33, 50.0, 58.41, 40.56, 86.67, 90.0)),
    # Not in the paper: what a practitioner would try first. The exact
    # family keeps L_{t-1} exactly (no grid: its one hyperparameter comes
    # from held-out sums); scikit-learn's incremental estimators by
    # partial_fit, at their defaults.
    Method("Exact Gaussian", "GaussianDiscriminantClassifier", origin="skcl"),
    Method("Exact least squares", "LeastSquaresClassifier", origin="skcl"),
    Method("GaussianNB", "sklearn.naive_bayes:GaussianNB", origin="scikit-learn"),
    Method("SGD log loss", "sklearn.linear_model:SGDClassifier", params={"loss": "log_loss"},
           origin="scikit-learn"),
)


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
        Pretraining("emnist-letters", "EMNIST Letters", datasets.load_emnist_letters, "cnn4", 0.01),
        Pretraining("fashion-mnist", "Fashion-MNIST", datasets.load_fashion_mnist, "cnn4", 0.01),
        Pretraining("mnist", "MNIST", datasets.load_mnist, "cnn4", 0.01),
        Pretraining("cifar-100", "CIFAR-100", datasets.load_cifar100, "gn_resnet18", 0.001),
        Pretraining("bcn-12", "BCN-12", datasets.load_bcn12, "gn_resnet18", 0.0001),
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
        return settings


def _pixels(loader):
    """A Split-MNIST loader whose images are flattened pixels in [0, 1].

    For a network learned from scratch on the pixels (no extractor): each
    28×28 uint8 image becomes 784 float32 features.
    """
    def load(root=None, *, download=False):
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
        TaskSequence("ci-split-iris", "Iris", datasets.load_ci_split_iris, 0.1, (4,)),
        TaskSequence("ci-split-wine", "Wine", datasets.load_ci_split_wine, 0.01, (16,)),
        TaskSequence("ci-split-2d-iris", "2D Iris", datasets.load_ci_split_2d_iris, 0.1, (4,)),
        _image("ci-split-mnist", "CI MNIST", datasets.load_ci_split_mnist, 0.01,
               ("emnist-letters", "fashion-mnist", "mnist")),
        _image("di-split-mnist", "DI MNIST", datasets.load_di_split_mnist, 0.01,
               ("emnist-letters", "fashion-mnist", "mnist")),
        _image("ci-split-cifar10", "CI CIFAR-10", datasets.load_ci_split_cifar10, 0.01,
               ("cifar-100",)),
        _image("di-split-cifar8", "DI CIFAR-8", datasets.load_di_split_cifar8, 0.01,
               ("cifar-100",)),
        _image("ci-split-ham8", "CI HAM-8", datasets.load_ci_split_ham8, 0.001, ("bcn-12",)),
        _image("di-split-ham6", "DI HAM-6", datasets.load_di_split_ham6, 0.001, ("bcn-12",)),
        # Not in the paper: Split MNIST's mirror, for the reverse pairing.
        _image("ci-split-fashion-mnist", "CI Fashion-MNIST", datasets.load_ci_split_fashion_mnist,
               0.01, ("mnist", "fashion-mnist")),
        _image("di-split-fashion-mnist", "DI Fashion-MNIST", datasets.load_di_split_fashion_mnist,
               0.01, ("mnist", "fashion-mnist")),
        # Not in the paper: an MLP on the pixels, past the full Hessian's reach.
        _mlp("ci-split-mnist-mlp", "CI MNIST MLP", datasets.load_ci_split_mnist),
        _mlp("di-split-mnist-mlp", "DI MNIST MLP", datasets.load_di_split_mnist),
    ]
}

MODELS = ("sr", "fcnn")

#: Named groups of (sequence, model) columns. "classical" is Table I(a),
#: "images" Table I(b); "mnist-mlp" an MLP on Split MNIST's pixels (not in
#: the paper).
GROUPS = {
    "classical": [("ci-split-iris", "sr"), ("ci-split-iris", "fcnn"),
                  ("ci-split-wine", "sr"), ("ci-split-wine", "fcnn")],
    "mnist": [("ci-split-mnist", "sr"), ("di-split-mnist", "sr")],
    "fashion-mnist": [("ci-split-fashion-mnist", "sr"), ("di-split-fashion-mnist", "sr")],
    "images": [(key, "sr") for key in ("ci-split-mnist", "ci-split-cifar10", "ci-split-ham8",
                                       "di-split-mnist", "di-split-cifar8", "di-split-ham6")],
    "mnist-mlp": [("ci-split-mnist-mlp", "fcnn"), ("di-split-mnist-mlp", "fcnn")],
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


def select_methods(names=None):
    """Methods of :data:`METHODS` by (case-insensitive) name, in Table I order."""
    if not names:
        return list(METHODS)
    by_key = {m.key: m for m in METHODS}
    aliases = {"ft": "fine-tuning", "finetuning": "fine-tuning", "gvcl": "g-vcl",
               "gmvcl": "gm-vcl", "gsfsvi": "g-sfsvi"}
    wanted = set()
    for name in names:
        key = aliases.get(name.lower(), name.lower())
        if key not in by_key:
            raise ValueError(f"Unknown method {name!r}; choose from {[m.key for m in METHODS]}.")
        wanted.add(key)
    return [m for m in METHODS if m.key in wanted]


def pretrained_extractor(pretraining, *, root=None, download=False, weights=None, cache_dir=None,
                         random_state=0, log=None):
    """The frozen feature extractor of an image sequence, pre-trained once.

    In order: the ``weights`` file if given; else the cached weights in
    ``cache_dir`` from an earlier run with the same settings; else the
    extractor is pre-trained on the pre-training task's training split
    (appendix C's settings) and, with ``cache_dir``, saved there.

    Parameters
    ----------
    pretraining : str
        A key of :data:`PRETRAINING`, e.g. "fashion-mnist".
    root : str or path-like, default=None
        Data folder of the image loaders (see
        :func:`skcl.datasets.get_data_home`).
    download : bool, default=False
        Let torchvision download a missing pre-training dataset.
    weights : str or path-like, default=None
        A file written by
        :meth:`~skcl.feature_extraction.PretrainedFeatureExtractor.save_weights`.
    cache_dir : str or path-like, default=None
        Folder where pre-trained weights are kept between runs.
    random_state : int, default=0
        Seed of the pre-training.
    log : callable, default=None
        Called with progress lines; None sends them to the logger
        ``skcl.reproduce``.

    Returns
    -------
    extractor : PretrainedFeatureExtractor
        Fitted.
    info : dict
        ``pretraining`` (label), ``source`` ("file", "cache" or
        "pre-trained"), ``path``, and for a fresh pre-training its time
        ``pretrain_time_s`` and ``validation_accuracy`` on the task's
        validation split.

    Examples
    --------
    Pre-train on Fashion-MNIST (files in ``$SKCL_DATA_DIR``) once; later
    calls with the same ``cache_dir`` load the weights:

    >>> from skcl.datasets import load_ci_split_mnist
    >>> from skcl.reproduce import pretrained_extractor
    >>> extractor, info = pretrained_extractor("fashion-mnist", cache_dir="weights")  # doctest: +SKIP
    >>> info["source"]  # doctest: +SKIP
    'pre-trained'
    >>> X, y = load_ci_split_mnist().train[0]  # doctest: +SKIP
    >>> extractor.transform(X).shape  # doctest: +SKIP
    (10132, 64)
    """
    from .feature_extraction import PretrainedFeatureExtractor

    if pretraining not in PRETRAINING:
        raise ValueError(
            f"Unknown pre-training task {pretraining!r}; choose from {sorted(PRETRAINING)}."
        )
    option = PRETRAINING[pretraining]
    extractor = PretrainedFeatureExtractor(
        option.architecture, n_epochs=option.n_epochs, batch_size=option.batch_size,
        learning_rate=option.learning_rate, random_state=random_state,
        verbose=int(log is not None or logger.isEnabledFor(logging.INFO)),
    )
    info = {"pretraining": option.label, "architecture": option.architecture}
    cached = None
    if cache_dir is not None:
        cached = Path(cache_dir) / (
            f"{option.key}_{option.architecture}_{option.n_epochs}epochs_seed{random_state}.npz"
        )
    if weights is not None:
        extractor.load_weights(weights)
        info.update(source="file", path=str(weights))
    elif cached is not None and cached.is_file():
        extractor.load_weights(cached)
        info.update(source="cache", path=str(cached))
    else:
        data = option.loader(root, download=download)
        _say(log, f"Pre-training {option.architecture} on {option.label} "
                  f"({len(data.train[1])} images, {option.n_epochs} epochs)")
        # BCN-12's loader gives the paper's m / n_i class weights.
        extractor.set_params(class_weight=data.get("class_weight"))
        start = time.perf_counter()
        extractor.fit(*data.train)
        info.update(
            source="pre-trained", pretrain_time_s=time.perf_counter() - start,
            validation_accuracy=100 * extractor.score(*data.validation),
        )
        if cached is not None:
            cached.parent.mkdir(parents=True, exist_ok=True)
            extractor.save_weights(cached)
            info["path"] = str(cached)
    extractor.set_params(verbose=0)
    where = info.get("path", "memory")
    extra = (f", {info['pretrain_time_s']:.0f} s, validation accuracy "
             f"{info['validation_accuracy']:.2f} %" if "pretrain_time_s" in info else "")
    _say(log, f"Extractor: {option.architecture} pre-trained on {option.label} "
              f"({info['source']}: {where}{extra})")
    return extractor, info


def _transform_tasks(extractor, tasks):
    return [(extractor.transform(X), y) for X, y in tasks]


def run_column(sequence, model, methods=None, *, n_jobs=None, random_state=0, n_seeds=1,
               log=None, verbose=0, root=None, download=False, pretraining=None,
               extractor=None, protocol="tuned"):
    """Run the protocol for one column of Table I.

    Parameters
    ----------
    sequence : str
        A key of :data:`SEQUENCES`, e.g. "ci-split-iris".
    model : {"sr", "fcnn"}
        Softmax regression or the paper's FCNN for that sequence (image
        sequences: "sr", one dense layer on the extracted features).
    methods : list of Method, default=None
        Default: all of :data:`METHODS`.
    n_jobs : int, default=None
        Parallel candidates of each grid search.
    random_state : int, default=0
        Seed of every estimator (and of the extractor's pre-training); with
        several seeds, the first.
    n_seeds : int, default=1
        Run the whole protocol (grid on validation, best candidate on test)
        once per seed ``random_state, random_state + 1, …,
        random_state + n_seeds - 1``: each seed sets every estimator's
        initialisation and minibatch order. The data, the extracted
        features and the extractor are shared by all seeds: the extractor
        is pre-trained once, with ``random_state``, and stays frozen.
        Seeds run one after another in this process, reusing its compiled
        programs (the seed is data to them, not a shape).
    log : callable, default=None
        Called with one progress line per method and seed (and, with
        several seeds, one summary line per method); None sends them to
        the logger ``skcl.reproduce``.
    verbose : int, default=0
        Passed to the search (one line per candidate when positive).
    root, download
        Where the image loaders read, and whether torchvision may
        download (image sequences only).
    pretraining : str, default=None
        Image sequences: the pre-training task, a key of
        :data:`PRETRAINING` among the sequence's ``pretraining`` (default:
        the paper's).
    extractor : tuple, default=None
        Image sequences: an ``(extractor, info)`` pair from
        :func:`pretrained_extractor` to use instead of pre-training here.
    protocol : {"tuned", "defaults"}, default="tuned"
        The paper's protocol (each method's grid chosen on the validation
        sequence), or every method at its defaults with the column's
        training settings and no search (the validation sequence is only
        scored): what a user gets without a validation sequence of future
        tasks.

    Returns
    -------
    rows : list of dict
        One per method: chosen parameters, validation and test final
        average accuracy (%), per-task test accuracies, the test average
        forgetting (percentage points, from the test accuracy matrix of
        the chosen parameters trained again with an evaluation after every
        task, ``test_accuracy_matrix``), the test log loss (nats) and
        expected calibration error (%, 10 bins) per task and averaged,
        timings, the paper's and the reference code's numbers, and the
        grid's scores (with each candidate's validation log loss and
        calibration error). Image columns also name the pre-training task.
        With several seeds, one row per method and seed, seed by seed
        within each method, each with its ``seed``; a single seed's rows
        have no ``seed`` key (its value is ``random_state``).
    models : dict
        Method name → the selected estimator, trained on the training
        sequence (for image sequences, a pipeline of the extractor and
        the classifier); with several seeds, the first seed's.

    Examples
    --------
    >>> from skcl.reproduce import METHODS, run_column
    >>> fine_tuning = [m for m in METHODS if m.name == "Fine-tuning"]
    >>> rows, models = run_column("ci-split-iris", "sr", fine_tuning)
    >>> rows[0]["method"], round(rows[0]["test"], 2)
    ('Fine-tuning', 33.33)
    >>> models["Fine-tuning"]
    FineTuningClassifier(learning_rate=0.1, random_state=0)

    Three seeds, 0, 1 and 2: one row each.

    >>> rows, _ = run_column("ci-split-iris", "sr", fine_tuning, n_seeds=3)
    >>> [(row["method"], row["seed"], round(row["test"], 2)) for row in rows]
    [('Fine-tuning', 0, 33.33), ('Fine-tuning', 1, 33.33), ('Fine-tuning', 2, 33.33)]
    """
    seq = SEQUENCES[sequence]
    label = column_label(sequence, model)
    seeds = _seeds(random_state, n_seeds)
    _check_protocol(protocol)
    several = len(seeds) > 1
    common = {"sequence": sequence, "model": model, "column": label}
    if seq.pretraining:
        pretraining = pretraining or seq.pretraining[0]
        if pretraining not in seq.pretraining:
            raise ValueError(
                f"{sequence} is pre-trained on one of {list(seq.pretraining)}, not {pretraining!r}."
            )
        if extractor is None:
            extractor = pretrained_extractor(
                pretraining, root=root, download=download, random_state=random_state, log=log
            )
        extractor, info = extractor
        data = seq.loader(root, download=download)
        start = time.perf_counter()
        # Frozen features: transformed once, shared by every method and candidate.
        train, validation, test = (
            _transform_tasks(extractor, tasks) for tasks in (data.train, data.validation, data.test)
        )
        transform_time = time.perf_counter() - start
        n_images = sum(len(y) for tasks in (data.train, data.validation, data.test)
                       for _, y in tasks)
        _say(log, f"[{label}] features of {n_images} images in {transform_time:.1f} s")
        common.update(pretraining=info["pretraining"], paper_pretraining=PRETRAINING[
            seq.pretraining[0]].label, transform_time_s=transform_time)
    else:
        data = seq.loader(root, download=download) if seq.reads_files else seq.loader()
        train, validation, test = data.train, data.validation, data.test
    rows, models = [], {}
    for method in methods or METHODS:
        base = {**common, "method": method.name}
        paper, reference = method.paper.get(label), method.reference.get(label)
        cls = method.resolve()
        if cls is None:
            for seed in seeds:
                rows.append({**base, **({"seed": seed} if several else {}), "paper": paper,
                             "reference": reference, "available": False})
            _say(log, f"[{label}] {method.name}: not available in this build of skcl",
                 skcl_method_done=True, skcl_runs=len(seeds))
            continue
        method_rows = []
        for seed in seeds:
            row = {**base, **({"seed": seed} if several else {}), "paper": paper,
                   "reference": reference}
            with warnings.catch_warnings():
                # The protocol runs one-class tasks on purpose (CI Split Iris).
                warnings.simplefilter("ignore", SingleClassTaskWarning)
                best, search = _run_method(row, cls, method, seq, model, seed, data.classes,
                                           (train, validation, test), n_jobs=n_jobs,
                                           verbose=verbose, protocol=protocol)
            method_rows.append(row)
            if method.name not in models:  # the first seed's
                models[method.name] = make_pipeline(extractor, best) if seq.pretraining else best
            shown = "–" if paper is None else f"{paper:.2f}"
            _say(
                log,
                f"[{label}] {method.name}{f' (seed {seed})' if several else ''}: "
                f"{row['n_candidates']} candidate(s), best "
                f"{search.best_params_ or '(no hyperparameters)'}, validation "
                f"{row['validation']:.2f}, test {row['test']:.2f} (paper {shown}), "
                f"forgetting {row['test_forgetting']:.2f}, log loss {row['test_log_loss']:.3f}, "
                f"ECE {row['test_ece']:.2f}, {row['search_time_s']:.1f} s",
                skcl_method_done=True,
            )
        rows += method_rows
        if several:
            (cell,) = summarize(method_rows)
            reached = "" if paper is None else f"; {_reached(cell)} ≥ paper"
            _say(log, f"[{label}] {method.name} over {len(seeds)} seeds: test "
                      f"{cell['test_mean']:.2f} ± {cell['test_sd']:.2f} (sample sd; min "
                      f"{cell['test_min']:.2f}, max {cell['test_max']:.2f}; paper "
                      f"{_fmt(paper)}{reached})")
    return rows, models


PROTOCOLS = ("tuned", "defaults")


def _check_protocol(protocol):
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {list(PROTOCOLS)}, got {protocol!r}.")


def _seeds(random_state, n_seeds):
    """The seeds ``random_state, random_state + 1, …`` of ``n_seeds`` runs."""
    if isinstance(n_seeds, bool) or not isinstance(n_seeds, numbers.Integral) or n_seeds < 1:
        raise ValueError(f"n_seeds must be a positive integer, got {n_seeds!r}.")
    if n_seeds == 1:
        return [random_state]
    if isinstance(random_state, bool) or not isinstance(random_state, numbers.Integral):
        raise ValueError(
            f"Several seeds (n_seeds={n_seeds}) count up from an integer random_state, "
            f"got {random_state!r}."
        )
    return [int(random_state) + i for i in range(n_seeds)]


def _run_method(row, cls, method, seq, model, seed, classes, sequences, *, n_jobs, verbose,
                protocol="tuned"):
    """The protocol for one method and one seed; fills ``row`` in place.

    ``protocol="defaults"`` leaves the grid out: the estimator as
    constructed, with the column's training settings, and the validation
    sequence only scored. An estimator outside skcl (scikit-learn's) is
    learned by ``partial_fit`` without a search, as a user would.

    Returns the selected estimator (fitted on the training sequence) and
    the fitted search (or its stand-in).
    """
    train, validation, test = sequences
    estimator = cls(**method.params)
    settings = dict(seq.settings(model), random_state=seed)
    fixed = seq.method_settings.get(method.name, {})
    settings.update(fixed)
    if fixed:
        row["settings"] = dict(fixed)
    skcl_estimator = is_skcl_classifier(estimator)
    if not skcl_estimator:
        # The settings are skcl's vocabulary (SGD's learning_rate is a
        # schedule's name): scikit-learn's estimators keep their defaults.
        settings = {"random_state": seed}
    # Only the settings the estimator takes: the exact family has no
    # learning rate, GaussianNB no random_state.
    accepted = estimator.get_params()
    estimator.set_params(**{k: v for k, v in settings.items() if k in accepted})
    start = time.perf_counter()
    grid = {**method.param_grid, **seq.method_grids.get(method.name, {})}
    if protocol == "defaults":
        grid = {}
    # Log loss and calibration need probabilities (least squares has none).
    probabilistic = hasattr(estimator, "predict_proba")
    scoring = {"log_loss": log_loss, "ece": expected_calibration_error} if probabilistic else {}
    if skcl_estimator:
        search = SequenceGridSearch(estimator, grid, n_jobs=n_jobs, verbose=verbose,
                                    task_scoring=scoring or None)
        search.fit(train, validation, classes=classes)
        return _evaluate(row, method, search, sequences, classes, probabilistic, protocol,
                         time.perf_counter() - start)
    # scikit-learn's warn of classes not seen yet (GaussianNB: log of a zero
    # prior), as a class-incremental sequence has: expected, so silenced.
    with np.errstate(divide="ignore"):
        search = _learned_without_search(estimator, train, validation, classes, scoring)
        return _evaluate(row, method, search, sequences, classes, probabilistic, protocol,
                         time.perf_counter() - start)


def _evaluate(row, method, search, sequences, classes, probabilistic, protocol, elapsed):
    """Score the selected estimator on the test sequence; fill ``row``.

    Returns the estimator and the search, as :func:`_run_method`.
    """
    train, _, test = sequences
    best = search.best_estimator_
    test_accuracies = task_accuracies(best, test)
    nan = [float("nan")] * len(test)
    test_log_loss = task_scores(best, test, log_loss) if probabilistic else nan
    test_ece = task_scores(best, test, expected_calibration_error) if probabilistic else nan
    # The chosen parameters again, evaluated on the test sequence after
    # every task: the test accuracy matrix, for forgetting and its figure.
    R = _accuracy_matrix(best, train, test, classes)
    results = search.cv_results_
    no_scores = [float("nan")] * len(results["params"])
    row.update(
        available=True,
        protocol=protocol,
        origin=method.origin,
        best_params=search.best_params_,
        validation=100 * search.best_score_,
        test=100 * float(np.mean(test_accuracies)),
        test_task_accuracies=[100 * float(a) for a in test_accuracies],
        test_forgetting=100 * average_forgetting(R),
        test_log_loss=float(np.mean(test_log_loss)),
        test_task_log_loss=[float(v) for v in test_log_loss],
        test_ece=100 * float(np.mean(test_ece)),
        test_task_ece=[100 * float(v) for v in test_ece],
        test_accuracy_matrix=(100 * R).tolist(),
        n_candidates=len(results["params"]),
        search_time_s=elapsed,
        grid=[
            {"params": p, "validation": 100 * float(s), "validation_log_loss": float(ll),
             "validation_ece": 100 * float(e), "fit_time_s": float(t)}
            for p, s, ll, e, t in zip(
                results["params"],
                results["mean_test_score"],
                results.get("validation_log_loss", no_scores),
                results.get("validation_ece", no_scores),
                results["mean_fit_time"],
            )
        ],
    )
    return best, search


def _accuracy_matrix(estimator, train, test, classes):
    """A fresh copy of ``estimator`` learns ``train``, evaluated on ``test`` after each task."""
    if is_skcl_classifier(estimator):
        return learn_task_sequence(clone(estimator), train, test, classes=classes)
    return _partial_fit_sequence(clone(estimator), train, classes, evaluate=test)


def _partial_fit_sequence(estimator, train, classes, evaluate=None):
    """``partial_fit`` task by task (any classifier); the accuracy matrix on ``evaluate``.

    ``R[i, j]`` is the accuracy on task ``i`` of ``evaluate`` after the
    training tasks ``0..j``, as :func:`~skcl.model_selection.learn_task_sequence`
    gives for skcl's classifiers (which it alone accepts).
    """
    R = np.full((len(train), len(train)), np.nan)
    for j, (X, y) in enumerate(train):
        estimator.partial_fit(X, y, classes=classes)
        if evaluate is not None:
            R[:, j] = task_accuracies(estimator, evaluate)
    return R


def _learned_without_search(estimator, train, validation, classes, scoring):
    """One candidate, learned by ``partial_fit``, laid out as a search's results."""
    start = time.perf_counter()
    fitted = clone(estimator)
    _partial_fit_sequence(fitted, train, classes)
    fit_time = time.perf_counter() - start
    score = float(np.mean(task_accuracies(fitted, validation)))
    results = {"params": [{}], "mean_test_score": [score], "mean_fit_time": [fit_time]}
    for name, function in scoring.items():
        results[f"validation_{name}"] = [float(np.mean(task_scores(fitted, validation,
                                                                   function)))]
    return SimpleNamespace(best_estimator_=fitted, best_params_={}, best_score_=score,
                           cv_results_=results)


def reproduce(sequence, model="both", methods=None, *, n_jobs=None, random_state=0, n_seeds=1,
              log=None, verbose=0, root=None, download=False, pretraining=None,
              extractor_weights=None, cache_dir=None, protocol="tuned"):
    """Run every column of ``sequence`` (see :func:`columns_for`).

    Image sequences pre-train their extractor once per pre-training task
    (or load ``extractor_weights``, or the weights cached in
    ``cache_dir`` by an earlier run) and share it between columns.

    With ``n_seeds`` > 1 every column runs the protocol for the seeds
    ``random_state, …, random_state + n_seeds - 1`` (see
    :func:`run_column`); the extractors are pre-trained once, with
    ``random_state``, and shared by every seed. ``protocol`` is
    :func:`run_column`'s.

    Returns
    -------
    rows : list of dict
        As :func:`run_column`, all columns.
    models : dict
        (sequence, model) → {method name → selected estimator} (with
        several seeds, the first seed's).

    Examples
    --------
    >>> from skcl.reproduce import METHODS, format_table, reproduce
    >>> references = [m for m in METHODS if m.name in ("Joint", "Fine-tuning")]
    >>> rows, models = reproduce("ci-split-iris", "sr", references)
    >>> print(format_table(rows))
    Test final average accuracy (%): ours / paper's Table I / paper's code on 2 cores
    method              Iris SR
                   ours / paper / ref
    Joint        96.67 / 96.67 / 96.67
    Fine-tuning  33.33 / 33.33 / 33.33
    """
    columns = columns_for(sequence, model)
    keys = {}  # image column → its pre-training task
    for seq, _ in columns:
        options = SEQUENCES[seq].pretraining
        if options:
            keys[seq] = pretraining if pretraining in options else options[0]
    if pretraining is not None and pretraining not in keys.values():
        raise ValueError(
            f"No task sequence of {sequence!r} is pre-trained on {pretraining!r}; they take "
            f"{sorted({o for seq, _ in columns for o in SEQUENCES[seq].pretraining})}."
        )
    if extractor_weights is not None and len(set(keys.values())) != 1:
        raise ValueError(
            "extractor_weights needs image sequences that share one pre-training task; "
            f"{sequence!r} uses {sorted(set(keys.values())) or 'none'}."
        )
    _seeds(random_state, n_seeds)  # a bad count fails before any work
    _check_protocol(protocol)
    rows, models, extractors = [], {}, {}
    for seq, mod in columns:
        extractor = None
        if seq in keys:
            key = keys[seq]
            if key not in extractors:
                extractors[key] = pretrained_extractor(
                    key, root=root, download=download, weights=extractor_weights,
                    cache_dir=cache_dir, random_state=random_state, log=log,
                )
            extractor = extractors[key]
        column_rows, column_models = run_column(
            seq, mod, methods, n_jobs=n_jobs, random_state=random_state, n_seeds=n_seeds,
            log=log, verbose=verbose, root=root, download=download, extractor=extractor,
            protocol=protocol,
        )
        rows += column_rows
        models[seq, mod] = column_models
    return rows, models


def _fmt(value):
    return "–" if value is None else f"{value:.2f}"


#: Table I's numbers are rounded (to 4 decimals); ours are exact fractions.
#: A seed "reaches" the paper's number when it is at most this far below.
_REACH_TOLERANCE = 1e-3


def _several_seeds(rows):
    """Whether ``rows`` hold several seeds' runs (rows with a ``seed``)."""
    return any("seed" in row for row in rows)


def _reached(cell):
    return f"{cell['n_reach_paper']}/{cell['n_seeds']}"


def summarize(rows):
    """Each cell (column × method) over its seeds.

    Parameters
    ----------
    rows : list of dict
        As returned by :func:`run_column` or :func:`reproduce`, one row
        per column, method and seed.

    Returns
    -------
    list of dict
        One per column and method, in the rows' order: ``sequence``,
        ``model``, ``column``, ``method``, ``available``, ``n_seeds``,
        ``seeds``; the test final average accuracy's ``test_mean``,
        ``test_sd`` (the *sample* standard deviation, ``ddof=1``; None for
        a single seed), ``test_min``, ``test_median`` and ``test_max`` (%);
        ``test_forgetting_mean``; the paper's and the reference code's
        numbers (``paper``, ``reference``); and ``n_reach_paper``, the
        number of seeds whose test accuracy reaches the paper's number
        (at least it, up to its rounding), with ``fraction_reach_paper``
        (None where the paper has no number). A method this build lacks
        has ``available`` False and no statistics.

    Examples
    --------
    >>> from skcl.reproduce import summarize
    >>> rows = [{"sequence": "ci-split-iris", "model": "sr", "column": "Iris SR",
    ...          "method": "EWC", "seed": seed, "paper": 63.3333, "reference": 63.33,
    ...          "available": True, "test": test, "test_forgetting": 50.0}
    ...         for seed, test in enumerate([33.3333, 66.6667, 66.6667])]
    >>> (cell,) = summarize(rows)
    >>> round(cell["test_mean"], 2), round(cell["test_sd"], 2), cell["n_reach_paper"]
    (55.56, 19.25, 2)
    """
    cells = {}
    for row in rows:
        cells.setdefault((row["column"], row["method"]), []).append(row)
    summary = []
    for (column, method), group in cells.items():
        first = group[0]
        cell = {
            "sequence": first["sequence"], "model": first["model"], "column": column,
            "method": method, "available": bool(first["available"]), "n_seeds": len(group),
            "seeds": [row.get("seed") for row in group],
        }
        done = [row for row in group if row["available"]]
        if done:
            tests = np.array([row["test"] for row in done])
            paper = first["paper"]
            reach = None if paper is None else int(np.sum(tests >= paper - _REACH_TOLERANCE))
            cell.update(
                test_mean=float(np.mean(tests)),
                test_sd=float(np.std(tests, ddof=1)) if len(tests) > 1 else None,
                test_min=float(np.min(tests)),
                test_median=float(np.median(tests)),
                test_max=float(np.max(tests)),
                test_forgetting_mean=float(np.mean([row["test_forgetting"] for row in done])),
                n_reach_paper=reach,
                fraction_reach_paper=None if reach is None else reach / len(tests),
            )
        cell.update(paper=first["paper"], reference=first["reference"])
        summary.append(cell)
    return summary


def _seed_range(seeds):
    seeds = sorted(set(seeds))
    if len(seeds) > 2 and seeds == list(range(seeds[0], seeds[-1] + 1)):
        return f"{seeds[0]}–{seeds[-1]}"
    return ", ".join(str(s) for s in seeds)


_ORIGIN_MARKS = {"paper": "", "skcl": " †", "scikit-learn": " ‡"}


def _label(row):
    """A row's method as the table shows it: † skcl's baselines, ‡ scikit-learn's."""
    return row["method"] + _ORIGIN_MARKS[row.get("origin") or _origin(row["method"])]


def _origin(name):
    return next((m.origin for m in METHODS if m.name == name), "paper")


def _protocol_note(rows):
    if any(row.get("protocol") == "defaults" for row in rows):
        return " at every method's defaults, no validation sequence"
    return ""


def _footnotes(rows):
    lines = []
    origins = {row.get("origin") or _origin(row["method"]) for row in rows}
    if "skcl" in origins:
        lines.append("† not in the paper: skcl's exact family, L_{t-1} kept as sums, "
                     "no grid (its one hyperparameter from held-out sums).")
    if "scikit-learn" in origins:
        lines.append("‡ not in the paper: scikit-learn's, by partial_fit at its defaults.")
    for column in dict.fromkeys(row["column"] for row in rows):
        row = next(r for r in rows if r["column"] == column)
        if "pretraining" in row:
            ours, papers = row["pretraining"], row["paper_pretraining"]
            note = "as in the paper" if ours == papers else f"the paper: {papers}"
            lines.append(f"{column}: features of an extractor pre-trained on {ours} ({note}).")
    for row in rows:
        if row.get("settings"):
            fixed = ", ".join(f"{k}={v!r}" for k, v in row["settings"].items())
            lines.append(f"{row['column']}: {row['method']} with {fixed}.")
    return list(dict.fromkeys(lines))  # once, however many seeds


def _format_seeds_table(rows):
    """One line per column × method: mean ± sd, range, paper, ref, seeds ≥ paper."""
    summary = summarize(rows)
    seeds = [row["seed"] for row in rows if "seed" in row]
    col_width = max(len("column"), *(len(c["column"]) for c in summary))
    labels = {row["method"]: _label(row) for row in rows}
    name_width = max(len("method"), *(len(labels[c["method"]]) for c in summary))
    header = ["mean ±    sd", "min", "max", "paper", "ref", "≥ paper"]
    widths = [len("100.00 ± 100.00"), 6, 6, 6, 6, 7]
    lines = [
        f"Test final average accuracy (%){_protocol_note(rows)} over {len(set(seeds))} seeds "
        f"({_seed_range(seeds)}): mean ± sample standard deviation,",
        "min and max; paper: Table I (one seed); ref: the paper's code on 2 cores (one seed);",
        "≥ paper: the seeds whose accuracy reaches the paper's number",
        "  ".join([
            "column".ljust(col_width), "method".ljust(name_width),
            *(h.rjust(w) for h, w in zip(header, widths)),
        ]),
    ]
    previous = None
    for cell in summary:
        label = "" if cell["column"] == previous else cell["column"]
        previous = cell["column"]
        if "test_mean" in cell:
            sd = "–" if cell["test_sd"] is None else f"{cell['test_sd']:.2f}"
            values = [f"{cell['test_mean']:.2f} ± {sd:>5}", _fmt(cell["test_min"]),
                      _fmt(cell["test_max"])]
            reach = "–" if cell["n_reach_paper"] is None else _reached(cell)
        else:
            values, reach = ["n/a", "", ""], ""
        values += [_fmt(cell["paper"]), _fmt(cell["reference"]), reach]
        lines.append("  ".join([
            label.ljust(col_width), labels[cell["method"]].ljust(name_width),
            *(v.rjust(w) for v, w in zip(values, widths)),
        ]).rstrip())
    return "\n".join(lines + _footnotes(rows))


def format_table(rows):
    """Table I's layout: methods down, columns across, ``ours / paper / ref``.

    ``paper`` is Table I (it has no 2D Iris column and no Fashion-MNIST
    column); ``ref`` is the paper's public code on a 2-core CPU (classical
    sequences only); "n/a" marks a method this build of skcl lacks. Image
    columns get a footnote naming the extractor's pre-training task, and
    whether it is the paper's.

    Rows of several seeds (``run_column(..., n_seeds=N)``) give one line
    per column × method instead, whatever the number of columns: the
    mean ± the sample standard deviation of the test final average
    accuracy over the seeds, its minimum and maximum, the paper's and
    the reference code's single numbers, and how many seeds reach the
    paper's number (e.g. ``3/10``); see :func:`summarize`.

    Parameters
    ----------
    rows : list of dict
        As returned by :func:`run_column` or :func:`reproduce`.

    Returns
    -------
    str

    Examples
    --------
    >>> from skcl.reproduce import METHODS, format_table, run_column
    >>> rows, _ = run_column("ci-split-iris", "sr", [m for m in METHODS if m.name == "Joint"])
    >>> print(format_table(rows))
    Test final average accuracy (%): ours / paper's Table I / paper's code on 2 cores
    method        Iris SR
             ours / paper / ref
    Joint  96.67 / 96.67 / 96.67

    Several seeds:

    >>> rows, _ = run_column("ci-split-iris", "sr", [m for m in METHODS if m.name == "Joint"],
    ...                      n_seeds=3)
    >>> print(format_table(rows))  # doctest: +NORMALIZE_WHITESPACE
    Test final average accuracy (%) over 3 seeds (0–2): mean ± sample standard deviation,
    min and max; paper: Table I (one seed); ref: the paper's code on 2 cores (one seed);
    ≥ paper: the seeds whose accuracy reaches the paper's number
    column   method     mean ±    sd     min     max   paper     ref  ≥ paper
    Iris SR  Joint    96.67 ±  0.00   96.67   96.67   96.67   96.67      3/3
    """
    if _several_seeds(rows):
        return _format_seeds_table(rows)
    columns = list(dict.fromkeys(row["column"] for row in rows))
    methods = list(dict.fromkeys(_label(row) for row in rows))
    cells = {}
    for row in rows:
        ours = _fmt(row.get("test")) if row["available"] else "n/a"
        cells[_label(row), row["column"]] = (
            f"{ours} / {_fmt(row['paper'])} / {_fmt(row['reference'])}"
        )
    subheader = "ours / paper / ref"
    width = max(len(text) for text in [subheader, *columns, *cells.values()])
    name_width = max(len("method"), *(len(m) for m in methods))
    lines = [
        f"Test final average accuracy (%){_protocol_note(rows)}: ours / paper's Table I / "
        "paper's code on 2 cores",
        "  ".join(["method".ljust(name_width)] + [c.center(width) for c in columns]),
        "  ".join([" " * name_width] + [subheader.center(width)] * len(columns)),
    ]
    for method in methods:
        lines.append("  ".join(
            [method.ljust(name_width)]
            + [cells.get((method, column), "").rjust(width) for column in columns]
        ))
    return "\n".join(lines + _footnotes(rows))


_CSV_FIELDS = [
    "sequence", "model", "column", "method", "origin", "protocol", "available", "best_params",
    "validation", "test", "test_task_accuracies", "test_forgetting", "test_log_loss", "test_task_log_loss",
    "test_ece", "test_task_ece", "paper", "reference", "n_candidates", "search_time_s",
    "pretraining", "paper_pretraining", "transform_time_s", "settings",
]


_SUMMARY_FIELDS = [
    "sequence", "model", "column", "method", "available", "n_seeds", "seeds", "test_mean",
    "test_sd", "test_min", "test_median", "test_max", "test_forgetting_mean", "paper",
    "reference", "n_reach_paper", "fraction_reach_paper",
]


def write_results(rows, output, stem, *, meta=None):
    """Write ``<stem>.csv`` (one line per column × method), ``<stem>.json``
    (everything, including every candidate's validation score and each
    method's test accuracy matrix) and ``<stem>.txt`` (the table) into the
    folder ``output``.

    Rows of several seeds keep every seed: the CSV has one line per
    column × method × seed, with a ``seed`` column after ``method``; the
    JSON's ``results`` hold every seed's row and its ``summary`` the
    statistics of :func:`summarize` (mean, sample standard deviation,
    min, median, max, seeds reaching the paper's number), which also go
    to ``<stem>_summary.csv`` (key ``"summary"`` of the returned dict).

    The CSV's columns: ``validation`` and ``test`` final average accuracy
    (%), ``test_task_accuracies`` (%, per task), ``test_forgetting``
    (average forgetting on the test sequence, percentage points),
    ``test_log_loss`` (nats, mean over tasks) and ``test_task_log_loss``,
    ``test_ece`` (expected calibration error, %, mean over tasks) and
    ``test_task_ece``, beside the paper's numbers and timings.

    Parameters
    ----------
    rows : list of dict
        As returned by :func:`run_column` or :func:`reproduce`.
    output : str or path-like
        The folder, created if missing.
    stem : str
        File name without extension, e.g. "ci-split-iris".
    meta : dict, default=None
        Extra entries of the JSON's ``meta`` (:func:`environment`, the
        versions, processor and date, is always written, and to the other
        files too).

    Returns
    -------
    dict of str → Path
        The files written, by extension.

    Examples
    --------
    >>> import tempfile
    >>> from skcl.reproduce import METHODS, run_column, write_results
    >>> rows, _ = run_column("ci-split-iris", "sr", [m for m in METHODS if m.name == "Joint"])
    >>> paths = write_results(rows, tempfile.mkdtemp(), "ci-split-iris")
    >>> sorted(path.name for path in paths.values())
    ['ci-split-iris.csv', 'ci-split-iris.json', 'ci-split-iris.txt']
    >>> rows, _ = run_column("ci-split-iris", "sr", [m for m in METHODS if m.name == "Joint"],
    ...                      n_seeds=2)
    >>> paths = write_results(rows, tempfile.mkdtemp(), "ci-split-iris")
    >>> sorted(path.name for path in paths.values())
    ['ci-split-iris.csv', 'ci-split-iris.json', 'ci-split-iris.txt', 'ci-split-iris_summary.csv']
    """
    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    paths = {ext: output / f"{stem}.{ext}" for ext in ("csv", "json", "txt")}
    several = _several_seeds(rows)
    fields = list(_CSV_FIELDS)
    if several:
        fields.insert(fields.index("method") + 1, "seed")
    env = environment()
    line = environment_line(env)
    _write_csv(paths["csv"], [{**row, "environment": line} for row in rows],
               fields + ["environment"])
    document = {"meta": {**env, **(meta or {})}, "results": rows}
    if several:
        document["summary"] = summarize(rows)
        paths["summary"] = output / f"{stem}_summary.csv"
        _write_csv(paths["summary"], document["summary"], _SUMMARY_FIELDS)
    paths["json"].write_text(json.dumps(document, indent=2, default=_json_default) + "\n")
    paths["txt"].write_text(format_table(rows) + f"\nEnvironment: {line}.\n")
    return paths


def _write_csv(path, rows, fields):
    """One line per row; lists and dicts as JSON text."""
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            flat = dict(row)
            for name in ("best_params", "test_task_accuracies", "test_task_log_loss",
                         "test_task_ece", "settings", "seeds"):
                if name in flat:
                    flat[name] = json.dumps(flat[name])
            writer.writerow(flat)


def environment():
    """The versions, processor and JAX device that produce a table.

    Every result file records it (the JSON's ``meta``, the CSV's
    ``environment`` column, the text table's last line): the same seed
    gives the same numbers on one install, and the numbers move across
    installs (the user guide's "Reproducing the paper" says how far).

    Returns
    -------
    dict
    """
    import jax
    import jaxlib
    import optax
    import scipy
    import sklearn

    import skcl

    return {
        "skcl": skcl.__version__,
        "jax": jax.__version__,
        "jaxlib": jaxlib.__version__,
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "scikit-learn": sklearn.__version__,
        "optax": optax.__version__,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpu": _cpu_name(),
        "cpu_count": os.cpu_count(),
        "jax_backend": jax.default_backend(),
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def _cpu_name():
    """The processor's model name (Linux), else what the platform says."""
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def environment_line(env):
    """:func:`environment` in one line, as the result files and the command print it."""
    return (f"skcl {env['skcl']}, jax {env['jax']} ({env['jax_backend']}), numpy {env['numpy']}, "
            f"scikit-learn {env['scikit-learn']}, optax {env['optax']}, Python {env['python']}; "
            f"{env['cpu']}, {env['cpu_count']} cores")


def _json_default(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, tuple):
        return list(value)
    raise TypeError(f"Cannot write {type(value).__name__} to JSON.")
