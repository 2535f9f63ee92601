"""The registry of Table I's rows: methods, grids, the paper's and the reference code's numbers.

One :class:`Method` per row: the estimator (looked up lazily, so a method
whose estimator is not in this build is reported as "not available"
rather than failing), its appendix-D grid, and the numbers of the paper
and of the paper's public code. Adding a method is one entry of
:data:`METHODS`.
"""

import importlib
from dataclasses import dataclass, field

__all__ = ["LAMBDAS", "METHODS", "Method", "select_methods"]


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
        Table I's test final average accuracy (%) by column label; for the
        field's scenario columns (``split-mnist-task`` …), van de Ven and
        Tolias's published mean.
    reference : dict
        The paper's public code run on a 2-core CPU (REFERENCE-RESULTS).
    params : dict
        Constructor parameters every run sets (e.g. SGD's log loss).
    origin : {"paper", "field", "skcl", "scikit-learn"}
        A row of Table I, or a baseline the paper does not have: a method
        of the field's scenario table (online EWC), skcl's exact family, or
        scikit-learn's incremental estimators (learned by ``partial_fit``
        with no search). The table marks the last three.
    default : bool
        Whether a column runs it when no methods are named (a sequence's
        ``default_methods`` may still name it).

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
    default: bool = True

    @property
    def key(self):
        """Command-line name: lower case, e.g. "aqc", "fine-tuning", "exact-gaussian"."""
        return self.name.lower().replace(" ", "-")

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


def _row(*values, images=(), field=()):
    """Column label → value: Table I(a)'s (and 2D Iris), then Table I(b)'s, then the
    field's scenario table (:func:`_field`)."""
    labels = ["Iris SR", "Iris FCNN", "Wine SR", "Wine FCNN", "2D Iris SR", "2D Iris FCNN"]
    image_labels = ["CI MNIST", "CI CIFAR-10", "CI HAM-8", "DI MNIST", "DI CIFAR-8", "DI HAM-6"]
    pairs = [*zip(labels, values), *zip(image_labels, images), *_field(*field).items()]
    return {label: value for label, value in pairs if value is not None}


def _field(*values):
    """The scenario columns' labels → van de Ven and Tolias's published means.

    ``values``: Split MNIST task/domain/class, then Permuted MNIST's, as their
    table (MLP, 20 seeds, the field's full budget). The "(slice)" columns,
    run at a reduced budget, print the same numbers beside them.
    """
    labels = [f"{kind} MNIST {scenario}" for kind in ("Split", "Permuted")
              for scenario in ("task", "domain", "class")]
    return {f"{label}{slice_}": value for label, value in zip(labels, values)
            for slice_ in ("", " (slice)")}


_T = 100 / 3  # 33.33 %: only the last task's class is ever predicted

#: Table I's rows in the paper's order, one :class:`Method` each: Joint,
#: Fine-tuning, G-VCL, GM-VCL, G-SFSVI, EWC, SI, AQC and NC, with their
#: appendix-D grids and the numbers of the paper and of its public code
#: (and online EWC, of the field's scenario table, run when named or by
#: a scenario column);
#: then the baselines the paper does not have (``origin``): skcl's exact
#: Gaussian and least-squares classifiers and least squares on random
#: features, RanDumb's model refitted on all data seen (its joint bound),
#: scikit-learn's GaussianNB and SGDClassifier(loss="log_loss").
METHODS = (
    Method("Joint", "JointClassifier", {},
           _row(96.6667, 100.0, 91.1111, 91.1111,
                images=(95.1077, 76.2500, 43.0531, 93.4338, 96.6250, 68.3237),
                field=(99.64, 98.41, 97.93, 97.68, 97.59, 97.59)),
           _row(96.67, 100.0, 91.11, 93.89, 93.33, 93.33)),
    Method("Fine-tuning", "FineTuningClassifier", {},
           _row(_T, _T, _T, _T, images=(19.8382, 19.0400, 21.9512, 64.4789, 89.6250, 63.8068),
                field=(85.15, 57.33, 19.90, 81.79, 78.51, 17.26)),
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
                images=(73.3744, 31.9400, 30.8636, 82.9540, 94.6625, 63.8068),
                field=(85.48, 57.80, 19.90, 94.74, 94.31, 25.04)),
           _row(63.33, _T, 46.67, _T, 63.33, 66.67)),
    # Not in Table I: online EWC (Schwarz et al., 2018), a row of the field's
    # scenario table; its grid is the scenario column's (the field's λ, γ).
    Method("Online EWC", "OnlineEWCClassifier", {"alpha": LAMBDAS},
           _row(field=(85.22, 57.60, 19.90, 95.96, 94.42, 33.88)), origin="field",
           default=False),
    Method("SI", "SIClassifier", {"alpha": LAMBDAS, "damping": [0.1, 1.0, 10.0]},
           _row(_T, _T, _T, _T, images=(30.2364, 27.0500, 21.6463, 79.4063, 95.0750, 64.0020),
                field=(99.14, 63.77, 20.04, 94.75, 95.33, 29.31)),
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
    # from the sums of every row); scikit-learn's incremental estimators by
    # partial_fit, at their defaults.
    Method("Exact Gaussian", "GaussianDiscriminantClassifier", origin="skcl"),
    Method("Exact least squares", "LeastSquaresClassifier", origin="skcl"),
    # Least squares and the Gaussian on RandomFeatures' 2,000 random
    # features (RanPAC's and RanDumb's heads, M at skcl's default), and
    # RanDumb's model (random Fourier features, LDA with OAS shrinkage)
    # refitted on all the data seen: that model's joint bound (RanDumb's own
    # streaming update ends there).
    Method("RF least squares", "skcl.reproduce._at_scale:RandomFeaturesLeastSquares",
           origin="skcl"),
    Method("RF Gaussian", "skcl.reproduce._at_scale:RandomFeaturesGaussian", origin="skcl",
           default=False),
    Method("RanDumb", "skcl.reproduce._at_scale:RanDumbJoint", origin="scikit-learn"),
    Method("GaussianNB", "sklearn.naive_bayes:GaussianNB", origin="scikit-learn"),
    Method("SGD log loss", "sklearn.linear_model:SGDClassifier", params={"loss": "log_loss"},
           origin="scikit-learn"),
)


def select_methods(names=None):
    """Methods of :data:`METHODS` by (case-insensitive) key, in Table I order.

    Parameters
    ----------
    names : list of str or None
        Keys such as ``"aqc"`` or ``"exact-gaussian"`` (``Method.key``;
        ``skcl reproduce --methods`` takes the same), or None for every
        method run by default (``Method.default``).

    Returns
    -------
    list of Method

    Raises
    ------
    ValueError
        For a name that is no method's key.

    Examples
    --------
    >>> from skcl.reproduce import select_methods
    >>> [m.name for m in select_methods(["exact-gaussian", "AQC"])]
    ['AQC', 'Exact Gaussian']
    """
    if not names:
        return [m for m in METHODS if m.default]
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
