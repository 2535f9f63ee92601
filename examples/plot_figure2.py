"""
Figure 2: what each method predicts on CI Split 2D Iris
=======================================================

The paper's Figure 2 shows, for every method, the class probabilities a
classifier predicts over the plane of petal length and petal width after
learning the three species of CI Split 2D Iris one at a time. Each pixel
mixes red, green and blue in proportion to the probabilities of setosa,
versicolor and virginica; the dots are the training data in their class's
colour. A method that forgets paints the whole plane blue, the colour of
the last species learnt.

Every method's hyperparameters are chosen as in the paper (appendix D):
the grid setting with the best final average accuracy on the validation
sequence. To keep this example to about half a minute, NC is set to
λ = 1, r = 10, the setting its full grid (λ × r) picks for both models on
this sequence (its consolidator fits took half the example's time);
``skcl reproduce ci-split-2d-iris`` runs the full grids and writes the
same figure.
"""

# %%
# Choose and train every method, for both models
# ----------------------------------------------
# :func:`skcl.reproduce.run_column` runs the paper's protocol for one column
# of its table: each method's grid learns the training sequence, the best
# setting on the validation sequence is kept and scored on the test
# sequence. It returns one row per method and the selected, trained models.

import dataclasses
import os
from pathlib import Path

import numpy as np

from skcl.datasets import load_ci_split_2d_iris
from skcl.plotting import plot_figure2
from skcl.reproduce import METHODS, run_column

# The paper's methods (METHODS also holds the baselines it does not have,
# which need no grid): NC at λ = 1, r = 10 only (see above), every other
# method with its full grid.
methods = [
    dataclasses.replace(m, param_grid={"alpha": [1.0], "radius": [10.0]})
    if m.name == "NC"
    else m
    for m in METHODS
    if m.origin == "paper"
]

rows_by_model = {"SR": "Softmax regression", "FCNN": "Fully connected neural network"}
models = {}
print(f"{'model':<5} {'method':<11} {'chosen':<22} {'val %':>6} {'test %':>7} {'ref %':>6}")
for short, label in rows_by_model.items():
    rows, models[label] = run_column("ci-split-2d-iris", short.lower(), methods, random_state=0)
    for row in rows:
        chosen = ", ".join(f"{k}={v:g}" for k, v in row["best_params"].items()) or "-"
        print(
            f"{short:<5} {row['method']:<11} {chosen:<22} {row['validation']:6.2f} "
            f"{row['test']:7.2f} {row['reference']:6.2f}"
        )

# %%
# "ref" is the paper's public code run on a two-core CPU with its own seed
# (the paper's Table I has no 2D Iris column). On 8 validation and 10 test
# samples per task a single sample moves the score by 3.33 points, so the
# seed alone can decide whether a method keeps a species.
#
# Draw the figure
# ---------------
# :func:`skcl.plotting.plot_figure2` takes, for each row, the fitted
# classifiers by method name, and the points to draw: here every training
# task. It returns a matplotlib ``Figure``, saved here as a PNG in
# ``./skcl_output/`` (or the folder ``$SKCL_OUTPUT_DIR`` names).

data = load_ci_split_2d_iris()
X = np.concatenate([X for X, _ in data.train])
y = np.concatenate([y for _, y in data.train])
fig = plot_figure2(models, X, y, feature_names=data.feature_names)
output = Path(os.environ.get("SKCL_OUTPUT_DIR", "skcl_output"))  # every example's files
output.mkdir(parents=True, exist_ok=True)
fig.savefig(output / "figure2.png")
print(f"figure saved to {output / 'figure2.png'}")

# %%
# With this seed, fine-tuning, G-VCL and GM-VCL paint both rows blue: they
# forgot the first two species. G-SFSVI, EWC, SI and AQC keep at most
# setosa (red), sometimes only as a mix of red and blue, in one row or the
# other. NC keeps the most of all three colours, and more with softmax
# regression, whose loss is convex and easier for its consolidator to fit,
# than with the network: the paper's finding. On sequences this small a
# single seed can move a whole class; the spread over seeds is on the
# "Reproducing the paper" page of the user guide.
