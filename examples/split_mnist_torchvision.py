"""
Split MNIST through a torchvision backbone (real data)
======================================================

A published backbone as the frozen extractor: torchvision's ResNet-18 turns
each MNIST digit into 512 features, and AQC learns one dense layer on them,
task by task, in an :class:`skcl.pipeline.Pipeline`, with λ chosen on the
validation sequence by :class:`~skcl.model_selection.SequenceGridSearch`.
Joint training on the same features is the bound AQC should come close to.

**Pointing it at real weights.** With internet, pass the weights enum:
``weights=torchvision.models.ResNet18_Weights.IMAGENET1K_V1`` (torchvision
downloads the file once into ``$TORCH_HOME``). Without internet, download
the same file elsewhere (``resnet18-f37072fd.pth``, the URL is
``ResNet18_Weights.IMAGENET1K_V1.url``), copy it over, and give its path:
``weights="/path/to/resnet18-f37072fd.pth"``, or set the environment
variable ``SKCL_BACKBONE_WEIGHTS`` to it for this script. Either way the
extractor applies the preprocessing these weights define (shorter side
resized to 256, centre crop 224×224, ImageNet's mean and standard
deviation; the grayscale digits repeated into three channels).

**The offline fallback.** Without a weights file this script runs
ResNet-18 with random weights (``weights=None``, seeded) on the 28×28
digits as they are, so that it runs in a minute on a CPU; an untrained
network's features are far worse, so read its accuracies as a smoke test
of the pipeline, not as what a backbone gives.

A subset of each task (1,000 training, 500 validation and 500 test images
per task) keeps the CPU time short; with ImageNet preprocessing a GPU
(``device="auto"`` picks it) or patience is needed for the full data. The
features are cached in ``skcl_output/feature_cache/`` (``memory=``; the
folder ``$SKCL_OUTPUT_DIR`` names in place of ``skcl_output``): a rerun, or
another method on the same images, reads them instead of running the
network again.

Needs torch and torchvision (``pip install "skcl[torch]"``) and the MNIST
files in torchvision's layout in the folder named by ``SKCL_DATA_DIR``.
The documentation's build does not run this script; on the development
machine (two CPU cores shared with other jobs, no weights file: random
weights) it printed, besides the extractor's progress::

    weights: random (weights=None); preprocessing: {'resize_size': None, 'crop_size': None, 'mean': None, 'std': None, 'interpolation': 'bilinear', 'to_rgb': True}
    CI Split MNIST, Joint: no hyperparameter, test 85.52 % (316 s)
    CI Split MNIST, AQC: {'clf__alpha': 100}, test 49.44 % (444 s)
    AQC (λ = 100) after 5 tasks: test 49.44 %

The first search spent most of its 316 s extracting the 15 task sets
(1,000 or 500 images each, 11 to 35 s each); every later transform read
them from the cache (0.00-0.03 s). With random weights, AQC keeps half of
the 10 digits; the published weights are what the paper's argument is
about.
"""  # noqa: E501 (a printed line, as printed)

import os
import time
from pathlib import Path

from skcl import AQCClassifier, JointClassifier
from skcl.datasets import load_ci_split_mnist
from skcl.feature_extraction import BackboneFeatureExtractor
from skcl.metrics import final_average_accuracy
from skcl.model_selection import SequenceGridSearch
from skcl.pipeline import Pipeline

WEIGHTS = os.environ.get("SKCL_BACKBONE_WEIGHTS")  # a local copy of published weights
N_TRAIN, N_EVAL = 1000, 500  # images per task
SETTINGS = dict(n_epochs=20, batch_size=64, learning_rate=0.01, random_state=0)
OUTPUT = Path(os.environ.get("SKCL_OUTPUT_DIR", "skcl_output"))  # every example's files

# %%
# The extractor: torchvision's ResNet-18 without its classifier
# -------------------------------------------------------------

extractor = BackboneFeatureExtractor(
    "resnet18",
    weights=WEIGHTS,
    # "auto": the preprocessing of the published weights (224×224). Random
    # weights have nothing to match: the digits go in at 28×28.
    preprocess="auto" if WEIGHTS else None,
    memory=str(OUTPUT / "feature_cache"),
    verbose=1,
)
print(f"features cached in {OUTPUT / 'feature_cache'}")
data = load_ci_split_mnist()
subset = lambda tasks, n: [(X[:n], y[:n]) for X, y in tasks]  # noqa: E731
train = subset(data.train, N_TRAIN)
validation, test = subset(data.validation, N_EVAL), subset(data.test, N_EVAL)
extractor.fit(train[0][0])  # builds the network, reads the image shape; learns nothing
print(f"weights: {WEIGHTS or 'random (weights=None)'}; preprocessing: {extractor.preprocess_}")

# %%
# AQC and joint training on the features
# --------------------------------------
# The search transforms each sequence once through the frozen extractor
# (and caches the features), then tries every λ on them.

for name, classifier, grid in [
    ("Joint", JointClassifier(**SETTINGS), {}),
    ("AQC", AQCClassifier(**SETTINGS), {"clf__alpha": [1, 10, 100, 1000]}),
]:
    start = time.perf_counter()
    model = Pipeline([("features", extractor), ("clf", classifier)])
    search = SequenceGridSearch(model, grid).fit(train, validation, classes=data.classes)
    accuracy = 100 * final_average_accuracy(search, test)
    print(f"CI Split MNIST, {name}: {search.best_params_ or 'no hyperparameter'}, "
          f"test {accuracy:.2f} % ({time.perf_counter() - start:.0f} s)")

# %%
# Task by task, without a search
# ------------------------------
# The pipeline learns one task per ``partial_fit``: the extractor only
# transforms (from the cache, now), the classifier learns.

model = Pipeline([("features", extractor), ("clf", AQCClassifier(alpha=100, **SETTINGS))])
for X, y in train:
    model.partial_fit(X, y, classes=data.classes)
print(f"AQC (λ = 100) after {len(train)} tasks: test "
      f"{100 * final_average_accuracy(model, test):.2f} %")
