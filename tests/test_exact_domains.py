"""The Gaussian's covariance per domain (``covariance="per_domain"``, ``skcl._exact.domains``).

Checked against the rows (each domain's pooled covariance and the mixture
over domains written out with scipy's multivariate normal), against the
shared model where no class is kept apart (class-incremental digits: the
same model), and on real Permuted MNIST, where a covariance shared by
unrelated permutations costs accuracy that the per-domain one recovers.
"""

import numpy as np
import pytest
from scipy.special import logsumexp
from scipy.stats import multivariate_normal
from sklearn.datasets import load_digits
from sklearn.utils.estimator_checks import parametrize_with_checks

from skcl import GaussianDiscriminantClassifier
from skcl.datasets import load_ci_split_digits, load_permuted_mnist
from skcl.feature_extraction import RandomFeatures


@parametrize_with_checks([
    GaussianDiscriminantClassifier(covariance="per_domain", random_state=0),
    GaussianDiscriminantClassifier(covariance="per_domain", components="task_class",
                                   random_state=0),
    GaussianDiscriminantClassifier(covariance="per_domain", components="task_class",
                                   domain_gate="volume", random_state=0),
])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def _two_domains(seed=0, d=4, rows=25):
    """Two tasks of three classes, each task its own random covariance and offsets."""
    rng = np.random.default_rng(seed)
    tasks = []
    for t in range(2):
        A = rng.standard_normal((d, d)) * (1 + 2 * t)
        offset = rng.standard_normal(d) * 3
        y = np.repeat(np.arange(3), rows)
        X = rng.standard_normal((len(y), d)) @ A + offset + y[:, None]
        tasks.append((X, y))
    return tasks


def _centred(X, y):
    means = {c: X[y == c].mean(0) for c in range(3)}
    return means, X - np.array([means[c] for c in y])


@pytest.mark.parametrize("pooling", [0.0, 0.5])
def test_log_joint_is_the_mixture_of_each_domains_gaussian_written_out(pooling):
    s = 0.2
    tasks = _two_domains()
    clf = GaussianDiscriminantClassifier(s, covariance="per_domain", components="task_class",
                                         domain_pooling=pooling)
    for X, y in tasks:
        clf.partial_fit(X, y, classes=[0, 1, 2])
    n = sum(len(y) for _, y in tasks)
    pooled = sum(C.T @ C for C in (_centred(X, y)[1] for X, y in tasks)) / n
    X_test = np.random.default_rng(1).standard_normal((7, 4)) * 4
    terms = {c: [] for c in range(3)}
    for X, y in tasks:  # each task is a domain: its rows about their class means
        means, centred = _centred(X, y)
        empirical = (1 - pooling) * centred.T @ centred / len(X) + pooling * pooled
        nu = np.trace(empirical) / 4
        covariance = (1 - s) * empirical + s * nu * np.eye(4)
        for c in range(3):
            terms[c].append(np.log((y == c).sum() / n)
                            + multivariate_normal(means[c], covariance).logpdf(X_test))
    expected = np.column_stack([logsumexp(terms[c], axis=0) for c in range(3)])
    np.testing.assert_allclose(clf.decision_function(X_test), expected, rtol=1e-9, atol=1e-9)
    # The shared covariance is another model: the rule changes the numbers.
    shared = GaussianDiscriminantClassifier(s, components="task_class")
    for X, y in tasks:
        shared.partial_fit(X, y, classes=[0, 1, 2])
    assert np.abs(shared.decision_function(X_test) - expected).max() > 0.1


@pytest.mark.parametrize("predictive", ["plugin", "student_t"])
def test_shared_gate_weighs_each_domain_under_the_pooled_covariance_written_out(predictive):
    # log p(g, x) = log Σ_{h∈r} π_h N(x; μ_h, Σ) + log π_g N(x; μ_g, Σ_r)
    #               − log Σ_{h∈r} π_h N(x; μ_h, Σ_r), each domain r a task.
    s = 0.2
    tasks = _two_domains()
    clf = GaussianDiscriminantClassifier(s, covariance="per_domain", components="task_class",
                                         domain_gate="shared")
    for X, y in tasks:
        clf.partial_fit(X, y, classes=[0, 1, 2])
    n = sum(len(y) for _, y in tasks)
    X_test = np.random.default_rng(1).standard_normal((7, 4)) * 4
    if predictive == "plugin":
        pooled = sum(C.T @ C for C in (_centred(X, y)[1] for X, y in tasks)) / n
        pooled = (1 - s) * pooled + s * np.trace(pooled) / 4 * np.eye(4)
        terms = {c: [] for c in range(3)}
        for X, y in tasks:
            means, centred = _centred(X, y)
            empirical = centred.T @ centred / len(X)
            own = (1 - s) * empirical + s * np.trace(empirical) / 4 * np.eye(4)
            prior = {c: np.log((y == c).sum() / n) for c in range(3)}
            gate = logsumexp([prior[c] + multivariate_normal(means[c], pooled).logpdf(X_test)
                              for c in range(3)], axis=0)
            within = {c: prior[c] + multivariate_normal(means[c], own).logpdf(X_test)
                      for c in range(3)}
            total = logsumexp(list(within.values()), axis=0)
            for c in range(3):
                terms[c].append(gate + within[c] - total)
        expected = np.column_stack([logsumexp(terms[c], axis=0) for c in range(3)])
        np.testing.assert_allclose(clf.decision_function(X_test), expected, rtol=1e-9,
                                   atol=1e-9)
    # Summed over the classes it is the shared model's evidence, log p̄(x).
    clf.set_params(predictive=predictive)
    shared = GaussianDiscriminantClassifier(s, components="task_class", predictive=predictive)
    for X, y in tasks:
        shared.partial_fit(X, y, classes=[0, 1, 2])
    np.testing.assert_allclose(logsumexp(clf.decision_function(X_test), axis=1),
                               logsumexp(shared.decision_function(X_test), axis=1), rtol=1e-9)
    own = clf.decision_function(X_test)
    clf.set_params(domain_gate="own")
    assert np.abs(clf.decision_function(X_test) - own).max() > 0.1
    # A bad gate is refused where it acts, by a prediction, and changes nothing.
    before = clf.decision_function(X_test)
    with pytest.raises(ValueError, match="domain_gate"):
        clf.set_params(domain_gate="likelihood").predict(X_test)
    np.testing.assert_array_equal(clf.set_params(domain_gate="own").decision_function(X_test),
                                  before)


def _merged_run_tasks(seed=0, d=4, rows=60):
    """Three tasks of three classes, each task its own covariance: class 0 is drawn alike
    in the first two tasks (one run of two tasks, one component) and shifted in the
    third; classes 1 and 2 are shifted in every task."""
    rng = np.random.default_rng(seed)
    base = rng.standard_normal(d) * 3
    tasks = []
    for t in range(3):
        A = rng.standard_normal((d, d)) * (1 + t)
        y = np.repeat(np.arange(3), rows)
        offsets = np.array([base + (8 if t == 2 else 0), *rng.standard_normal((2, d)) * 8])
        tasks.append((rng.standard_normal((len(y), d)) @ A * 0.5 + offsets[y], y))
    return tasks


def _gaussian(mean, covariance, X):
    return multivariate_normal(mean, covariance).logpdf(X)


@pytest.mark.parametrize("gate", ["own", "shared", "volume"])
def test_a_run_over_two_tasks_is_in_each_tasks_domain_written_out(gate):
    # Each task τ is a domain, its covariance Σ_τ that of its rows about their
    # components' means; a component whose run spans tasks 0 and 1 is in both,
    # with its rows in each as prior, π_{τ,g} = n_{τ,g}/n. Gates, per task τ:
    # "own" Σ_τ; "shared" the pooled Σ; "volume" a_τ·Σ_τ with log det(a_τ·Σ_τ)
    # = L̄ = Σ_τ (n_τ/n) log det Σ_τ; within τ the classes under Σ_τ.
    s, d = 0.2, 4
    tasks = _merged_run_tasks()
    clf = GaussianDiscriminantClassifier(s, covariance="per_domain", domain_gate=gate)
    for X, y in tasks:
        clf.partial_fit(X, y, classes=[0, 1, 2])
    assert [fit.keys for fit in clf.domain_gaussians_.fits] == [
        ((0, 0), (0, 1), (0, 2)), ((0, 0), (1, 1), (1, 2)), ((2, 0), (2, 1), (2, 2))]
    n = sum(len(y) for _, y in tasks)
    run = np.vstack([X[y == 0] for X, y in tasks[:2]]).mean(0)  # class 0's component, tasks 0-1

    def centres(t, X, y):
        return {c: run if (c == 0 and t < 2) else X[y == c].mean(0) for c in range(3)}

    def shrunk(centred):
        empirical = centred.T @ centred / len(centred)
        return (1 - s) * empirical + s * np.trace(empirical) / d * np.eye(d)

    parts = []  # per task: its class centres, priors and Σ_τ
    for t, (X, y) in enumerate(tasks):
        mu = centres(t, X, y)
        parts.append((mu, {c: np.log((y == c).sum() / n) for c in range(3)},
                      shrunk(X - np.array([mu[c] for c in y]))))
    pooled = shrunk(np.vstack([X - np.array([parts[t][0][c] for c in y])
                               for t, (X, y) in enumerate(tasks)]))
    log_dets = [np.linalg.slogdet(cov)[1] for _, _, cov in parts]
    mean_log_det = np.mean(log_dets)  # every task has n/3 rows
    X_test = np.vstack([X[::15] for X, _ in tasks]) + 0.5
    terms = {c: [] for c in range(3)}
    for (mu, prior, cov), log_det in zip(parts, log_dets):
        within = {c: prior[c] + _gaussian(mu[c], cov, X_test) for c in range(3)}
        weigh = {"own": cov, "shared": pooled,
                 "volume": cov * np.exp((mean_log_det - log_det) / d)}[gate]
        domain = logsumexp([prior[c] + _gaussian(mu[c], weigh, X_test) for c in range(3)],
                           axis=0)
        total = logsumexp(list(within.values()), axis=0)
        for c in range(3):
            terms[c].append(domain + within[c] - total)
    expected = np.column_stack([logsumexp(terms[c], axis=0) for c in range(3)])
    np.testing.assert_allclose(clf.decision_function(X_test), expected, rtol=1e-9, atol=1e-9)
    # The three gates are three models on these rows.
    others = {g: clf.set_params(domain_gate=g).decision_function(X_test)
              for g in ("own", "shared", "volume") if g != gate}
    assert all(np.abs(other - expected).max() > 0.1 for other in others.values())


def test_volume_gate_weighs_the_domains_with_the_plugin_under_either_predictive():
    # Within a domain the predictive ranks the classes; the domain's weight is the
    # plug-in's at the common volume, so a row's total over the classes, Σ_τ p̃(τ, x),
    # is the same under "student_t" as under "plugin", and the classes' split is not.
    tasks = _merged_run_tasks()
    clf = GaussianDiscriminantClassifier(0.2, covariance="per_domain", domain_gate="volume")
    for X, y in tasks:
        clf.partial_fit(X, y, classes=[0, 1, 2])
    X_test = np.vstack([X[::15] for X, _ in tasks]) + 0.5
    plugin = clf.decision_function(X_test)
    student = clf.set_params(predictive="student_t").decision_function(X_test)
    np.testing.assert_allclose(logsumexp(student, axis=1), logsumexp(plugin, axis=1),
                               rtol=1e-9)
    assert np.abs(student - plugin).max() > 1e-3


def test_with_no_class_kept_apart_it_is_the_shared_model():
    seq = load_ci_split_digits()
    models = [GaussianDiscriminantClassifier(covariance=c) for c in ("shared", "per_domain")]
    for clf in models:
        for X_task, y_task in seq.train:
            clf.partial_fit(X_task, y_task, classes=np.arange(10))
    X_test = np.concatenate([X_task for X_task, _ in seq.test])
    assert models[1].domain_gaussians_.domains == (None,)
    for gate in ("own", "shared", "volume"):  # one domain: every gate is the shared model
        np.testing.assert_allclose(models[1].set_params(domain_gate=gate).decision_function(X_test),
                                   models[0].decision_function(X_test), rtol=1e-9, atol=1e-8)


def test_switching_to_per_domain_mid_sequence_is_a_clear_error():
    tasks = _two_domains()
    clf = GaussianDiscriminantClassifier(components="task_class")
    clf.partial_fit(*tasks[0], classes=[0, 1, 2])
    clf.set_params(covariance="per_domain").partial_fit(*tasks[1])
    with pytest.raises(ValueError, match="per_domain"):
        clf.predict(tasks[1][0])


def _random_feature_tasks(data, n_train, n_test, n_components):
    """The first rows of each task, pixels / 255 → RandomFeatures fitted on task 0, float64."""
    def rows(split, n):
        return [(np.asarray(X[:n], dtype=np.float64) / 255, np.asarray(y[:n]))
                for X, y in data[split]]

    train, test = rows("train", n_train), rows("test", n_test)
    features = RandomFeatures(n_components, random_state=0).fit(train[0][0])
    return [[(features.transform(X).astype(np.float64), y) for X, y in part]
            for part in (train, test)]


def test_per_domain_closes_the_gap_of_three_permutations_on_mnist(shared_data_dir):
    """Permuted MNIST, 3 permutations, 1,000 rows a task, M = 300 random features.

    Measured: one domain alone 83.8 %; three domains, one (task, class)
    component each, shared covariance 82.5 %, per domain 84.3 % (the
    oracle of a model per task scored on its own task: 84.3 %).
    """
    train, test = _random_feature_tasks(load_permuted_mnist(3, root=shared_data_dir),
                                        1000, 500, 300)

    def accuracy(covariance, tasks):
        clf = GaussianDiscriminantClassifier(covariance=covariance, components="task_class")
        for X, y in tasks:
            clf.partial_fit(X, y, classes=np.arange(10))
        scored = test[:len(tasks)]
        return np.mean([np.mean(clf.predict(X) == y) for X, y in scored])

    alone = accuracy("shared", train[:1])
    shared, per_domain = accuracy("shared", train), accuracy("per_domain", train)
    assert per_domain >= alone - 0.005
    assert per_domain >= shared + 0.01


def test_shared_gate_keeps_neighbouring_rotations_from_claiming_each_others_rows(
        shared_data_dir):
    """Rotated MNIST 72°, 90°, 108°, 2,000 rows a task, M = 1,000 random features.

    90° is a pixel permutation, its neighbours interpolated: their
    covariances differ in scale, and under each domain's own the 90°
    domain claims their rows. Measured: one domain alone 93.0 %; three
    domains, a (task, class) component each: shared covariance 91.53 %,
    per domain 90.67 % (gate "own"), 92.00 % (gate "shared").
    """
    from skcl.datasets import load_rotated_mnist

    train, test = _random_feature_tasks(
        load_rotated_mnist((72, 90, 108), root=shared_data_dir), 2000, 500, 1000)

    def accuracy(clf):
        return np.mean([np.mean(clf.predict(X) == y) for X, y in test])

    shared = GaussianDiscriminantClassifier(components="task_class")
    clf = GaussianDiscriminantClassifier(covariance="per_domain", components="task_class")
    for X, y in train:
        shared.partial_fit(X, y, classes=np.arange(10))
        clf.partial_fit(X, y, classes=np.arange(10))
    own = accuracy(clf)
    gated = accuracy(clf.set_params(domain_gate="shared"))
    assert gated >= own + 0.01
    assert gated >= accuracy(shared) + 0.004


def test_runs_over_neighbouring_rotations_keep_each_tasks_covariance(shared_data_dir):
    """Rotated MNIST 0°, 18°, 36°, 54°, 3,000 rows a task, M = 300 random features.

    ``components="auto"`` joins some classes' neighbouring rotations into one
    run (27 components for 40 (task, class) pairs). Each task keeps its own
    covariance and a run's component is in each of its tasks' domains; when
    a domain was a run's first task with the covariance of all its tasks
    (before), the 0° domain claimed the others' rows. Measured: one domain
    (0°) alone 86.40 %; the four, shared covariance 85.90 %; per domain,
    gate "own" 87.35 % (82.45 % before), "shared" 87.65 % (86.75 % before),
    "volume" 87.55 %.
    """
    from skcl.datasets import load_rotated_mnist

    train, test = _random_feature_tasks(
        load_rotated_mnist((0, 18, 36, 54), root=shared_data_dir), 3000, 500, 300)

    def accuracy(clf):
        return np.mean([np.mean(clf.predict(X) == y) for X, y in test])

    shared = GaussianDiscriminantClassifier()
    clf = GaussianDiscriminantClassifier(covariance="per_domain")
    for X, y in train:
        shared.partial_fit(X, y, classes=np.arange(10))
        clf.partial_fit(X, y, classes=np.arange(10))
    fit = clf.domain_gaussians_
    assert sum(map(len, fit.columns)) > fit.n_components  # some run spans two tasks
    baseline = accuracy(shared)
    for gate in ("own", "shared", "volume"):
        assert accuracy(clf.set_params(domain_gate=gate)) >= baseline + 0.01, gate


# ------------------------------------------- with decay, forgetting and merging


def _digit_calls():
    X, y = load_digits(return_X_y=True)
    X = X / 16
    return X, [(X[i::5], y[i::5]) for i in range(5)]


def test_per_domain_under_decay_is_the_fit_with_decayed_weights():
    # Each task's scatter weighs λ less per call, as the sums do.
    X, calls = _digit_calls()
    decay = 0.7
    decayed = GaussianDiscriminantClassifier(covariance="per_domain", components="task_class",
                                             decay=decay)
    weighted = GaussianDiscriminantClassifier(covariance="per_domain", components="task_class")
    for t, (Xc, yc) in enumerate(calls):
        decayed.partial_fit(Xc, yc, classes=np.arange(10))
        weighted.partial_fit(Xc, yc, classes=np.arange(10),
                             sample_weight=np.full(len(yc), decay ** (len(calls) - 1 - t)))
    np.testing.assert_allclose(decayed.predict_proba(X), weighted.predict_proba(X), rtol=1e-8,
                               atol=1e-10)


def test_per_domain_refuses_forgetting_and_merging_and_changes_nothing():
    from skcl import merge_models
    from skcl._exact.forgetting import ForgettingError
    from skcl._exact.merging import MergeError

    X, calls = _digit_calls()
    model = GaussianDiscriminantClassifier(covariance="per_domain")
    for Xc, yc in calls:
        model.partial_fit(Xc, yc, classes=np.arange(10))
    before = model.predict_proba(X)
    with pytest.raises(ForgettingError, match="per_domain"):
        model.forget(*calls[0], task=0)
    np.testing.assert_array_equal(model.predict_proba(X), before)
    with pytest.raises(MergeError, match="per_domain"):
        merge_models([model, model])
