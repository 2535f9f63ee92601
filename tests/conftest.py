"""Shared fixtures: the bundled classical task sequences and the real
MNIST / Fashion-MNIST files."""

import gc
import os
from pathlib import Path

import jax
import pytest
from sklearn.datasets import load_digits, load_iris, load_wine

from skcl.datasets import (
    load_ci_split_digits,
    load_ci_split_iris,
    load_ci_split_wine,
    load_di_split_digits,
)

# The paper's settings for Iris (appendix C).
IRIS_SETTINGS = dict(n_epochs=100, batch_size=16, learning_rate=0.1)

# The files the real-data tests read, in torchvision's layout.
SHARED_DATA_FILES = [
    f"{dataset}/raw/{split}-{kind}-ubyte"
    for dataset in ("MNIST", "FashionMNIST")
    for split in ("train", "t10k")
    for kind in ("images-idx3", "labels-idx1")
]


# Each compiled XLA executable holds a few memory mappings, and jax keeps
# every executable it compiled. The estimator checks alone compile thousands
# (one per input shape), and past the kernel's vm.max_map_count (65530 by
# default) the next compilation dies with a segmentation fault. Users rarely
# compile that much in one process; the test suite does.
_MAX_MAPPINGS = 20_000
# Reading /proc/self/maps takes the kernel 10-25 ms at 10,000-20,000
# mappings, so counting after every test cost the suite about 40
# worker-seconds. The busiest test adds about 850 (measured: GM-VCL's
# estimator checks), so looking every 8 tests still stops far below the
# kernel's limit.
_TESTS_BETWEEN_COUNTS = 8
_tests_since_count = 0


def _n_memory_mappings():
    try:
        with open("/proc/self/maps", "rb") as maps:
            return maps.read().count(b"\n")
    except OSError:  # not Linux: nothing to watch
        return 0


@pytest.fixture(autouse=True)
def _bounded_compilation_cache():
    """Drop jax's compiled executables once they hold too many mappings."""
    global _tests_since_count
    yield
    _tests_since_count += 1
    if _tests_since_count < _TESTS_BETWEEN_COUNTS:
        return
    _tests_since_count = 0
    if _n_memory_mappings() > _MAX_MAPPINGS:
        jax.clear_caches()
        gc.collect()


# Each pytest-xdist worker compiles its own programs and holds about a
# gigabyte; past four, more workers cost memory and compilations more than
# they save (``-n auto`` counts every core).
MAX_WORKERS = 4


def _n_cpus():
    """The CPUs this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def pytest_xdist_auto_num_workers(config):
    """``-n auto``: one worker per CPU this process may use, at most MAX_WORKERS."""
    return max(1, min(_n_cpus(), MAX_WORKERS))


# BLAS threads per worker. Each worker's BLAS would otherwise start a thread
# per core, and their threads (and those of the processes the tests start:
# the docs build, notebook kernels) wait for cores the other workers hold,
# spinning: on two cores with two workers the exact family's tests took
# 62 s unlimited and 35 s with one BLAS thread per worker (measured on
# tests/test_exact_*.py, test_at_scale_rows.py, test_laplace_predictive.py).
# scikit-learn's own test suite limits its workers the same way. JAX's
# threads are left alone: limiting XLA's thread pool made its tests slower.
_BLAS_THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def pytest_configure(config):
    """A pytest-xdist worker's BLAS gets its share of the CPUs (at least one thread)."""
    workers = os.environ.get("PYTEST_XDIST_WORKER_COUNT")
    if workers is None:  # one process (``-n 0``): every core is its own
        return
    share = max(1, _n_cpus() // int(workers))
    for name in _BLAS_THREAD_VARIABLES:  # the libraries loaded later, the subprocesses
        os.environ.setdefault(name, str(share))
    import scipy.linalg  # noqa: F401  (loads SciPy's BLAS, so that the limit reaches it)
    from threadpoolctl import threadpool_limits

    threadpool_limits(share)  # the libraries loaded already (NumPy's BLAS)


def _do_not_run_expected_failures(item):
    """scikit-learn's checks declared to fail are reported, not run.

    ``parametrize_with_checks`` marks them ``xfail``, which runs each one
    (15 worker-seconds of fits) to report a failure already explained in
    its reason; a pass would not fail the run either (not strict). The
    reason is kept and pytest still lists them as xfailed.
    """
    mark = item.get_closest_marker("xfail")
    if item.originalname == "test_sklearn_compatible" and mark and mark.kwargs.get("run", True):
        item.add_marker(pytest.mark.xfail(reason=mark.kwargs.get("reason", ""), run=False),
                        append=False)


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(config, items):
    """Keep the tests that share a module-scoped fixture, or an estimator's
    scikit-learn checks, on one xdist worker.

    With ``--dist loadgroup`` each group runs on a single worker, so that
    an expensive module fixture (the docs build, a pre-trained extractor)
    is made once rather than once per worker, and an estimator's programs,
    which its checks trace and compile for some 18 input shapes, once
    rather than on both workers.
    """
    for item in items:
        _do_not_run_expected_failures(item)
        if item.originalname == "test_sklearn_compatible":
            estimator = item.callspec.id.rsplit("-check_", 1)[0]
            item.add_marker(pytest.mark.xdist_group(f"{item.module.__name__}:{estimator}"))
            continue
        info = getattr(item, "_fixtureinfo", None)
        definitions = getattr(info, "name2fixturedefs", {}) or {}
        shared = sorted(
            name for name, defs in definitions.items()
            if defs and getattr(defs[-1], "scope", None) == "module"
        )
        if shared:
            item.add_marker(pytest.mark.xdist_group(f"{item.module.__name__}:{shared[0]}"))


@pytest.fixture(scope="session")
def fashion_cnn4(shared_data_dir):
    """cnn4 pre-trained on the first 6,000 Fashion-MNIST training images, one epoch.

    A quick extractor (13 s on two cores) that the real-file tests share:
    they ask for it with ``@pytest.mark.xdist_group("fashion_cnn4")`` so
    that one worker trains it once. Its Fashion-MNIST test accuracy is
    about 0.82, and a softmax regression on its features learns MNIST to
    about 0.84.
    """
    from skcl.datasets import load_fashion_mnist
    from skcl.feature_extraction import PretrainedFeatureExtractor

    X, y = load_fashion_mnist(shared_data_dir).train
    return PretrainedFeatureExtractor("cnn4", n_epochs=1, random_state=0).fit(X[:6000], y[:6000])


# The bundled data sets, one meaning per name.


def _task_sequence(name, load):
    """A session fixture ``name`` giving ``load()``, a task sequence of
    :mod:`skcl.datasets` (its Bunch of ``train``, ``validation``, ``test``)."""

    def sequence():
        return load()

    sequence.__doc__ = f"{load.__doc__.splitlines()[0]} (skcl.datasets.{load.__name__})"
    return pytest.fixture(scope="session", name=name)(sequence)


iris = _task_sequence("iris", load_ci_split_iris)
wine = _task_sequence("wine", load_ci_split_wine)
ci_split_digits = _task_sequence("ci_split_digits", load_ci_split_digits)
di_split_digits = _task_sequence("di_split_digits", load_di_split_digits)


def _read_only(*arrays):
    """The arrays, made read-only: a test that changed one in place would
    change it for the tests after it."""
    for array in arrays:
        array.setflags(write=False)
    return arrays


@pytest.fixture(scope="session")
def iris_xy():
    """All 150 Iris rows, each feature standardised (mean 0, variance 1), and the species."""
    X, y = load_iris(return_X_y=True)
    return _read_only((X - X.mean(0)) / X.std(0), y)


@pytest.fixture(scope="session")
def wine_xy():
    """All 178 Wine rows as scikit-learn ships them (unscaled), and the cultivars."""
    return _read_only(*load_wine(return_X_y=True))


@pytest.fixture(scope="session")
def digits():
    """All 1,797 of scikit-learn's 8×8 digits, pixels / 16 (in [0, 1]), and the digits."""
    X, y = load_digits(return_X_y=True)
    return _read_only(X / 16.0, y)


@pytest.fixture(scope="session")
def shared_data_dir():
    """The folder of the real MNIST and Fashion-MNIST files.

    Found through the environment variable ``SKCL_DATA_DIR`` (the loaders'
    own setting). When it is unset or lacks the files, the test is skipped
    with a message saying how to point it at them, unless
    ``SKCL_REQUIRE_DATA=1`` (as in CI), in which case it fails.
    """
    value = os.environ.get("SKCL_DATA_DIR")
    if not value:
        problem = "SKCL_DATA_DIR is not set"
    else:
        root = Path(value).expanduser()
        missing = [
            name
            for name in SHARED_DATA_FILES
            if not (root / name).is_file() and not (root / f"{name}.gz").is_file()
        ]
        problem = f"SKCL_DATA_DIR={value!r} lacks {', '.join(missing)}" if missing else None
    if problem is None:
        return root
    message = (
        f"{problem}: this test reads the real MNIST and Fashion-MNIST IDX "
        "files. Point SKCL_DATA_DIR at the folder that holds MNIST/raw and "
        "FashionMNIST/raw, e.g. `SKCL_DATA_DIR=../shared/data python -m "
        "pytest ...` from the project's root."
    )
    if os.environ.get("SKCL_REQUIRE_DATA") == "1":
        pytest.fail(f"{message} (SKCL_REQUIRE_DATA=1 makes this an error.)")
    pytest.skip(message)
