"""
Choosing λ on a validation task sequence
========================================

No single λ (``alpha``) suits every method and data set, and ordinary
cross-validation does not apply: the unit of evaluation is a whole task
sequence, learnt in order. :class:`~skcl.model_selection.SequenceGridSearch`
follows the paper's protocol instead: every candidate learns the
*training* sequence one task at a time and is scored on the *validation*
sequence, here by its final average accuracy; the best one is then
evaluated once on the *test* sequence.

This example searches SI's λ and damping ξ on CI Split Iris (three
species, one per task) for softmax regression, with the paper's grids
(appendix D) and settings (100 epochs, batches of 16, learning rate 0.1).
"""

# %%
# Search the grid
# ---------------
import os
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from skcl import SIClassifier
from skcl.datasets import load_ci_split_iris
from skcl.metrics import final_average_accuracy
from skcl.model_selection import SequenceGridSearch

data = load_ci_split_iris()
search = SequenceGridSearch(
    SIClassifier(learning_rate=0.1, n_epochs=100, batch_size=16, random_state=0),
    {"alpha": [1, 10, 100, 1000, 10000], "damping": [0.1, 1.0, 10.0]},  # appendix D
)
search.fit(data.train, data.validation, classes=data.classes)
print("best:", search.best_params_, f"validation {search.best_score_:.3f}")
print(f"test final average accuracy: {final_average_accuracy(search, data.test):.3f}")

# %%
# ``cv_results_`` as a table
# --------------------------
# One row per candidate, as with scikit-learn's ``GridSearchCV``: the
# parameters (``param_alpha``, ``param_damping``), the validation score and
# its rank (``mean_test_score``, ``rank_test_score``: one split, the
# validation sequence, so ``std_test_score`` is 0), the accuracy on each
# validation task after the last training task
# (``task<i>_validation_accuracy``) and the time spent learning the training
# sequence (``mean_fit_time``); shortened names below. Ties share a rank;
# the search keeps the first of them.
# The first candidate's ``mean_fit_time`` includes JAX's compilation of the
# training loop, which every later candidate reuses.

results = pd.DataFrame(search.cv_results_)
short_names = {
    "param_alpha": "λ",
    "param_damping": "ξ",
    "mean_test_score": "score",
    "rank_test_score": "rank",
    **{f"task{i}_validation_accuracy": f"task {i}" for i in range(search.n_tasks_)},
    "mean_fit_time": "fit (s)",
}
table = results[list(short_names)].rename(columns=short_names)
table.sort_values("rank").round(3)

# %%
# The validation score against λ
# ------------------------------
# Too small a λ and SI forgets the first species like fine-tuning (a
# final average accuracy of 1/3: only the last task's class is predicted);
# too large and it cannot learn the new ones.

fig, ax = plt.subplots(figsize=(6, 3.5), layout="constrained")
for damping, group in results.groupby("param_damping"):
    ax.plot(group["param_alpha"].astype(float), group["mean_test_score"], "o-",
            label=f"ξ = {damping}")
ax.set_xscale("log")
ax.set_xlabel("λ (alpha)")
ax.set_ylabel("validation final average accuracy")
ax.set_title("SI on CI Split Iris, softmax regression")
legend = ax.legend()
output = Path(os.environ.get("SKCL_OUTPUT_DIR", "skcl_output"))  # every example's files
output.mkdir(parents=True, exist_ok=True)
fig.savefig(output / "sequence_search.png")
print(f"figure saved to {output / 'sequence_search.png'}")
