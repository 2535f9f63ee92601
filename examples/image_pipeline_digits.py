"""
A frozen feature extractor and AQC on Split Digits
==================================================

The paper's recipe for image task sequences, on scikit-learn's bundled 8×8
digits so that it runs anywhere in seconds:

1. pre-train a small CNN (the paper's ``cnn4``) on a *similar* task, here
   the digits 6 to 9 (the last two tasks of CI Split digits,
   :func:`skcl.datasets.load_ci_split_digits`);
2. freeze it, and chain it with a continual-learning classifier in a
   :class:`skcl.pipeline.Pipeline`;
3. learn the digits 0 to 5 as a class-incremental task sequence (its first
   three tasks), one ``partial_fit`` per task, without keeping old data.

AQC penalises moving away from earlier solutions with the exact Hessian of
their loss, λ/2 (θ − θ*)ᵀ H (θ − θ*); on 64 frozen features the dense
layer has only 390 parameters, so H is small. Its λ is chosen on the
validation sequence, as in the paper.
"""

import os
import time
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from skcl import AQCClassifier, FineTuningClassifier, JointClassifier
from skcl.datasets import load_ci_split_digits
from skcl.feature_extraction import PretrainedFeatureExtractor
from skcl.metrics import average_forgetting
from skcl.model_selection import SequenceGridSearch, learn_task_sequence
from skcl.pipeline import make_pipeline

# Five tasks of two digits, pixels / 16 in [0, 1], the paper's splits.
digits = load_ci_split_digits()

# %%
# Pre-train on the digits 6-9
# ---------------------------
# Every row of the last two tasks. ``image_shape`` reads each row of 64
# pixels as an 8×8 image.

X_pre = np.concatenate([X for part in ("train", "validation", "test")
                        for X, _ in digits[part][3:]])
y_pre = np.concatenate([y for part in ("train", "validation", "test")
                        for _, y in digits[part][3:]])
start = time.perf_counter()
extractor = PretrainedFeatureExtractor(
    "cnn4", image_shape=(8, 8), n_epochs=20, learning_rate=0.01, random_state=0
).fit(X_pre, y_pre)
print(f"pre-trained in {time.perf_counter() - start:.1f} s; "
      f"{extractor.get_feature_names_out().size} features per image")

# %%
# The task sequence: digits 0-5 in three tasks
# --------------------------------------------
# The first three tasks' training, validation and test sequences.

data = {part: digits[part][:3] for part in ("train", "validation", "test")}
classes = np.arange(6)
print("classes of each training task:", [np.unique(y_task).tolist() for _, y_task in data["train"]])

# %%
# One task at a time
# ------------------
# ``partial_fit`` transforms with the frozen extractor and hands the
# features to the classifier; ``classes`` names every class in advance.

settings = dict(n_epochs=20, batch_size=16, learning_rate=0.1, random_state=0)
model = make_pipeline(extractor, AQCClassifier(alpha=10, **settings))
for X_task, y_task in data["train"]:
    model.partial_fit(X_task, y_task, classes=classes)
X_test = np.concatenate([X_task for X_task, _ in data["test"]])
y_test = np.concatenate([y_task for _, y_task in data["test"]])
print(f"test accuracy on the digits 0-5 after three tasks: {model.score(X_test, y_test):.3f}")

# %%
# λ chosen on the validation sequence
# -----------------------------------
# The search transforms the sequences once through the fitted extractor
# and tries each λ of the paper's grid on the features.

search = SequenceGridSearch(
    make_pipeline(extractor, AQCClassifier(**settings)),
    {"aqcclassifier__alpha": [1, 10, 100, 1000, 10000]},
).fit(data["train"], data["validation"], classes=classes)
alpha = search.best_params_["aqcclassifier__alpha"]
for params, score in zip(search.cv_results_["params"], search.cv_results_["mean_test_score"]):
    print(f"λ = {params['aqcclassifier__alpha']:>5}: validation final average accuracy {score:.3f}")

# %%
# AQC beside the two bounds, on the test sequence
# -----------------------------------------------
# Joint training keeps all the data (the upper bound); fine-tuning keeps
# none and forgets (the lower bound).

results = {}
for name, clf in [
    ("Joint", JointClassifier(**settings)),
    ("Fine-tuning", FineTuningClassifier(**settings)),
    (f"AQC, λ = {alpha}", AQCClassifier(alpha=alpha, **settings)),
]:
    R = learn_task_sequence(make_pipeline(extractor, clf), data["train"], data["test"], classes)
    results[name] = R
    print(f"{name:<16} final average accuracy {R[:, -1].mean():.3f}, "
          f"average forgetting {average_forgetting(R):.3f}")

# %%
# The accuracy matrices
# ---------------------
# Entry (i, j): accuracy on test task i after learning task j. Fine-tuning
# forgets each task as soon as the next one arrives; AQC keeps much of it.

fig, axes = plt.subplots(1, 3, figsize=(9, 3.2), constrained_layout=True)
for ax, (name, R) in zip(axes, results.items()):
    ax.imshow(R, vmin=0, vmax=1, cmap="viridis")
    for (i, j), value in np.ndenumerate(R):
        ax.text(j, i, f"{value:.2f}", ha="center", va="center",
                color="white" if value < 0.6 else "black", fontsize=9)
    ax.set(title=name, xlabel="after task", ylabel="test task",
           xticks=range(3), yticks=range(3))
output = Path(os.environ.get("SKCL_OUTPUT_DIR", "skcl_output"))  # every example's files
output.mkdir(parents=True, exist_ok=True)
fig.savefig(output / "image_pipeline_digits.png")
print(f"figure saved to {output / 'image_pipeline_digits.png'}")
plt.show()  # a window where there is a display; nothing without one (Agg)
