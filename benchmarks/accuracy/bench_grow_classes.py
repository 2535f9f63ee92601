"""Growing classes vs declaring them all up front, for every method.

For each method and sequence, the final average test accuracy (%) of
``grow_classes=True`` (no ``classes`` passed: each task announces its own)
against ``grow_classes=False`` with every class declared on the first call,
for seed 0 and a spread of seeds (mean ± std). λ (and ξ, r) are fixed per
method, not searched, so that the two columns differ only by the growth.

Sequences: CI Split Iris (FCNN (4,)), CI Split Wine (FCNN (16,)), both
bundled, and CI Split MNIST on frozen features (5 tasks of two digits,
softmax regression), in one of two versions:

* ``--mnist-features pca`` (the default): **a reduced stand-in**, the
  first 64 principal components of the pixels (fitted on the training
  images), a stratified subset of the images (``--mnist-per-class``) and
  fewer epochs (``--mnist-epochs``); minutes.
* ``--mnist-features cnn4``: the paper's setting, the 64 features of a
  ``cnn4`` extractor pre-trained on Fashion-MNIST (the offline stand-in
  for EMNIST Letters, as in ``skcl reproduce ci-split-mnist --pretrain
  fashion-mnist``) on the whole of CI Split MNIST, 20 epochs of
  minibatches of 64. The extractor is pre-trained once (about 15 minutes
  on two cores) and kept in ``--cache``.

``--search`` adds, for AQC, EWC and SI, the paper's protocol: λ (and ξ)
chosen on the validation sequence (the appendix-D grid, or ``--lambdas``),
separately for declared and grown classes, then the test accuracy (Iris,
Wine and the cnn4 features; the PCA stand-in has no validation sequence).

Run::

    SKCL_DATA_DIR=/work/shared/data PYTHONPATH=. python benchmarks/accuracy/bench_grow_classes.py
    SKCL_DATA_DIR=/work/shared/data PYTHONPATH=. python benchmarks/accuracy/bench_grow_classes.py \
        --sequences mnist --mnist-features cnn4 --search

The measured tables (2026-11-24) are in docs/user_guide/partial_fit.rst.
"""

import numpy as np
from sklearn.decomposition import PCA

import skcl
from benchmarks import _harness as harness
from skcl import reproduce as rp
from skcl.datasets import (
    load_ci_split_iris,
    load_ci_split_mnist,
    load_ci_split_wine,
    load_mnist,
)
from skcl.model_selection import SequenceGridSearch

METHODS = {
    "Fine-tuning": ("FineTuningClassifier", {}),
    "Joint": ("JointClassifier", {}),
    "AQC": ("AQCClassifier", {"alpha": 1.0}),
    "EWC": ("EWCClassifier", {"alpha": 100.0}),
    "Online EWC": ("OnlineEWCClassifier", {"alpha": 100.0, "decay": 0.9}),
    "SI": ("SIClassifier", {"alpha": 1.0, "damping": 0.1}),
    "NC": ("NCClassifier", {"alpha": 1.0, "radius": 1.0, "consolidator_n_steps": 200,
                            "consolidator_hidden_layer_sizes": (64,)}),
    "G-VCL": ("GVCLClassifier", {}),
    "GM-VCL": ("GMVCLClassifier", {"n_components": 2}),
    "G-SFSVI": ("GSFSVIClassifier", {}),
}


def mnist_features(per_class, seed=0):
    """CI Split MNIST on PCA features: 5 tasks of two digits (reduced)."""
    data = load_mnist()
    rng = np.random.default_rng(seed)

    def subset(X, y, n):
        idx = np.concatenate([rng.permutation(np.flatnonzero(y == c))[:n] for c in range(10)])
        return X[idx].reshape(len(idx), -1) / 255.0, y[idx]

    Xtr, ytr = subset(*data.train, per_class)
    Xte, yte = subset(*data.test, max(per_class // 5, 20))
    pca = PCA(64, random_state=0).fit(Xtr)
    Xtr, Xte = pca.transform(Xtr).astype(np.float32), pca.transform(Xte).astype(np.float32)
    groups = [(0, 1), (2, 3), (4, 5), (6, 7), (8, 9)]
    split = lambda X, y: [(X[np.isin(y, g)], y[np.isin(y, g)]) for g in groups]  # noqa: E731
    return split(Xtr, ytr), split(Xte, yte), np.arange(10)


def cnn4_features(cache):
    """CI Split MNIST on the features of a Fashion-MNIST-pretrained cnn4."""
    extractor, info = rp.pretrained_extractor("fashion-mnist", cache_dir=cache, log=print)
    print(f"extractor: {info['source']} {info.get('path', '')}", flush=True)
    data = load_ci_split_mnist()
    with harness.Stopwatch() as watch:
        features = {
            split: [(extractor.transform(X), y) for X, y in getattr(data, split)]
            for split in ("train", "validation", "test")
        }
    print(f"features of every image in {watch.seconds:.0f} s", flush=True)
    return features, data.classes


def estimator(cls, settings, grow, seed, params=None):
    """``cls`` with the sequence's ``settings`` that it takes (as reproduce
    does: G-SFSVI's inducing box) and the method's ``params`` (all of them)."""
    clf = getattr(skcl, cls)(grow_classes=grow, random_state=seed)
    accepted = clf.get_params()
    clf.set_params(**{k: v for k, v in settings.items() if k in accepted})
    return clf.set_params(**(params or {}))


def searched_accuracy(cls, settings, sequences, classes, grow, seed, lambdas=None):
    """λ (and ξ) chosen on validation, then the test accuracy (paper's protocol).

    ``sequences``: the (train, validation, test) task sequences.
    """
    grid = dict(next(m.param_grid for m in rp.METHODS if m.estimator == cls))
    if lambdas:
        grid["alpha"] = list(lambdas)
    train, validation, test_tasks = sequences
    search = SequenceGridSearch(
        estimator(cls, settings, grow, seed), grid
    ).fit(train, validation, classes=None if grow else classes)
    best = search.best_estimator_
    test = 100 * np.mean([np.mean(best.predict(X) == y) for X, y in test_tasks])
    return test, search.best_params_


def final_accuracy(cls, settings, params, train, test, classes, grow, seed):
    clf = estimator(cls, settings, grow, seed, params)
    for X, y in train:
        clf.partial_fit(X, y, classes=None if grow else classes)
    return 100 * np.mean([np.mean(clf.predict(X) == y) for X, y in test])


def main():
    parser = harness.parser(__doc__, csv=False)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--methods", nargs="*", default=list(METHODS))
    parser.add_argument("--sequences", nargs="*", default=["iris", "wine", "mnist"])
    parser.add_argument("--mnist-per-class", type=int, default=500)
    parser.add_argument("--mnist-epochs", type=int, default=10)
    parser.add_argument("--mnist-features", choices=["pca", "cnn4"], default="pca")
    parser.add_argument("--cache", default="bench_weights",
                        help="folder for the pre-trained cnn4 weights")
    parser.add_argument("--search", action="store_true")
    parser.add_argument("--lambdas", nargs="*", type=float, default=None,
                        help="λ of the search instead of appendix D's decades")
    parser.add_argument("--fixed", action=harness.ON_OFF, default=True,
                        help="the fixed-λ table (--no-fixed: the search alone)")
    args = parser.parse_args()
    print(harness.machine_line())
    sequences = {}  # name -> (train, validation or None, test, classes, settings)
    if "iris" in args.sequences:
        d = load_ci_split_iris()
        sequences["CI Split Iris"] = (d.train, d.validation, d.test, d.classes,
                                      dict(learning_rate=0.1, hidden_layer_sizes=(4,)))
    if "wine" in args.sequences:
        d = load_ci_split_wine()
        sequences["CI Split Wine"] = (d.train, d.validation, d.test, d.classes,
                                      dict(learning_rate=0.01, hidden_layer_sizes=(16,)))
    if "mnist" in args.sequences and args.mnist_features == "pca":
        train, test, classes = mnist_features(args.mnist_per_class)
        sequences["CI Split MNIST (PCA features, reduced)"] = (
            train, None, test, classes,
            dict(learning_rate=0.01, batch_size=64, n_epochs=args.mnist_epochs))
    elif "mnist" in args.sequences:
        features, classes = cnn4_features(args.cache)
        sequences["CI Split MNIST (cnn4 features)"] = (
            features["train"], features["validation"], features["test"], classes,
            rp.SEQUENCES["ci-split-mnist"].settings("sr"))
    fixed = harness.Table({"sequence": "<40", "method": "<12", "declared s0": ">11.1f",
                           "grown s0": ">9.1f", "declared mean±sd": ">17", "grown mean±sd": ">14",
                           "time s": ">7.0f"})
    for seq, (train, _, test, classes, settings) in sequences.items():
        for name in args.methods if args.fixed else []:
            cls, params = METHODS[name]
            with harness.Stopwatch() as watch:
                acc = {grow: [final_accuracy(cls, settings, params, train, test, classes,
                                             grow, seed) for seed in range(args.seeds)]
                       for grow in (False, True)}
            d, g = np.array(acc[False]), np.array(acc[True])
            fixed.row(seq, name, d[0], g[0], f"{d.mean():.1f} ± {d.std():4.1f}",
                      f"{g.mean():.1f} ± {g.std():4.1f}", watch.seconds)
    if not args.search:
        return
    grid = f"λ ∈ {args.lambdas}" if args.lambdas else "appendix D's grid"
    searched = harness.Table({"sequence": "<40", "method": "<12", "seed": ">4",
                              "declared": ">9.1f", "grown": ">7.1f",
                              " chosen (declared; grown)": ""},
                             title=f"\nλ (and ξ) chosen on validation ({grid}), then test "
                                   "accuracy:")
    for seq, (train, validation, test, classes, settings) in sequences.items():
        if validation is None:
            continue
        for name in [m for m in args.methods if m in ("AQC", "EWC", "SI")]:
            for seed in range(args.seeds):
                (d, dp), (g, gp) = (
                    searched_accuracy(METHODS[name][0], settings, (train, validation, test),
                                      classes, grow, seed, args.lambdas)
                    for grow in (False, True))
                searched.row(seq, name, seed, d, g, f"{dp}; {gp}")


if __name__ == "__main__":
    main()
