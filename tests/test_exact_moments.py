"""The exact family's sums: moments, task moments, held-out rows, and the
held-out scores computed from them.

Every number is checked against an independent computation: a two-pass
float64 mean and scatter, SciPy's Gaussian log-density summed over the
held-out rows, and a brute-force ridge on them. The classifiers built on
them are tested in ``tests/test_exact_estimators.py``.
"""


import numpy as np
import pytest
from scipy.stats import multivariate_normal
from sklearn.linear_model import Ridge

from skcl._exact import moments
from skcl._exact.gaussian import fit_gaussian, heldout_log_likelihood
from skcl._exact.holdout import heldout_rows
from skcl._exact.least_squares import class_targets, heldout_squared_error
from skcl._exact.moments import coarsen, merge
from skcl._exact.task import moments_of_rows


def _two_pass(X, w=None):
    w = np.ones(len(X)) if w is None else w
    mean = (w[:, None] * X).sum(0) / w.sum()
    centred = X - mean
    return mean, (centred * w[:, None]).T @ centred


# ------------------------------------------------------------------ moments


def test_moments_of_a_million_rows_with_a_large_mean_match_two_passes():
    rng = np.random.default_rng(0)
    X = 1e4 + rng.standard_normal((10**6, 3))
    mean, scatter = _two_pass(X)
    # Chunks of uneven sizes, merged in a shuffled order.
    bounds = np.sort(rng.choice(np.arange(1, len(X)), 40, replace=False))
    pieces = np.split(np.arange(len(X)), bounds)
    rng.shuffle(pieces)
    total = None
    for rows in pieces:
        part = moments_of_rows(X[rows], np.zeros(len(rows), int), np.ones(len(rows)), ["a"])
        total = part if total is None else merge(total, part)
    assert total.counts[0] == len(X)
    np.testing.assert_allclose(total.means[0], mean, rtol=1e-12)
    np.testing.assert_allclose(total.scatter, scatter, rtol=1e-6, atol=1e-6 * np.abs(scatter).max())
    # Raw sums in float64 would lose the scatter to cancellation here.
    raw = X.T @ X - len(X) * np.outer(X.mean(0), X.mean(0))
    assert np.abs(raw - scatter).max() > 1e-6 * np.abs(scatter).max()


@pytest.mark.parametrize("columns", [96, 250])
def test_a_wide_gram_from_blocks_is_the_product(monkeypatch, columns):
    # Past the columns where OpenBLAS's threaded syrk crashes (23,000), AᵀA
    # is built from blocks; here the limits are shrunk to see every branch.
    monkeypatch.setattr(moments, "_SYRK_MAX_COLUMNS", 80)
    monkeypatch.setattr(moments, "_GRAM_BLOCK", 64)
    A = np.random.default_rng(4).standard_normal((40, columns))
    np.testing.assert_allclose(moments.gram(A), A.T @ A, rtol=1e-13, atol=1e-12)
    out = np.full((columns, columns), np.nan)
    assert moments.gram(A, out=out) is out
    np.testing.assert_array_equal(out, out.T)
    np.testing.assert_allclose(out, A.T @ A, rtol=1e-13, atol=1e-12)


@pytest.mark.parametrize("blocked", [False, True])
def test_moments_of_many_wide_chunks_match_two_passes(monkeypatch, blocked):
    # Each chunk's AᵀA added into the sum, by one syrk or (limits shrunk) by blocks.
    if blocked:
        monkeypatch.setattr(moments, "_SYRK_MAX_COLUMNS", 100)
        monkeypatch.setattr(moments, "_GRAM_BLOCK", 64)
    rng = np.random.default_rng(5)
    X, groups, w = rng.normal(2, 3, (500, 230)), rng.integers(0, 2, 500), rng.random(500)
    m = moments_of_rows(X, groups, w, ["a", "b"], chunk_rows=120)
    pooled = sum(_two_pass(X[groups == g], w[groups == g])[1] for g in range(2))
    np.testing.assert_allclose(m.scatter, pooled, rtol=1e-10, atol=1e-10 * np.abs(pooled).max())


def test_group_moments_and_coarsening_match_each_group_computed_alone():
    rng = np.random.default_rng(1)
    X, w = rng.normal(3, 2, (500, 4)), rng.random(500)
    groups = rng.integers(0, 4, 500)
    keys = [(0, "a"), (0, "b"), (1, "a"), (1, "b")]
    m = moments_of_rows(X, groups, w, keys, per_group_scatter=True, chunk_rows=37)
    for g, key in enumerate(keys):
        mean, scatter = _two_pass(X[groups == g], w[groups == g])
        i = m.keys.index(key)
        np.testing.assert_allclose(m.means[i], mean, rtol=1e-12)
        np.testing.assert_allclose(m.group_scatter[i], scatter, rtol=1e-10)
    by_label = coarsen(m, lambda key: key[1])
    for label in "ab":
        rows = np.isin(groups, [g for g, key in enumerate(keys) if key[1] == label])
        mean, scatter = _two_pass(X[rows], w[rows])
        i = by_label.keys.index(label)
        np.testing.assert_allclose(by_label.means[i], mean, rtol=1e-12)
        np.testing.assert_allclose(by_label.group_scatter[i], scatter, rtol=1e-10)


def test_groups_far_apart_lose_nothing_to_cancellation():
    # Each group is summed about a point near its own mean: a shared shift
    # would subtract between-group spread of 10¹² from within-group of 1.
    rng = np.random.default_rng(11)
    groups = rng.integers(0, 3, 30000)
    X = rng.standard_normal((30000, 4)) + np.array([0.0, 1e6, -1e6])[groups, None]
    m = moments_of_rows(X, groups, np.ones(len(X)), ["a", "b", "c"], chunk_rows=4096)
    pooled = sum(_two_pass(X[groups == g])[1] for g in range(3))
    np.testing.assert_allclose(m.scatter, pooled, rtol=1e-9, atol=1e-9 * np.abs(pooled).max())
    for g in range(3):
        np.testing.assert_allclose(m.means[g], X[groups == g].mean(0), rtol=1e-13, atol=1e-9)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("per_group_scatter", [False, True])
def test_task_moments_sum_the_hashed_sides_exactly_in_any_chunking(per_group_scatter, threads,
                                                                    dtype, monkeypatch):
    from skcl._exact import task

    # A held-out buffer of 5 rows, smaller than a chunk's held-out rows:
    # rows wait, the buffer fills and flushes mid-chunk.
    monkeypatch.setattr(task, "_held_rows", lambda n_features, chunk_rows: 5)
    # One worker, or three sharing the chunks (whatever this machine's cores).
    monkeypatch.setattr(task, "_blas_threads", lambda: threads)
    rng = np.random.default_rng(12)
    X = (rng.standard_normal((900, 6)) * [1, 2, 3, 4, 5, 6] + 50).astype(dtype)
    # float32 rows are multiplied in float32 blocks (moments.float32_products):
    # their scatter is float32's rounding of the float64 one, relative to its
    # largest entry; the counts and means stay float64's.
    exact = dtype == np.float64
    groups, w = rng.integers(0, 3, 900), rng.random(900) * 2
    w[groups == 2] = 0.0  # a group that weighs nothing is left out
    keys = [(0, "a"), (0, "b"), (0, "c")]
    out = heldout_rows(X, 0.3, seed=9)
    for chunk_rows in (37, 900):
        learned, held = task.task_moments(X, groups, w, keys, fraction=0.3, seed=9,
                                          per_group_scatter=per_group_scatter,
                                          chunk_rows=chunk_rows)
        for side, rows in ((learned, ~out), (held, out)):
            assert side.keys == ((0, "a"), (0, "b"))
            pooled = 0.0
            for i, g in enumerate((0, 1)):
                mine = rows & (groups == g)
                mean, scatter = _two_pass(X[mine].astype(np.float64), w[mine])
                np.testing.assert_allclose(side.counts[i], w[mine].sum(), rtol=1e-12)
                np.testing.assert_allclose(side.means[i], mean, rtol=1e-12)
                if per_group_scatter:
                    np.testing.assert_allclose(
                        side.group_scatter[i], scatter, rtol=1e-9 if exact else 0,
                        atol=0 if exact else 1e-6 * np.abs(scatter).max())
                pooled = pooled + scatter
            np.testing.assert_allclose(side.scatter, pooled, rtol=1e-9 if exact else 0,
                                       atol=0 if exact else 1e-6 * np.abs(pooled).max())


def test_task_moments_in_threads_restore_blas_and_match_one_thread_from_any_thread(monkeypatch):
    import threading

    from skcl._exact import task

    rng = np.random.default_rng(13)
    X = rng.standard_normal((5000, 8)) + 100
    groups, w = rng.integers(0, 2, 5000), np.ones(5000)
    blas = task._blas_threads()
    def run():
        return task.task_moments(X, groups, w, ["a", "b"], fraction=0.2, seed=1,
                                 per_group_scatter=False, chunk_rows=256)

    monkeypatch.setattr(task, "_blas_threads", lambda: 4)
    assert task._workers(5000, 8, 256, 0)[0] == 4
    threaded = run()
    monkeypatch.undo()
    assert task._blas_threads() == blas  # the one-thread limit was lifted
    results = []
    worker = threading.Thread(target=lambda: results.append(run()))  # one worker there
    worker.start()
    worker.join()
    for side, alone in zip(threaded, results[0]):
        np.testing.assert_allclose(side.counts, alone.counts, rtol=1e-14)
        np.testing.assert_allclose(side.means, alone.means, rtol=1e-13)
        np.testing.assert_allclose(side.scatter, alone.scatter, rtol=1e-12)
    assert task._workers(5000, 8, 256, 0)[0] == min(blas, 20)
    # Four workers' buffers and D×D sums must fit 512 MB or six D×D arrays:
    # at D = 4,096 they do not, two do.
    monkeypatch.setattr(task, "_blas_threads", lambda: 4)
    workers, rows = task._workers(60000, 4096, 8192, 0)
    per_row, fixed = task._worker_values(4096, 0, False, False)
    assert workers == 2 and workers * (rows * per_row + fixed) <= 6 * 4096**2


def test_a_task_of_one_chunk_is_shared_among_threads_with_the_same_moments(monkeypatch):
    from skcl._exact import task

    # 10,132 rows of 2,000 features fit one chunk (16 MB of float64 rows, or
    # 8·D): the pass over them ran on one core while the other waited.
    monkeypatch.setattr(task, "_blas_threads", lambda: 2)
    assert task._workers(10132, 2000, task._chunk_rows(2000), 0) == (2, 5066)
    assert task._workers(900, 2000, task._chunk_rows(2000), 0)[0] == 1  # under D rows each
    # At D = 5,000, float32 rows with none held out: two workers' float64 and
    # float32 D×D sums and float32 chunks (0.7 GB) fit six D×D arrays; at
    # D = 10,000 a chunk is under D rows (one worker, 1.4 GB at most).
    for d, expected in [(5000, 2), (10000, 1)]:
        workers, rows = task._workers(12000, d, task._chunk_rows(d), 0, True)
        per_row, fixed = task._worker_values(d, 0, True, False)
        assert workers == expected
        assert workers * (rows * per_row + fixed) <= max(6 * d * d, 2**26)
    assert task._workers(12000, 5000, task._chunk_rows(5000), 0, True, True)[0] == 1  # held out
    rng = np.random.default_rng(3)
    X = (rng.standard_normal((3000, 40)) + 20).astype(np.float32)
    groups, w = rng.integers(0, 3, 3000), rng.random(3000)
    shared = task.moments_of_rows(X, groups, w, ["a", "b", "c"])
    assert task._workers(3000, 40, task._chunk_rows(40), 0)[0] == 2
    monkeypatch.setattr(task, "_blas_threads", lambda: 1)
    alone = task.moments_of_rows(X, groups, w, ["a", "b", "c"])
    np.testing.assert_allclose(shared.means, alone.means, rtol=1e-13)
    np.testing.assert_allclose(shared.scatter, alone.scatter, rtol=0,
                               atol=1e-6 * np.abs(alone.scatter).max())


@pytest.mark.parametrize("per_group_scatter", [False, True])
def test_float32_rows_written_in_float32_by_the_pass_match_float64_two_passes(
        per_group_scatter, monkeypatch):
    from skcl._exact import moments, task

    # None held out: the pass rounds each row to float32 in its chunk buffer
    # (HostRows.for_worker), the products take blocks of it as they are.
    # Small blocks and chunks, and two workers: blocks of one size, chunk
    # ends and the workers' sums all occur.
    monkeypatch.setattr(moments, "FLOAT32_BLOCK_ROWS", 150)
    monkeypatch.setattr(task, "_blas_threads", lambda: 2)
    rng = np.random.default_rng(21)
    # An offset of 50 against spreads of 0.1 to 3: without the shift float32
    # would keep no digit of the small features' scatter.
    X = (rng.standard_normal((4000, 12)) * np.geomspace(0.1, 3, 12) + 50).astype(np.float32)
    groups, w = rng.integers(0, 3, 4000), rng.random(4000) * 2
    keys = [(0, "a"), (0, "b"), (0, "c")]
    for chunk_rows in (1111, None):
        m = task.moments_of_rows(X, groups, w, keys, per_group_scatter=per_group_scatter,
                                 chunk_rows=chunk_rows)
        pooled = 0.0
        for g in range(3):
            mine = groups == g
            mean, scatter = _two_pass(X[mine].astype(np.float64), w[mine])
            np.testing.assert_allclose(m.means[g], mean, rtol=1e-12)
            if per_group_scatter:
                np.testing.assert_allclose(m.group_scatter[g], scatter, rtol=0,
                                           atol=1e-6 * np.abs(scatter).max())
            pooled = pooled + scatter
        error = np.abs(m.scatter - pooled)
        assert 0 < error.max() <= 1e-6 * np.abs(pooled).max()  # float32's, not float64's
        diagonal = np.diag(pooled)  # the smallest features' own scatter too
        assert np.all(np.abs(np.diag(m.scatter) - diagonal) <= 1e-6 * diagonal)


def test_held_out_rows_depend_on_the_rows_not_on_their_order_or_chunks():
    X = np.random.default_rng(2).standard_normal((20000, 7))
    mask = heldout_rows(X, 0.1, seed=3)
    assert 0.09 < mask.mean() < 0.11
    order = np.random.default_rng(4).permutation(len(X))
    np.testing.assert_array_equal(heldout_rows(X[order], 0.1, seed=3), mask[order])
    chunks = [heldout_rows(X[i : i + 333], 0.1, seed=3) for i in range(0, len(X), 333)]
    np.testing.assert_array_equal(np.concatenate(chunks), mask)
    np.testing.assert_array_equal(heldout_rows(X.astype(np.float32), 0.1, 3),
                                  heldout_rows(X.astype(np.float32).astype(np.float64), 0.1, 3))
    assert not heldout_rows(X, 0.1, seed=4)[mask].all()


# ------------------------------------------------------- held-out scores


def _split_moments(X, y, out, per_group_scatter):
    keys = list(np.unique(y))
    g = np.searchsorted(keys, y)
    learn = moments_of_rows(X[~out], g[~out], np.ones((~out).sum()), keys, per_group_scatter)
    held = moments_of_rows(X[out], g[out], np.ones(out.sum()), keys, per_group_scatter)
    return learn, held


@pytest.mark.parametrize("shared", [True, False])
def test_heldout_log_likelihood_is_the_sum_of_gaussian_log_densities(shared):
    rng = np.random.default_rng(5)
    X = rng.standard_normal((300, 5)) @ rng.standard_normal((5, 5)) + 2
    y = rng.integers(0, 3, 300)
    X[y == 1] += 1.5
    out = rng.random(300) < 0.3
    learn, held = _split_moments(X, y, out, per_group_scatter=not shared)
    grid = [0.0, 0.05, 0.5, 1.0]
    scores = heldout_log_likelihood(learn, held, grid, shared=shared)
    for s, score in zip(grid, scores):
        covariances = fit_gaussian(learn, s, shared=shared).covariances()
        brute = 0.0
        for g, key in enumerate(learn.keys):
            cov = covariances if shared else covariances[g]
            brute += multivariate_normal(learn.means[g], cov).logpdf(X[out & (y == key)]).sum()
        np.testing.assert_allclose(score, brute / out.sum(), rtol=1e-9)


def test_heldout_squared_error_is_a_brute_force_ridge_on_the_held_out_rows():
    rng = np.random.default_rng(6)
    X = rng.standard_normal((400, 6)) * [1, 2, 3, 4, 5, 60] + 10
    y = rng.integers(0, 3, 400)
    X[y == 2] += 1
    out = rng.random(400) < 0.25
    learn, held = _split_moments(X, y, out, per_group_scatter=False)
    codes = class_targets(3)
    alphas = [1e-3, 1.0, 100.0, 1e5]
    errors = heldout_squared_error(learn, codes[list(learn.keys)], held, codes[list(held.keys)],
                                   alphas)
    for alpha, error in zip(alphas, errors):
        ridge = Ridge(alpha=alpha).fit(X[~out], codes[y[~out]])
        brute = ((ridge.predict(X[out]) - codes[y[out]]) ** 2).sum(1).mean()
        np.testing.assert_allclose(error, brute, rtol=1e-8)
