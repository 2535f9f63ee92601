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

from ._backbone import BackboneFeatureExtractor
from ._extractor import PretrainedFeatureExtractor
from ._random_features import RandomFeatures

__all__ = ["BackboneFeatureExtractor", "PretrainedFeatureExtractor", "RandomFeatures"]
