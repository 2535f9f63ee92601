"""Split, Permuted and Rotated MNIST in the field's three scenarios.

van de Ven, Tuytelaars and Tolias (2022) label one stream of tasks in
three ways. *Task-incremental*: the task is known at test time and only
its classes compete. *Domain-incremental*: every task asks the same
question (Split MNIST: the position of the digit in its pair, 0 or 1;
Permuted or Rotated MNIST: the digit). *Class-incremental*: every class
seen so far competes (Split MNIST: the digit; Permuted or Rotated MNIST:
digit + 10 · task, 10 classes per task). Task- and class-incremental
sequences carry the same labels here; what differs is how they are scored
(``skcl.metrics``' ``scenario``), with each task's competing labels in the
Bunch's ``task_labels``.

Permuted and Rotated MNIST's tasks share the base images: each task is an
:class:`~._image_views.ImageView` that permutes or rotates the rows read
from it. Loading 10 permuted tasks of MNIST costs one copy of its 70,000
images (55 MB of uint8) plus a few MB of labels and permutations
(measured: see :func:`load_permuted_mnist`).
"""

import numpy as np
from sklearn.utils import Bunch

from .._utils.validation import check_scenario
from ._image_bunches import sequence_bunch
from ._image_docs import MNIST_LAYOUT
from ._image_readers import read_idx_dataset
from ._image_splits import OFFICIAL_SUMMARY, official_splits
from ._image_views import check_angles, check_permutation, permuted_view, rotated_view
from ._split import PAPER_SEED

__all__ = ["load_split_mnist", "load_permuted_mnist", "load_rotated_mnist"]

_PAIRS = [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9]]
_BASES = {"mnist": "MNIST", "fashion-mnist": "Fashion-MNIST"}

_COMMON = """
    root : str or path-like, default=None
        The data folder (see :func:`get_data_home`): ``root``, else the
        environment variable ``SKCL_DATA_DIR``, else ``~/skcl_data``,
        holding {layout} (``FashionMNIST/raw/...`` for Fashion-MNIST).
    download : bool, default=False
        When the files are missing, download them with torchvision.
    random_state : int, default=1337
        Seed of the stratified validation split (20 % of the official
        training split){more}."""


def _doc(more=""):
    def decorate(function):
        function.__doc__ = function.__doc__.replace(
            "{common}", _COMMON.format(layout=MNIST_LAYOUT, more=more))
        return function
    return decorate


def _base_splits(base, root, download, random_state):
    if not isinstance(base, str) or base not in _BASES:
        raise ValueError(f"base must be one of {sorted(_BASES)}, got {base!r}.")
    parts, names = official_splits(read_idx_dataset, _BASES[base], root, download,
                                   random_state)
    return _BASES[base], parts, names


@_doc()
def load_split_mnist(root=None, *, scenario="class", base="mnist", download=False,
                     random_state=PAPER_SEED):
    """Split MNIST, 5 tasks of 2 digits, labelled for one scenario.

    The tasks hold the digits (0, 1), (2, 3), ..., (8, 9), split as
    :func:`load_ci_split_mnist` splits them.

    Parameters
    ----------
    scenario : {"task", "domain", "class"}, default="class"
        "class" and "task": labels 0..9 (task-incremental scoring lets only
        the task's pair compete: ``task_labels``); "domain": the position of
        the digit in its pair, 0 or 1 (the field's domain-incremental Split
        MNIST; for consecutive pairs it is the parity).
    base : {"mnist", "fashion-mnist"}, default="mnist"
        The image set split.{common}

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``train``, ``validation``, ``test``: lists of 5 ``(X, y)`` tasks,
        ``X`` uint8 of shape (n_task_samples, 28, 28), ``y`` int64;
        ``classes``, ``target_names``, ``task_classes`` (the digits of each
        task), ``task_labels`` (each task's labels), ``scenario``, ``name``
        and ``DESCR``.

    Examples
    --------
    >>> from skcl.datasets import load_split_mnist  # doctest: +SKIP
    >>> data = load_split_mnist(scenario="domain")  # doctest: +SKIP
    >>> [sorted(set(y.tolist())) for _, y in data.train]  # doctest: +SKIP
    [[0, 1], [0, 1], [0, 1], [0, 1], [0, 1]]
    """
    check_scenario(scenario)
    name, parts, names = _base_splits(base, root, download, random_state)
    title = f"Split {name} ({scenario}-incremental)"
    if scenario == "domain":
        return sequence_bunch(
            title, parts, _PAIRS, target_names=["first of pair", "second of pair"],
            group_names=names, classes=[0, 1], mapping={c: c % 2 for c in range(10)},
            summary=OFFICIAL_SUMMARY, random_state=random_state, scenario=scenario,
        )
    return sequence_bunch(
        title, parts, _PAIRS, target_names=names, group_names=names, classes=range(10),
        summary=OFFICIAL_SUMMARY, random_state=random_state, scenario=scenario,
    )


def _check_n_tasks(n_tasks):
    if isinstance(n_tasks, bool) or not isinstance(n_tasks, (int, np.integer)) or n_tasks < 1:
        raise ValueError(f"n_tasks must be a positive integer, got {n_tasks!r}.")
    return int(n_tasks)


def _transformed_bunch(name, parts, names, views, scenario, what, random_state, **extra):
    """The Bunch of tasks that share each split's images, one view per task.

    ``views[t](images)`` is task t's view; labels are the digit
    (domain-incremental) or digit + 10 · t (task- and class-incremental).
    """
    n_tasks, n_classes = len(views), len(names)
    per_task = scenario != "domain"

    def labels(y, t):
        return (y + n_classes * t if per_task else y).astype(np.int64)

    sequences = {key: [(view(X), labels(y, t)) for t, view in enumerate(views)]
                 for key, (X, y) in zip(("train", "validation", "test"), parts)}
    if per_task:
        target_names = [f"{c} (task {t + 1})" for t in range(n_tasks) for c in names]
        task_labels = [np.arange(n_classes * t, n_classes * (t + 1)) for t in range(n_tasks)]
    else:
        target_names = list(names)
        task_labels = [np.arange(n_classes) for _ in range(n_tasks)]
    sizes = {key: len(tasks[0][1]) for key, tasks in sequences.items()}
    descr = [
        f"{name} ({scenario}-incremental): {n_tasks} tasks, {what}. {OFFICIAL_SUMMARY}",
        "Labels: " + ("digit + 10 x task." if per_task else "the class, in every task."),
        f"Samples per task: train {sizes['train']}, validation {sizes['validation']}, "
        f"test {sizes['test']} (seed {random_state}); every task is a view of the same "
        "images, transformed on access.",
    ]
    return Bunch(
        **sequences,
        classes=np.arange(len(target_names), dtype=np.int64),
        target_names=np.asarray(target_names),
        task_classes=[[str(c) for c in names] for _ in range(n_tasks)],
        task_labels=[labels.astype(np.int64) for labels in task_labels],
        scenario=scenario,
        name=name,
        DESCR="\n".join(descr),
        **extra,
    )


@_doc(more=", and of the permutations (``np.random.default_rng(random_state)``, "
      "one ``permutation`` per task, in task order)")
def load_permuted_mnist(n_tasks=10, *, root=None, download=False, random_state=PAPER_SEED,
                        pad=False, base="mnist", scenario="domain", permutations=None):
    """Permuted MNIST: every task the same images, its pixels in its own order.

    As in the field's code, every task is permuted, the first too. Each
    task is a view of the shared images that permutes the rows read from
    it (``X[i:j]``, ``X[indices]``, ``np.asarray(X)``), so ten tasks do not
    hold ten copies. Measured (``benchmarks/timing/bench_permuted_memory.py``,
    numpy 2.4, x86-64): loading 10 tasks of MNIST keeps 58 MiB of Python
    allocations (``tracemalloc``: the 70,000 base images, labels and
    permutations) after a peak of 99 MiB while the files are read and
    split, with or without ``pad``, and a process peak (``ru_maxrss``) of
    261 MiB, the same as :func:`load_ci_split_mnist` (53, 106 and 264);
    the ten tasks materialised keep 529 MiB (740 MiB resident).

    Parameters
    ----------
    n_tasks : int, default=10
        Number of tasks (permutations).
    pad : bool, default=False
        Zero-pad each image to 32×32 before permuting (the field's
        Permuted MNIST: 1,024 pixels).
    base : {"mnist", "fashion-mnist"}, default="mnist"
        The images permuted.
    scenario : {"task", "domain", "class"}, default="domain"
        "domain": labels the digit, 0..9, in every task; "task" and
        "class": digit + 10 · task (100 classes for 10 tasks), task-
        incremental scoring letting only the task's 10 compete.
    permutations : sequence of n_tasks arrays, default=None
        The permutations to use instead of drawing them, each of 784 (or
        1,024 with ``pad``) pixel indices.{common}

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``train``, ``validation``, ``test``: lists of ``n_tasks`` ``(X,
        y)`` tasks, ``X`` an :class:`ImageView` of uint8 rows of shape
        (n_task_samples, 784) (1,024 with ``pad``), ``y`` int64;
        ``classes``, ``target_names``, ``task_classes``, ``task_labels``,
        ``scenario``, ``permutations`` (n_tasks, n_pixels), ``name`` and
        ``DESCR``.

    Raises
    ------
    ValueError
        For n_tasks < 1, a permutation of another length or that is no
        permutation, an unknown base or scenario.

    Examples
    --------
    >>> from skcl.datasets import load_permuted_mnist  # doctest: +SKIP
    >>> data = load_permuted_mnist(3, pad=True)  # doctest: +SKIP
    >>> X, y = data.train[0]  # doctest: +SKIP
    >>> X.shape, X[:5].dtype  # doctest: +SKIP
    ((48000, 1024), dtype('uint8'))
    """
    n_tasks = _check_n_tasks(n_tasks)
    check_scenario(scenario)
    n_pixels = (32 if pad else 28) ** 2
    if permutations is None:
        rng = np.random.default_rng(random_state)
        permutations = [rng.permutation(n_pixels) for _ in range(n_tasks)]
    elif len(permutations) != n_tasks:
        raise ValueError(f"{len(permutations)} permutations given for n_tasks={n_tasks}.")
    # Checked before the files are read.
    permutations = np.stack([check_permutation(p, n_pixels) for p in permutations])
    name, parts, names = _base_splits(base, root, download, random_state)
    views = [lambda X, p=p: permuted_view(X, p, pad=pad) for p in permutations]
    return _transformed_bunch(
        f"Permuted {name}", parts, names, views, scenario,
        f"each a permutation of the {n_pixels} pixels"
        + (" (images padded to 32x32)" if pad else ""), random_state,
        permutations=permutations,
    )


@_doc()
def load_rotated_mnist(angles=(0, 18, 36, 54, 72, 90, 108, 126, 144, 162), *, root=None,
                       download=False, random_state=PAPER_SEED, base="mnist",
                       scenario="domain"):
    """Rotated MNIST: every task the same images, rotated by its own angle.

    Each task is a view of the shared images that rotates the rows read
    from it: counter-clockwise by the task's angle about the image's
    centre, keeping 28×28 (bilinear, ``scipy.ndimage.rotate`` with
    ``reshape=False, order=1``, rounded to uint8; a multiple of 90° is
    exactly ``np.rot90``, 0° the image itself).

    Parameters
    ----------
    angles : sequence of float, default=(0, 18, ..., 162)
        One task per angle, in degrees; the default's ten tasks span half
        a turn.
    base : {"mnist", "fashion-mnist"}, default="mnist"
        The images rotated.
    scenario : {"task", "domain", "class"}, default="domain"
        As for :func:`load_permuted_mnist`.{common}

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        As :func:`load_permuted_mnist`'s, with ``angles`` in place of
        ``permutations``; ``X`` rows of 784 pixels.

    Raises
    ------
    ValueError
        For no angles, an angle NaN or infinite, an unknown base or
        scenario.

    Examples
    --------
    >>> from skcl.datasets import load_rotated_mnist  # doctest: +SKIP
    >>> data = load_rotated_mnist([0, 45, 90])  # doctest: +SKIP
    >>> len(data.train), data.train[2][0].shape  # doctest: +SKIP
    (3, (48000, 784))
    """
    angles = check_angles(angles)
    check_scenario(scenario)
    name, parts, names = _base_splits(base, root, download, random_state)
    views = [lambda X, a=a: rotated_view(X, float(a)) for a in angles]
    return _transformed_bunch(
        f"Rotated {name}", parts, names, views, scenario,
        "rotated by " + ", ".join(f"{a:g}" for a in angles) + " degrees", random_state,
        angles=angles,
    )
