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


def _check_same_features(features, sampler, c):
    """Refuse, rather than export, if ``features`` computes something else.

    A few rows of standard normal inputs: the two transforms must agree to
    ``features``' rounding, else RandomFeatures has grown a step (an input
    centre or scale, say) that this exporter does not carry.
    """
    probe = np.random.default_rng(0).standard_normal((8, features.n_features_in_))
    expected = np.asarray(features.transform(probe), dtype=np.float64)
    got = sampler.transform(probe) / c
    # The rounding to dtype, and another order of the float64 product's sum.
    tolerance = 4 * np.finfo(np.asarray(features.weights_).dtype).eps + 1e-12
    if not np.allclose(got, expected, rtol=0, atol=tolerance):
        raise NotExportableError(
            "RandomFeatures' transform is not cos(x weights_ + bias_) on these inputs, so "
            "RBFSampler with its draws would compute something else; this version of "
            "skcl.export does not know the step it adds.")
