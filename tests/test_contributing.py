"""The contributing guide's worked examples run as written, and do what it says.

``docs/contributing.rst`` walks through a new consolidation (online EWC)
and a new exact model (the nearest class mean); their code blocks are run
here, in order, as a reader would paste them, and checked against the
library's own class and against scikit-learn.
"""

import contextlib
import io
import re
import sys
import textwrap
import types
from pathlib import Path

import numpy as np
import pytest
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.estimator_checks import parametrize_with_checks

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "contributing.rst"


def section_blocks(title):
    """The Python code blocks of the guide's section ``title``, in order."""
    text = GUIDE.read_text()
    start = text.index(f"\n{title}\n")
    following = re.search(r"\n[^\n]+\n={3,}\n", text[start + len(title) + 2:])
    end = start + len(title) + 2 + following.start() if following else len(text)
    return [textwrap.dedent(block) for block in
            re.findall(r"\.\. code-block:: python\n\n((?:   .*\n|\n)+)", text[start:end])]


def run_blocks(title, name="contributing_guide"):
    """Run the section's blocks in one fresh module ``name`` (so that its
    classes pickle); the module's names and the printed lines of each block."""
    module = types.ModuleType(name)
    sys.modules[name] = module
    printed = []
    for block in section_blocks(title):
        with contextlib.redirect_stdout(io.StringIO()) as out:
            exec(compile(block, f"{GUIDE.name}: {title}", "exec"), vars(module))
        printed.append(out.getvalue().splitlines())
    return vars(module), printed


CONSOLIDATION = "Adding a consolidation: online EWC"
EXACT_MODEL = "Adding an exact model: the nearest class mean"
# numpy only: cheap enough to run at collection, for scikit-learn's checks.
EXACT, _ = run_blocks(EXACT_MODEL, "contributing_guide_exact_model")


def test_the_guides_sections_have_their_blocks():
    assert len(section_blocks(CONSOLIDATION)) == 3
    assert len(section_blocks(EXACT_MODEL)) == 2


def test_the_guides_consolidation_is_the_librarys_online_ewc(iris):
    import skcl

    namespace, printed = run_blocks(CONSOLIDATION)
    assert printed[-1] == ["(15,)"]  # what the guide says it prints
    guide = namespace["clf"]
    library = skcl.OnlineEWCClassifier(alpha=100, decay=0.5, learning_rate=0.1, random_state=0)
    for X, y in iris.train:
        library.partial_fit(X, y, classes=iris.classes)
    np.testing.assert_array_equal(guide.importance_, library.importance_)
    np.testing.assert_array_equal(guide.theta_, library.theta_)
    # decay declared in _parameter_constraints: refused before any work,
    # the estimator unchanged.
    before = guide.importance_.copy()
    with pytest.raises(InvalidParameterError, match="decay"):
        guide.set_params(decay=1.5).partial_fit(*iris.train[0])
    np.testing.assert_array_equal(guide.importance_, before)


def test_the_guides_exact_model_is_nearest_centroid_on_all_the_data():
    _, printed = run_blocks(EXACT_MODEL)
    assert printed[-1] == ["True", "(30, 3)"]
    # Other chunks and another order of the same rows: the same model.
    from skcl.datasets import load_ci_split_iris

    data = load_ci_split_iris()
    X_all, y_all = (np.concatenate(part) for part in zip(*data.train))
    order = np.random.default_rng(0).permutation(len(y_all))
    a, b = EXACT["NearestMeanClassifier"](), EXACT["NearestMeanClassifier"]()
    for X, y in data.train:
        a.partial_fit(X, y, classes=data.classes)
    for rows in np.array_split(order, 7):
        b.partial_fit(X_all[rows], y_all[rows], classes=data.classes)
    np.testing.assert_allclose(b.predict_proba(X_all), a.predict_proba(X_all), rtol=1e-10)


@parametrize_with_checks([EXACT["NearestMeanClassifier"]()])
def test_the_guides_exact_model_is_a_scikit_learn_estimator(estimator, check):
    check(estimator)
