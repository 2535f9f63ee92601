"""Frozen pre-trained feature extractors for image task sequences.

AQC and NC scale with the square of the number of parameters, so the paper
learns image task sequences with one dense layer on the features of a CNN
pre-trained on a similar task and then frozen (section IV).
:class:`PretrainedFeatureExtractor` is that CNN as a scikit-learn
transformer; chain it with a classifier in :class:`skcl.pipeline.Pipeline`.
:class:`BackboneFeatureExtractor` runs a published backbone (any torchvision
model with its weights) or your own JAX or torch network instead, frozen,
with its features cached on disk. :class:`RandomFeatures` is a seeded
random projection and nonlinearity, fixed once drawn, for the exact
classifiers (e.g. a least-squares head on random ReLU features).
"""

from .._utils.lazy import lazy_exports

# Imported on first use: RandomFeatures in front of an exact classifier
# needs neither JAX nor torch, which the two extractors load.
_LAZY = {
    "BackboneFeatureExtractor": "._backbone",
    "PretrainedFeatureExtractor": "._extractor",
    "RandomFeatures": "._random_features",
}

__all__ = ["BackboneFeatureExtractor", "PretrainedFeatureExtractor", "RandomFeatures"]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
