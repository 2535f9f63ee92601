"""RandomFeatures with random Fourier features → scikit-learn's RBFSampler.

``RandomFeatures(activation="cos")`` computes φ(x) = cos(((x − μ)/σ)W + b),
μ and σ one centre and one spread of its fitted rows (0 and 1 with a
numeric ``scale``); that is cos(xW' + b') with W' = W/σ and
b' = b − (μ/σ)·1ᵀW. ``RBFSampler`` computes √(2/M)·cos(xW' + b') with its
own ``random_weights_`` W' and ``random_offset_`` b', so with skcl's
draws folded so it gives c·φ(x), c = √(2/M): the same features times one
known number, which the linear step after it absorbs
(:mod:`._classifiers`, ``input_scale``).
"""

import numpy as np
from sklearn.kernel_approximation import RBFSampler

from ._classifiers import NotExportableError

__all__ = ["random_features_to_rbf_sampler"]


def random_features_to_rbf_sampler(features):
    """The RBFSampler with the draws of ``features``, and its factor c.

    Parameters
    ----------
    features : RandomFeatures
        Fitted, with ``activation="cos"``.

    Returns
    -------
    sampler : RBFSampler
        ``sampler.transform(X) == c * features.transform(X)`` (up to
        ``features``' rounding to its ``dtype``).
    c : float
        √(2/M), M = ``n_components``.
    """
    # The activation fitted with the draws (a later set_params acts at the next fit).
    activation = features.activation_
    if activation != "cos":
        raise NotExportableError(
            f'RandomFeatures(activation="{activation}") computes '
            f"{activation}(xW + b); no scikit-learn transformer computes that "
            "(RBFSampler is a cosine). activation=\"cos\" (random Fourier features) exports "
            "as RBFSampler.")
    spread, centre = features.input_spread_, features.input_centre_
    weights = np.asarray(features.weights_, dtype=np.float64) / spread
    offset = (np.asarray(features.bias_, dtype=np.float64)
              - centre * np.asarray(features.weights_, dtype=np.float64).sum(axis=0) / spread)
    d, m = weights.shape
    # RBFSampler's W' is N(0, 2γ): γ, which its transform never reads, is
    # recorded as half the draws' mean square.
    sampler = RBFSampler(gamma=float(np.mean(weights**2)) / 2, n_components=m)
    sampler.fit(np.zeros((1, d)))  # scikit-learn's own fitted state, then skcl's draws
    sampler.random_weights_ = weights
    sampler.random_offset_ = offset
    if hasattr(features, "feature_names_in_"):
        sampler.feature_names_in_ = features.feature_names_in_
    c = float(np.sqrt(2.0 / m))
    _check_same_features(features, sampler, c)
    return sampler, c


#: The largest rounding the folded form may add to a feature (cosines, of
#: size 1) for the export to count as computing the same features.
FOLDING_TOLERANCE = 1e-8


def _check_same_features(features, sampler, c):
    """Refuse, rather than export, if ``features`` computes something else.

    Probe rows are standard normal and around the fitted rows (μ + σz).
    RandomFeatures centres dense rows first, (x − μ)/σ, while RBFSampler
    folds μ into its offsets, b − μ·1ᵀW/σ: on rows far from 0 the two
    round differently, by at most about (D + 4)·ε times the sums of the
    products' magnitudes (Higham's bound for a length-D dot product), ε
    float64's. The transforms must agree within that bound and
    ``features``' rounding to its dtype, else RandomFeatures has grown a
    step this exporter does not carry; and the bound itself must stay
    under :data:`FOLDING_TOLERANCE`, else the folded offsets would lose
    the digits that make the features equal (inputs whose offset is many
    times their spread, |μ| ≫ σ).
    """
    rng = np.random.default_rng(0)
    d = features.n_features_in_
    centre, spread = features.input_centre_, features.input_spread_
    z = rng.standard_normal((16, d))
    probe = np.concatenate([z[:8], centre + spread * z[8:]])
    expected = np.asarray(features.transform(probe), dtype=np.float64)
    got = sampler.transform(probe) / c
    W = np.abs(np.asarray(features.weights_, dtype=np.float64))
    b = np.abs(np.asarray(features.bias_, dtype=np.float64))
    folded = np.abs(probe) @ np.abs(sampler.random_weights_) + np.abs(sampler.random_offset_)
    centred = np.abs((probe - centre) / spread) @ W + b
    rounding = (d + 4) * np.finfo(np.float64).eps * (folded + centred)
    if rounding.max() > FOLDING_TOLERANCE:
        raise NotExportableError(
            f"RandomFeatures was fitted on inputs centred at {centre:.3g} with spread "
            f"{spread:.3g}: RBFSampler folds that offset into its random_offset_, where it "
            f"costs digits, and its features could differ from RandomFeatures' by "
            f"{rounding.max():.1g} (more than {FOLDING_TOLERANCE:g}). Put a StandardScaler "
            "before RandomFeatures (it then sees centred inputs) and the Pipeline exports.")
    tolerance = 4 * np.finfo(np.asarray(features.weights_).dtype).eps + rounding
    if not np.all(np.abs(got - expected) <= tolerance):
        raise NotExportableError(
            "RandomFeatures' transform is not cos(x weights_ + bias_) on these inputs, so "
            "RBFSampler with its draws would compute something else; this version of "
            "skcl.export does not know the step it adds.")
