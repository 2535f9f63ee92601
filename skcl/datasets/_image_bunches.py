"""The Bunch an image loader returns, with its ``DESCR``.

A task sequence's splits are cut into tasks by class groups
(:func:`split_by_class`) and, for domain-incremental sequences,
relabelled (:func:`relabel`); a pre-training task keeps one ``(X, y)``
pair per split. ``DESCR`` says what was built: tasks, labels, how the
splits were drawn and how many samples each holds.
"""

import numpy as np
from sklearn.utils import Bunch

from ._split import relabel, split_by_class

__all__ = ["sequence_bunch", "pretraining_bunch"]


def sequence_bunch(name, parts, class_groups, *, target_names, group_names,
                   classes, mapping=None, summary, random_state, scenario=None):
    """A task sequence's Bunch from its (train, validation, test) parts.

    Parameters
    ----------
    name : str
        The sequence's name, e.g. ``"CI Split MNIST"``.
    parts : sequence of 3 (X, y)
        Train, validation and test, with the dataset's original labels.
    class_groups : list of lists of int
        The original classes of each task, in task order.
    target_names : sequence of str
        The names of the labels returned (after ``mapping``).
    group_names : sequence of str
        The names of the original classes, for ``task_classes``.
    classes : sequence of int
        The labels returned, to pass to ``partial_fit``.
    mapping : dict, default=None
        Original class -> label returned, for domain-incremental
        sequences; None keeps the original labels.
    summary : str
        How the splits were drawn, for ``DESCR``.
    random_state : int
        The seed of the splits, for ``DESCR``.
    scenario : {"task", "domain", "class"}, default=None
        What the labels are for; None: "class" without ``mapping``,
        "domain" with it.

    Returns
    -------
    Bunch
        ``train``, ``validation``, ``test`` (lists of tasks), ``classes``,
        ``target_names``, ``task_classes``, ``task_labels``, ``scenario``,
        ``name`` and ``DESCR``.
    """
    sequences = {}
    for key, part in zip(("train", "validation", "test"), parts):
        tasks = split_by_class(*part, class_groups)
        if mapping is not None:
            # A lookup table relabels a whole array at once.
            table = np.full(max(mapping) + 1, -1, dtype=np.int64)
            table[list(mapping)] = list(mapping.values())
            tasks = relabel(tasks, lambda y, table=table: table[y])
        sequences[key] = tasks
    task_classes = [[str(group_names[c]) for c in group] for group in class_groups]
    # The labels each task's rows may take: what competes in task-incremental scoring.
    task_labels = [np.unique([c if mapping is None else mapping[c] for c in group])
                   for group in class_groups]
    sizes = {key: [len(y) for _, y in tasks] for key, tasks in sequences.items()}
    lines = [
        f"{name}: {len(class_groups)} tasks. {summary}",
        "Tasks (original classes): "
        + "; ".join(f"{i + 1}: {' vs '.join(t)}" for i, t in enumerate(task_classes)),
        f"Labels: {', '.join(f'{c} = {n}' for c, n in zip(classes, target_names))}.",
        f"Samples per task: train {sizes['train']}, validation "
        f"{sizes['validation']}, test {sizes['test']} (seed {random_state}).",
    ]
    return Bunch(
        **sequences,
        classes=np.asarray(classes, dtype=np.int64),
        target_names=np.asarray(target_names),
        task_classes=task_classes,
        task_labels=[labels.astype(np.int64) for labels in task_labels],
        scenario=scenario or ("class" if mapping is None else "domain"),
        name=name,
        DESCR="\n".join(lines),
    )


def pretraining_bunch(name, parts, target_names, summary, random_state, **extra):
    """A pre-training task's Bunch: one (X, y) pair per split.

    Parameters
    ----------
    name : str
        The task's name, e.g. ``"MNIST"``.
    parts : sequence of 3 (X, y)
        Train, validation and test.
    target_names : sequence of str
        The class names, in label order (labels are 0..n_classes - 1).
    summary : str
        How the splits were drawn, for ``DESCR``.
    random_state : int
        The seed of the splits, for ``DESCR``.
    **extra
        Further fields of the Bunch (e.g. ``class_weight``).

    Returns
    -------
    Bunch
        ``train``, ``validation``, ``test``, ``classes``,
        ``target_names``, ``name``, ``DESCR`` and ``extra``.
    """
    train, validation, test = parts
    lines = [
        f"{name}: one task of {len(target_names)} classes. {summary}",
        f"Samples: train {len(train[1])}, validation {len(validation[1])}, "
        f"test {len(test[1])} (seed {random_state}).",
    ]
    return Bunch(
        train=train,
        validation=validation,
        test=test,
        classes=np.arange(len(target_names), dtype=np.int64),
        target_names=np.asarray(target_names),
        name=name,
        DESCR="\n".join(lines),
        **extra,
    )

