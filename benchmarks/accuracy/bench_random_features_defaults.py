"""RandomFeatures' defaults on pixels, hashed text and tabular data together.

Each data set is a class-incremental sequence learned task by task:

    rows → RandomFeatures(M, setting, random_state=0) → exact classifier

with ``RandomFeatures`` fitted on the first task's rows (as
:class:`skcl.pipeline.Pipeline`'s first ``partial_fit`` fits it) and both
exact classifiers at their defaults (``LeastSquaresClassifier()``,
``GaussianDiscriminantClassifier()``); FAA is the mean of the tasks' test
accuracies after the last task.

Data sets (all offline):

* ``mnist``: CI Split MNIST pixels / 255 (five tasks of two digits), the
  first ``--mnist-rows`` training and test images of each task, from
  ``SKCL_DATA_DIR`` (or ``--data-dir``).
* ``scipy-text``: real text, the docstrings (up to their Examples) of six
  scipy subpackages (linalg, stats, signal, optimize, special, ndimage),
  one topic each, three tasks of two topics, every fourth document tested,
  ``HashingVectorizer(n_features=2**14)`` (CSR, about 1 % nonzero). The
  subpackage's own name is removed from the text. The documents are those
  of the installed scipy, so the figures move a little with its version.
* ``topics-text``: synthetic documents of six topics, as the issue 50
  reproducer (each word of 50–200 is with probability 0.2 one of its
  topic's 100 words, else one of 5,000 shared Zipf words), hashed the same
  way (``benchmarks._data.topic_documents``, which
  ``tests/test_random_features_scale.py`` learns too).
* ``iris``, ``wine``: ``skcl.datasets.load_ci_split_iris`` / ``_wine``
  (raw units); ``digits``: ``load_ci_split_digits`` (the bundled 8 × 8
  digits, pixels / 16, five tasks of two classes, the paper's splits).

No covertype: scikit-learn's ``fetch_covtype`` downloads it and no copy is
cached on this machine, so tabular data is Iris, Wine and digits only.

Settings (``cos`` has ``bias="uniform"``, random Fourier features):

* ``default``: ``RandomFeatures(M)``: cos, ``scale="auto"``, which is s =
  √2 on standardised rows (γ = 1/(Dσ²), ``RBFSampler(gamma="scale")``'s)
  and s = 0.3 on rows with at most 5 % nonzero entries (since issue 50).
* ``cos √2``: the default before issue 50 on every input: the rows
  standardised by the first task's scalar mean and standard deviation, then
  ``scale=√2``.
* ``cos 0.3``: the same with ``scale=0.3`` (the default's s on text, on
  every input).
* ``relu``: ``activation="relu"`` (``scale="auto"``; ReLU is positively
  homogeneous, so s does not change what the classifiers learn).
* ``cos scale=1``: ``scale=1.0`` on the raw rows (no standardisation).

Run::

    SKCL_DATA_DIR=../shared/data PYTHONPATH=. nice -n 10 \
        python benchmarks/accuracy/bench_random_features_defaults.py

(at the defaults, M = 500 and 2,000 MNIST images a task: about 65 s of
CPU, 290–345 s of wall time on 2 cores shared with other work;
``--components 2000`` for RanDumb's size). The table is in
``docs/user_guide/at_scale.rst``.
"""

import importlib
import re

import numpy as np
import scipy.sparse as sp

from benchmarks import _harness as harness
from benchmarks._data import topic_documents

SETTINGS = ["default", "cos √2", "cos 0.3", "relu", "cos scale=1"]
DATASETS = ["mnist", "scipy-text", "topics-text", "iris", "wine", "digits"]


def _split(X, y, topics_per_task, n_tasks):
    """Tasks of ``topics_per_task`` consecutive labels; every fourth row tested."""
    test = np.arange(len(y)) % 4 == 0
    task = y // topics_per_task
    train = [(X[~test & (task == t)], y[~test & (task == t)]) for t in range(n_tasks)]
    tests = [(X[test & (task == t)], y[test & (task == t)]) for t in range(n_tasks)]
    return train, tests, np.unique(y)


def _hashed(docs, y):
    from sklearn.feature_extraction.text import HashingVectorizer

    X = HashingVectorizer(n_features=2**14).transform(docs)
    return _split(X, y, 2, 3)


def scipy_text():
    docs, labels = [], []
    for topic, name in enumerate(["linalg", "stats", "signal", "optimize", "special",
                                  "ndimage"]):
        module = importlib.import_module(f"scipy.{name}")
        seen = set()
        for attribute in sorted(getattr(module, "__all__", dir(module))):
            doc = getattr(getattr(module, attribute, None), "__doc__", None)
            if not isinstance(doc, str):
                continue
            doc = re.sub(r"scipy\.\w+", " ", doc.split("Examples\n")[0])
            if len(doc.split()) < 30 or doc in seen:
                continue
            seen.add(doc)
            docs.append(doc)
            labels.append(topic)
    return _hashed(np.array(docs, dtype=object), np.array(labels))


def topics_text():
    return _hashed(*topic_documents())


def mnist(data_dir, rows):
    from skcl.datasets import load_ci_split_mnist

    data = load_ci_split_mnist(data_dir)
    train = [(X.reshape(len(X), -1)[:rows] / 255.0, y[:rows]) for X, y in data.train]
    tests = [(X.reshape(len(X), -1)[:rows] / 255.0, y[:rows]) for X, y in data.test]
    return train, tests, data.classes


def tabular(name):
    from skcl.datasets import load_ci_split_digits, load_ci_split_iris, load_ci_split_wine

    data = {"iris": load_ci_split_iris, "wine": load_ci_split_wine,
            "digits": load_ci_split_digits}[name]()
    train, tests = list(data.train), list(data.test)
    return train, tests, np.unique(np.concatenate([y for _, y in train]))


def _features(setting, m, first):
    """The transformer of a setting and the map applied to rows before it."""
    from skcl.feature_extraction import RandomFeatures

    if setting in ("cos √2", "cos 0.3"):
        dense = first.toarray() if sp.issparse(first) else np.asarray(first, dtype=float)
        centre, spread = float(dense.mean()), float(dense.std()) or 1.0
        scale = np.sqrt(2.0) if setting == "cos √2" else 0.3

        def standardise(X):
            X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=float)
            return (X - centre) / spread
        return RandomFeatures(m, scale=scale, random_state=0), standardise
    options = {"default": {}, "relu": {"activation": "relu"},
               "cos scale=1": {"scale": 1.0}}[setting]
    return RandomFeatures(m, random_state=0, **options), lambda X: X


def faa(train, tests, classes, setting, m):
    from skcl import GaussianDiscriminantClassifier, LeastSquaresClassifier

    features, before = _features(setting, m, train[0][0])
    features.fit(before(train[0][0]))
    phi_train = [(features.transform(before(X)), y) for X, y in train]
    phi_test = [(features.transform(before(X)), y) for X, y in tests]
    scores = []
    for clf in (LeastSquaresClassifier(), GaussianDiscriminantClassifier()):
        for X, y in phi_train:
            clf.partial_fit(X, y, classes=classes)
        scores.append(100 * float(np.mean([np.mean(clf.predict(X) == y)
                                           for X, y in phi_test])))
    return scores, features.scale_


def main():
    parser = harness.parser(__doc__, data=True)
    parser.add_argument("--components", type=int, default=500)
    parser.add_argument("--mnist-rows", type=int, default=2000)
    parser.add_argument("--datasets", nargs="+", default=DATASETS, choices=DATASETS)
    parser.add_argument("--settings", nargs="+", default=SETTINGS, choices=SETTINGS)
    args = parser.parse_args()
    print(harness.machine_line(extra=f"M = {args.components}"))
    table = harness.Table({"data": "", "nonzero": ".3f", **{s: "" for s in args.settings}},
                          args.csv, markdown=True,
                          title="FAA %, least squares / Gaussian (s: the spread RandomFeatures "
                                "used)\n")
    loaders = {"mnist": lambda: mnist(args.data_dir, args.mnist_rows),
               "scipy-text": scipy_text, "topics-text": topics_text,
               "iris": lambda: tabular("iris"), "wine": lambda: tabular("wine"),
               "digits": lambda: tabular("digits")}
    clock = harness.Stopwatch()
    for name in args.datasets:
        train, tests, classes = loaders[name]()
        first = train[0][0]
        nonzero = ((first.nnz if sp.issparse(first) else np.count_nonzero(first))
                   / (first.shape[0] * first.shape[1]))
        cells = []
        for setting in args.settings:
            (ls, gauss), s = faa(train, tests, classes, setting, args.components)
            cells.append(f"{ls:.2f} / {gauss:.2f}" + (f" (s {s:.2g})" if setting == "default"
                                                      else ""))
        table.row(name, nonzero, *cells)
    table.close()
    print(f"\n# total {clock.seconds:.0f} s")

if __name__ == "__main__":
    main()
