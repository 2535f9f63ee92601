"""The documentation that skcl's estimators share, filled into their docstrings.

scikit-learn needs each estimator's ``__init__`` to spell out its
parameters, but their descriptions need not be written twice: a docstring
says ``{common}`` (the gradient-trained classifiers' parameters),
``{vi}`` (the variational ones'), ``{exact}`` (the exact family's) or
``{fisher}`` (EWC's and online EWC's Fisher labels), and
:func:`fill_doc` puts the text there. For the gradient-trained
estimators it also says, before the parameters, what the defaults are
for and what they were measured to give.
"""

import textwrap

__all__ = ["fill_doc"]

_COMMON_PARAMS = """
    hidden_layer_sizes : tuple of int, default=()
        Widths of the hidden layers. ``()`` is softmax regression
        (logistic regression for two classes), the paper's "SR"; ``(4,)``
        is its FCNN for Iris, ``(16,)`` for Wine.
    activation : {"swish", "relu", "tanh", "logistic", "identity"}, default="swish"
        The hidden units, as in ``MLPClassifier`` (whose names these are):
        swish (SiLU, z·sigmoid(z)) is the paper's network; "relu" is the
        field's (van de Ven's 784-400-400, Avalanche's SimpleMLP), which
        leaves more weights with a near-zero Fisher information, and
        exports to ``MLPClassifier`` (:func:`skcl.export.to_sklearn`), as
        do "tanh", "logistic" and "identity". Every curvature, importance
        and predictive follows it. Fixed by the first task; no effect
        without hidden layers.
    n_epochs : int, default=100
        Passes over each task's data (the paper: 100 for Iris and Wine, 20
        for image features).
    batch_size : int, default=16
        Minibatch size (the paper: 16 for Iris and Wine, 64 for images).
    learning_rate : float, default=0.01
        Peak learning rate of Adam's cosine one-cycle schedule, the paper's
        base learning rate (0.1 for Iris, 0.01 for Wine and MNIST); with
        ``learning_rate_schedule="constant"``, Adam's rate at every step.
    learning_rate_schedule : {"one_cycle", "constant"}, default="one_cycle"
        How the rate moves over a task's ``n_epochs × n_batches`` steps:
        ``"one_cycle"`` (the paper's) warms up to ``learning_rate`` and
        decays it by a cosine to near zero; ``"constant"`` keeps it, as
        plain Adam in most continual-learning libraries (e.g. Avalanche).
    prior_precision : float, default=1.0
        Precision of the zero-mean Gaussian prior of the first task,
        L_0(θ) = ½·precision·‖θ‖² (the paper: a standard Gaussian, 1).
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes in the likelihood. "balanced" weighs class
        i of a task by n / (k · n_i) over the k classes present, which is
        the paper's m / n_i weighting up to a constant factor.
    random_state : int, RandomState instance or None, default=None
        Seeds the initialisation, the minibatch order and any sampling.
        An int gives identical results run to run.
    grow_classes : bool, default=False
        Let the classes grow: the first ``partial_fit`` may omit
        ``classes`` (the labels of its task are the start) and a later call
        may bring new labels or a longer ``classes``. The output is then
        always a softmax, with one extra "unseen classes" output that the
        tasks push down and that the new classes split; a copy of it goes
        on standing for the classes still unseen. The output layer gains
        a column for every new class and the consolidation grows by the
        prior for the new parameters (see the user guide, "Classes that
        are not known in advance"). False keeps the classes fixed by the
        first call.
    verbose : int, default=0
        Log one line per task when positive (and, above 1, one per epoch as
        it ends: epoch i/n, the loss per example and summed, the seconds
        an epoch takes and an estimate of what is left; the same result)
        to the ``logging`` logger ``skcl.estimators`` at INFO level. When
        no logging is configured, a handler that writes to standard error
        is added to the ``skcl`` logger, so the lines show.
    callback : callable, default=None
        Called as ``callback(info)`` after every epoch and every task, to
        log to one's own tracker or stop early. ``info`` is a dict:
        ``event`` ("epoch" or "task"), ``estimator`` (this one), ``task``
        (counted from 1), and ``epoch`` and ``loss`` after an epoch, or the
        task's ``history_`` record after a task. A true return value after
        an epoch ends the task's training there; the task is still folded
        in. An exception raised by the callback rejects the call, which
        then changes nothing. With a callback each epoch is compiled on its
        own: the same steps, a little slower.
    scenario : {"class", "domain", "task"}, default="class"
        "task": task-incremental training (van de Ven, Tuytelaars and
        Tolias, 2022): while a task is learned only its classes (the labels
        of its ``y``) compete in the likelihood, the other outputs masked
        out of the softmax, in training and in the task's curvature or
        other stand-in for L_t. Score it with
        ``skcl.metrics.task_accuracies(..., scenario="task")``. Not with
        ``grow_classes``. "class" and "domain": every class competes.
"""

_VARIATIONAL_PARAMS = """
    n_train_samples : int, default=10
        Monte Carlo samples of θ per minibatch step for the expected NLL
        (the paper's code: 10).
    n_predict_samples : int, default=100
        Samples of θ from the posterior averaged by ``predict_proba`` (the
        paper's code: 100). They are drawn once per task from
        ``random_state``, so predictions are deterministic.
"""

_EXACT_PARAMS = """
    validation_fraction : float in [0, 1), default=0.1
        Used only by the hyperparameter value "heldout": the share of each
        task's rows held out *as statistics only* (their moments, never
        the rows) to choose it by the exact held-out score over every task
        seen so far. Which rows is a seeded hash of each row's values, so
        any split of the same data into tasks and chunks holds out the
        same rows. After the choice the held-out moments join the others:
        predictions use every row. 0 holds out nothing ("heldout" then
        takes a fixed value).
    random_state : int, RandomState instance or None, default=None
        Used only by "heldout": seeds the hash that picks the held-out
        rows. At the defaults nothing is random and it changes nothing.
        An int gives identical results run to run. The update
        shares a large task among as many threads as BLAS may use (BLAS
        itself limited to one thread meanwhile); another thread count
        moves the sums by rounding, about 1e-13 relative.
    grow_classes : bool, default=False
        Let the classes grow: the first ``partial_fit`` may omit
        ``classes`` and a later call may bring new labels. Nothing is
        approximated either way: a class is a group of sums, so declared
        and grown classes predict identically.
    verbose : int, default=0
        Log one line per task to the ``skcl.estimators`` logger when
        positive.
    backend : {"auto", "numpy", "jax"}, default="auto"
        Where the sums and the solve are computed: numpy on the host, or
        JAX on its default device. "auto" takes JAX only when the process
        has already imported JAX and its device is a GPU or TPU; it never
        imports JAX itself ("jax" does). ``backend_`` says which did the
        work (see the user guide's "At scale"). On JAX the sums stay on
        the device: ``moments_``'s scatters are JAX arrays there.
    decay : float in (0, 1], default=1.0
        λ, the factor by which each ``partial_fit`` call multiplies the
        weight of every row learned before it: after T calls, call t's
        rows weigh λ^(T − t) (times their ``sample_weight``), exactly,
        and everything (hyperparameters, components) is what a fit with
        those weights gives. 1 forgets nothing; below 1 old data fade,
        for streams that drift (the forgetting factor of recursive least
        squares; a half-life of log 2 / −log λ calls). ``fit`` is one call.
    store_group_scatter : bool, default=False
        Keep each (task, class) group's own D×D scatter, so that
        ``forget_classes`` and ``forget_task`` need no rows (memory: one
        D×D per group, that is per call and class). Fixed by the first
        call. ``forget(X, y)`` needs no more than the defaults keep. The
        Gaussian's ``covariance="per_class"`` keeps one a class, enough
        for ``forget_classes`` and for ``forget_task`` of a call whose
        classes no other call learned.
"""

_FISHER_PARAM = """
    fisher : {"exact", "sampled", "empirical"}, default="exact"
        Which labels the Fisher's gradients are taken at (the field's
        choice of "Fisher labels"): every class, weighted by the model's
        own probability (the exact Fisher F, one reverse pass per class
        that competes, for each sample); one class per sample drawn from
        those probabilities (an unbiased estimate of F at one reverse pass
        per sample, the draws following ``random_state``); or the observed
        label (the empirical Fisher, also one pass, which is not F: it
        weighs the samples the model gets wrong).
"""

_SECTIONS = {"{common}": _COMMON_PARAMS, "{vi}": _VARIATIONAL_PARAMS, "{exact}": _EXACT_PARAMS,
             "{fisher}": _FISHER_PARAM}

#: Test final average accuracy (%) at each estimator's defaults, no
#: validation sequence, with each column's training settings: CI Split Iris
#: and Wine (benchmarks/accuracy/bench_exact_classical.py, mean of seeds 0–4, 2 CPU
#: cores), CI and DI Split MNIST on the features of a cnn4 pre-trained on
#: Fashion-MNIST (benchmarks/accuracy/bench_exact_features.py, seed 0, one H100).
_MEASURED_AT_DEFAULTS = {
    "JointClassifier": (96.7, 91.1, 86.4, 85.1),
    "FineTuningClassifier": (33.3, 33.3, 19.3, 54.2),
    "AQCClassifier": (33.3, 33.3, 20.4, 70.8),
    "EWCClassifier": (33.3, 33.3, 19.4, 54.3),
    "SIClassifier": (33.3, 33.3, 19.5, 54.8),
    "NCClassifier": (33.3, 52.4, 19.8, 54.0),
    "GVCLClassifier": (33.3, 33.3, 19.5, 70.9),
    "GMVCLClassifier": (33.3, 33.3, 20.1, 70.2),
    "GSFSVIClassifier": (66.7, 33.3, 20.6, 55.2),
}

_DEFAULTS_DOC = """
    The defaults are the paper's settings for Iris and Wine (100 epochs of
    minibatches of 16, learning rate 0.01: its Wine rate){tuning}. Measured
    at them with no validation sequence (each column's own learning rate,
    epochs and batch size), this estimator gives {iris} % on CI Split Iris,
    {wine} % on CI Split Wine, {ci} % on CI Split MNIST and {di} % on DI
    Split MNIST (features of a cnn4 pre-trained on Fashion-MNIST);
    fine-tuning gives 33.3, 33.3, 19.3 and 54.2. {advice} On image features
    set ``n_epochs=20, batch_size=64`` (the paper's image settings): on
    10,000 rows a task the defaults run 62,500 steps. On fixed features,
    :class:`~skcl.GaussianDiscriminantClassifier` and
    :class:`~skcl.LeastSquaresClassifier` need no tuning (100, 100, 82.5
    and 90.2 % for the first at its defaults, on a cnn4 pre-trained on 2
    CPU cores; user guide, "When the recursion is exact").
"""


def fill_doc(cls):
    """Put the shared parameter docs where a docstring says ``{common}``, ``{vi}``, ``{exact}``
    or ``{fisher}``.

    For an estimator of ``_MEASURED_AT_DEFAULTS``, also say, before its
    parameters, what its defaults are for and what they give.
    """
    doc = cls.__doc__
    for marker, text in _SECTIONS.items():
        doc = doc.replace(marker, text.strip("\n"))
    measured = _MEASURED_AT_DEFAULTS.get(cls.__name__)
    if measured is not None:
        tuned = "alpha" in cls._parameter_constraints
        iris, wine, ci, di = measured
        text = _DEFAULTS_DOC.format(
            iris=iris, wine=wine, ci=ci, di=di,
            tuning=", and ``alpha=1``, the bottom of the paper's λ grid" if tuned else "",
            advice=("Choose λ (``alpha``) on a validation task sequence "
                    "(:class:`~skcl.model_selection.SequenceGridSearch`)." if tuned else ""),
        )
        paragraph = textwrap.fill(" ".join(text.split()), width=75, initial_indent="    ",
                                  subsequent_indent="    ")
        marker = "\n    Parameters\n    ----------\n"
        doc = doc.replace(marker, f"\n{paragraph}\n{marker}", 1)
    cls.__doc__ = doc
    return cls
