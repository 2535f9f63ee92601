"""skcl classifiers as the scikit-learn linear classifiers that compute them.

Each builder takes a fitted skcl classifier and ``input_scale`` c, the
factor by which the scikit-learn model's inputs exceed the skcl model's
(√(2/M) behind an ``RBFSampler``, 1 otherwise): a linear score
w·x + b of the skcl inputs x is (w/c)·(c x) + b, so the coefficients are
divided by c and nothing else changes. Nothing is refitted: the
scikit-learn estimator's fitted attributes are set from the skcl model's,
and its parameters are its defaults (fitting it again would fit
scikit-learn's model, not continue skcl's sequence).
"""

import warnings

import numpy as np
import scipy.linalg
from sklearn.discriminant_analysis import (
    LinearDiscriminantAnalysis,
    QuadraticDiscriminantAnalysis,
)
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression, RidgeClassifier
from sklearn.neural_network import MLPClassifier

__all__ = ["NotExportableError", "gaussian_to_discriminant_analysis", "least_squares_to_ridge",
           "network_to_mlp", "softmax_to_logistic"]


class NotExportableError(ValueError):
    """No scikit-learn estimator computes what this skcl model computes.

    The message says what blocks the export and which settings would
    export; nothing is ever approximated instead. A ``ValueError``.

    Examples
    --------
    >>> from skcl import GaussianDiscriminantClassifier
    >>> from skcl.datasets import load_ci_split_wine
    >>> from skcl.export import NotExportableError, to_sklearn
    >>> data = load_ci_split_wine()
    >>> clf = GaussianDiscriminantClassifier(predictive="student_t")
    >>> for X, y in data.train:
    ...     clf = clf.partial_fit(X, y, classes=data.classes)
    >>> try:
    ...     to_sklearn(clf)
    ... except NotExportableError as error:
    ...     print(str(error)[:65])
    GaussianDiscriminantClassifier(predictive="student_t") integrates
    """


def _copy_input_attributes(source, target):
    target.n_features_in_ = source.n_features_in_
    if hasattr(source, "feature_names_in_"):
        target.feature_names_in_ = source.feature_names_in_


def _binary(coef, intercept):
    """The one score of two classes: class 1's minus class 0's."""
    return (coef[1] - coef[0])[None, :], np.array([intercept[1] - intercept[0]])


def _check_classes(estimator, name):
    if len(estimator.classes_) < 2:
        raise NotExportableError(
            f"{name} has learned one class only ({estimator.classes_[0]!r}); a scikit-learn "
            "classifier has two or more. Export it after a task with another class.")


# ------------------------------------------------------------------- Gaussian

def _gaussian_blockers(clf):
    name = type(clf).__name__
    classes, components = clf.classes_, clf.component_classes_
    if len(components) != len(np.unique(components)):
        yield (f"{name} holds {len(components)} components for {len(np.unique(components))} "
               "classes (one per (task, class) pair): a class's probability is a mixture of "
               "Gaussians, which scikit-learn's discriminant analyses (one Gaussian per "
               'class) do not compute. components="class" (or "auto" where it keeps one per '
               "class) exports.")
    missing = np.setdiff1d(classes, components)
    if len(missing):
        yield (f"{name} has declared classes with no rows yet ({missing.tolist()}): their "
               "probability is 0, which scikit-learn's discriminant analyses cannot say. Export it "
               "once every class has rows.")
    if clf.predictive != "plugin":
        yield (f'{name}(predictive="{clf.predictive}") integrates over the means and the '
               "covariance (a Student-t per class): scikit-learn's discriminant analyses "
               'compute the plug-in posterior only. predictive="plugin" exports (the fit is '
               "the same: set_params(predictive='plugin') before exporting).")


def gaussian_to_discriminant_analysis(clf, input_scale=1.0):
    """GaussianDiscriminantClassifier (one component per class, plug-in
    posterior) → LinearDiscriminantAnalysis (LogisticRegression of the same
    coefficients with two classes), or QuadraticDiscriminantAnalysis with
    one covariance per class.

    Σ comes from the fit's factors (``gaussians_``: ``center`` and
    ``covariances()``), the means and priors from the public ``means_``,
    ``priors_`` and ``component_classes_``.
    """
    _check_classes(clf, type(clf).__name__)
    blockers = list(_gaussian_blockers(clf))
    if blockers:
        raise NotExportableError(" ".join(blockers))
    # The component of each class, in the order of classes_.
    order = np.array([np.flatnonzero(clf.component_classes_ == c)[0] for c in clf.classes_])
    exported = (_qda if clf.covariance == "per_class" else _lda)(clf, order, input_scale)
    _check_same_scores(clf, exported, input_scale)
    return exported


def _check_same_scores(clf, exported, input_scale):
    """Refuse, rather than export, if the scores differ at the class means.

    ``gaussians_`` is the fit's own record, not a documented attribute: if
    its meaning changes, the export must fail here, not predict otherwise.
    The scores are compared up to a number per row (both are log joints
    up to a constant), to 1e-8 of their size.
    """
    probe = clf.means_
    ours = np.atleast_2d(clf.decision_function(probe).T).T
    theirs = np.atleast_2d(exported.decision_function(probe * input_scale).T).T
    ours, theirs = ours - ours[:, :1], theirs - theirs[:, :1]
    if not np.allclose(theirs, ours, rtol=1e-8, atol=1e-8 * np.abs(ours).max()):
        raise NotExportableError(
            f"The exported {type(exported).__name__} does not score the class means as "
            f"{type(clf).__name__} does: this version of skcl.export does not read the "
            "fitted Gaussian as it is now stored.")


def _qda(clf, order, input_scale):
    """log π_c − ½ log det Σ_c − ½(x − μ_c)ᵀΣ_c⁻¹(x − μ_c): scikit-learn's QDA
    from each class's eigendecomposition Σ_c = R_c diag(S_c) R_cᵀ (its
    ``rotations_`` and ``scalings_``), without skcl's −D/2·log 2π, which
    every class shares."""
    fit = clf.gaussians_
    d = fit.means.shape[1]
    qda = QuadraticDiscriminantAnalysis()
    qda.classes_ = clf.classes_.copy()
    qda.means_ = clf.means_[order] * input_scale
    qda.priors_ = clf.priors_[order].copy()
    # QDA scores ‖(x − μ)ᵀR S^(−1/2)‖² + Σ log S: any R, S with
    # R diag(S)⁻¹ Rᵀ = Σ⁻¹ and Σ log S = log det Σ give the same function.
    # R = W c, S = c² (W the fit's whitening, c² = det(Σ)^(1/D)) is exact
    # from skcl's factor, where an eigendecomposition of Σ would lose
    # cond(Σ)·ε.
    qda.rotations_, qda.scalings_ = [], []
    for g in order:
        c2 = np.exp(fit.log_dets[g] / d)
        qda.rotations_.append(_whitening(fit, g) * np.sqrt(c2) / input_scale)
        qda.scalings_.append(np.full(d, c2))
    _copy_input_attributes(clf, qda)
    return qda


def _lda(clf, order, input_scale):
    """Shared covariance → LinearDiscriminantAnalysis.

    log π_c + log N(x; μ_c, Σ) = x·Σ⁻¹μ_c − ½μ_cᵀΣ⁻¹μ_c + log π_c − ½xᵀΣ⁻¹x + const:
    the last two terms are the same for every class, so the linear part is
    scikit-learn's LDA (``coef_`` Σ⁻¹μ_c, ``intercept_`` −½μ_cᵀΣ⁻¹μ_c + log π_c)
    and its softmax is the same posterior; inputs are centred on the fit's
    ``center`` as skcl scores them.
    """
    fit = clf.gaussians_
    means, log_priors = clf.means_[order], np.log(clf.priors_[order])
    center = fit.center
    # Σ⁻¹(μ_c − center) through skcl's own factor: W Wᵀ = Σ⁻¹.
    whitening = _whitening(fit)
    rotated = (means - center) @ whitening
    coef = rotated @ whitening.T
    intercept = log_priors - 0.5 * (rotated**2).sum(axis=1) - coef @ center
    if len(clf.classes_) == 2:
        return _binary_logistic(clf, *_binary(coef, intercept), input_scale)
    covariance = fit.covariances()
    lda = LinearDiscriminantAnalysis(solver="lsqr")
    lda.classes_ = clf.classes_.copy()
    lda.coef_ = coef / input_scale
    lda.intercept_ = intercept
    lda.means_ = means * input_scale
    lda.priors_ = clf.priors_[order].copy()
    lda.covariance_ = covariance * input_scale**2
    _copy_input_attributes(clf, lda)
    return lda


def _binary_logistic(clf, coef, intercept, input_scale):
    """Two classes: the LogisticRegression of the one log ratio, not an LDA.

    scikit-learn's binary LDA and LogisticRegression compute the same
    ``predict``, ``decision_function`` (the log ratio s) and
    ``predict_proba`` (sigmoid of s) from the same ``coef_`` and
    ``intercept_``; skl2onnx (1.20 and before) converts a binary LDA to the
    softmax of (−s, s), the sigmoid of 2s (probabilities off by up to
    0.15 on digits), and a LogisticRegression to the sigmoid of s.
    """
    logistic = LogisticRegression(C=1.0)
    logistic.classes_ = clf.classes_.copy()
    logistic.coef_ = coef / input_scale
    logistic.intercept_ = intercept
    logistic.n_iter_ = np.array([0])
    _copy_input_attributes(clf, logistic)
    return logistic


def _whitening(fit, component=None):
    """W with Σ⁻¹ = W Wᵀ from the fit's factor: L⁻ᵀ for a Cholesky factor L."""
    factor, triangular = ((fit.factors, fit.triangular) if component is None
                          else (fit.factors[component], fit.triangular[component]))
    if triangular:
        identity = np.eye(len(factor))
        return scipy.linalg.solve_triangular(factor, identity, lower=True).T
    return factor


# -------------------------------------------------------------- least squares

def least_squares_to_ridge(clf, input_scale=1.0):
    """LeastSquaresClassifier (ridge scores read as they are) → RidgeClassifier.

    The same ``coef_`` and ``intercept_``: ``decision_function`` and
    ``predict`` are the ridge's. RidgeClassifier has no ``predict_proba``:
    the skcl model's probabilities (a calibration of the scores from the
    stored sums) are not carried.
    """
    name = type(clf).__name__
    _check_classes(clf, name)
    if clf.probabilities == "discriminant":
        raise NotExportableError(
            f'{name}(probabilities="discriminant") predicts by a discriminant analysis of '
            "the ridge scores, not by the highest score, which RidgeClassifier computes. "
            'probabilities="scores" or "ranked" exports (the fit is the same).')
    # A fit on one row per class sets scikit-learn's own label encoding;
    # the coefficients are then replaced by skcl's.
    ridge = RidgeClassifier(alpha=float(clf.alpha_))
    rows = np.zeros((len(clf.classes_), clf.n_features_in_))
    ridge.fit(rows, clf.classes_)
    ridge.coef_ = clf.coef_ / input_scale
    ridge.intercept_ = np.asarray(clf.intercept_, dtype=np.float64).copy()
    _copy_input_attributes(clf, ridge)
    return ridge


# ---------------------------------------------------------- gradient-trained

#: The methods whose prediction is the network's softmax at θ* (with the
#: predictive "map" where they have one).
SOFTMAX_METHODS = ("AQCClassifier", "EWCClassifier", "OnlineEWCClassifier", "SIClassifier",
                   "NCClassifier", "JointClassifier", "FineTuningClassifier")
VARIATIONAL_METHODS = ("GVCLClassifier", "GMVCLClassifier", "GSFSVIClassifier")


def softmax_to_logistic(clf, input_scale=1.0):
    """Softmax (or logistic) regression from any MAP method → LogisticRegression.

    The logits x W + b are ``decision_function``'s; LogisticRegression's
    softmax of them (sigmoid of the one logit with two classes) is
    ``predict_proba``'s. A network with hidden layers goes to
    :func:`network_to_mlp`.
    """
    name = type(clf).__name__
    if name in VARIATIONAL_METHODS:
        raise NotExportableError(
            f"{name} predicts the average of {clf.n_predict_samples} softmax regressions "
            "drawn from its posterior, which no single scikit-learn classifier computes. "
            "The MAP methods (AQC, EWC, online EWC, SI, NC, joint, fine-tuning) without a "
            "hidden layer export as LogisticRegression.")
    predictive = getattr(clf, "predictive", "map")
    if predictive != "map":
        raise NotExportableError(
            f'{name}(predictive="{predictive}") integrates the softmax over the Laplace '
            "posterior (per-row variances of the logits), which LogisticRegression does not "
            "compute. predictive=\"map\" exports (the fit is the same: set_params("
            "predictive='map') before exporting).")
    if len(clf.coefs_) > 1:
        return network_to_mlp(clf, input_scale)
    _check_classes(clf, name)
    W, b = np.asarray(clf.coefs_[0], np.float64), np.asarray(clf.intercepts_[0], np.float64)
    n_classes = len(clf.classes_)
    coef, intercept = W.T[:n_classes], b[:n_classes]  # without the unseen classes' output
    if n_classes == 2 and len(coef) == 2:  # a softmax over two (grown) classes
        coef, intercept = _binary(coef, intercept)
    logistic = LogisticRegression(C=1.0)
    logistic.classes_ = clf.classes_.copy()
    logistic.coef_ = coef / input_scale
    logistic.intercept_ = intercept.copy()
    logistic.n_iter_ = np.array([clf.n_iter_])
    _copy_input_attributes(clf, logistic)
    return logistic


#: The hidden units scikit-learn's MLPClassifier computes, by skcl's names (the same).
MLP_ACTIVATIONS = ("relu", "tanh", "logistic", "identity")


def network_to_mlp(clf, input_scale=1.0):
    """A MAP method's network with hidden layers → MLPClassifier.

    Only for the activations MLPClassifier has (relu, tanh, logistic,
    identity); swish, skcl's default, has none. The weights are skcl's,
    the first layer's divided by ``input_scale``; the output layer keeps
    the known classes' columns (without the unseen classes' output), and
    one logit, the difference of two, for two classes.
    """
    name = type(clf).__name__
    activation, hidden = clf.network_.activation, tuple(clf.network_.hidden_layer_sizes)
    if activation not in MLP_ACTIVATIONS:
        raise NotExportableError(
            f"{name}(hidden_layer_sizes={hidden}) has {activation} "
            "hidden units, which no scikit-learn classifier computes (MLPClassifier has "
            "relu, tanh, logistic and identity). A network learned with activation='relu', "
            "'tanh', 'logistic' or 'identity' exports as MLPClassifier, softmax regression "
            "(hidden_layer_sizes=()) as LogisticRegression.")
    _check_classes(clf, name)
    coefs = [np.asarray(W, np.float64) for W in clf.coefs_]
    intercepts = [np.asarray(b, np.float64) for b in clf.intercepts_]
    coefs[0] = coefs[0] / input_scale
    n_classes = len(clf.classes_)
    W, b = coefs[-1][:, :n_classes], intercepts[-1][:n_classes]  # without the unseen output
    if n_classes == 2 and W.shape[1] == 2:  # a softmax over two (grown) classes
        W, b = (W[:, 1] - W[:, 0])[:, None], b[1:] - b[:1]
    coefs[-1], intercepts[-1] = W, b
    # One step on one row per class sets scikit-learn's own label encoding
    # and output activation; the weights are then replaced by skcl's.
    mlp = MLPClassifier(hidden_layer_sizes=hidden, activation=activation, random_state=0)
    rows = np.zeros((n_classes, clf.n_features_in_))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        mlp.partial_fit(rows, clf.classes_, classes=clf.classes_)
    mlp.coefs_, mlp.intercepts_ = coefs, intercepts
    # That step's Adam moments are not skcl's (and not a type skops trusts);
    # a later partial_fit of scikit-learn's starts a fresh optimiser.
    del mlp._optimizer
    mlp.n_iter_ = int(clf.n_iter_)
    _copy_input_attributes(clf, mlp)
    return mlp
