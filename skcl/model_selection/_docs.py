"""The documentation the two searches share, spliced into their docstrings.

:class:`~skcl.model_selection.SequenceGridSearch` and
:class:`~skcl.model_selection.SequenceRandomizedSearch` take the same
estimator, the same parameters besides their candidates, and set the same
attributes; each class's docstring is assembled from these pieces, so that
the text is written once (``tests/test_docs.py`` checks the result like
any other docstring).
"""

_COMMON_PARAMETERS = """\
    scoring : str or callable, default="final_average_accuracy"
        How a candidate's validation accuracy matrix ``R`` becomes its
        score, greater is better: "final_average_accuracy" (mean of the
        last column of ``R``), "neg_average_forgetting",
        "backward_transfer", or a callable ``scoring(R) -> float``.
    task_scoring : str, callable, list or dict, default=None
        Further per-task scores of the validation sequence after the last
        training task, reported in ``cv_results_`` beside the accuracy;
        they do not choose the best candidate. Anything
        :func:`skcl.metrics.task_scores` takes, e.g.
        ``["neg_log_loss", skcl.metrics.expected_calibration_error]``, or
        a list or dict of them.
    scenario : {"class", "domain", "task"}, default="class"
        How the validation tasks are scored (:func:`skcl.metrics.task_accuracies`):
        "task" lets only each task's own labels compete, given to ``fit``
        as ``task_labels``; "class" and "domain" let every class compete.
    refit : bool, default=True
        Keep the best candidate as ``best_estimator_``. It is the model
        that was scored: the best candidate *trained on the training
        sequence*, which is what the protocol asks for, so no second
        training is needed. (GridSearchCV retrains on all the data because
        its folds hold out data; here nothing is held out of training.)
        False keeps no model, which saves shipping fitted models back from
        parallel workers.
    n_jobs : int, default=None
        Candidates run in parallel. None means 1 unless in a
        ``joblib.parallel_backend`` / ``parallel_config`` context; -1
        means all processors. Results do not depend on it. They run in
        threads of this process, which share its compiled programs and
        NC's consolidator fits; a ``joblib.parallel_config(backend=...)``
        around the search (e.g. "loky" for processes, "dask" for a
        cluster) runs them there instead.
    verbose : int, default=0
        Progress goes to the :mod:`logging` logger
        ``skcl.model_selection``: one record per candidate as it finishes,
        at level INFO when ``verbose`` is 1 or more (DEBUG otherwise), so
        ``logging.basicConfig(level=logging.INFO)`` shows them. Higher
        values also set each candidate's estimator's own ``verbose`` (when
        it has one).
    progress_bar : bool, default=False
        Show a tqdm progress bar on standard error (a widget in a notebook)
        that counts the candidates as they finish; each one learns the
        whole training sequence and is scored on the validation sequence.
        It changes no result. Needs tqdm (``pip install 'skcl[progress]'``):
        without it, ``fit`` raises an ImportError before any work.
    error_score : "raise" or float, default=np.nan
        Score of a candidate whose training raises (e.g. diverges at a
        large λ): "raise" re-raises; a number records it and warns with
        :class:`~sklearn.exceptions.FitFailedWarning`.
    pre_dispatch : int or str, default="2*n_jobs"
        How many candidates joblib dispatches ahead.
"""

_COMMON_ATTRIBUTES = """\
    cv_results_ : dict of ndarrays
        One entry per candidate, with GridSearchCV's keys, so that
        ``pandas.DataFrame(cv_results_)`` and code written for
        GridSearchCV work: ``params`` (list of dicts), ``param_<name>``
        (masked arrays: masked where a candidate does not set ``name``),
        ``split0_test_score`` (the score on the validation sequence),
        ``mean_test_score``, ``std_test_score``, ``rank_test_score``
        (1 is best; ties share the smallest rank, NaN scores rank last,
        as in GridSearchCV), ``mean_fit_time``, ``std_fit_time``,
        ``mean_score_time`` and ``std_score_time`` (seconds learning the
        training sequence and evaluating on the validation sequence).

        There is one split, the validation sequence: every ``mean_*``
        equals its single value and every ``std_*`` is 0 (NaN for a
        failed candidate). They do *not* measure the spread over seeds or
        sequences; for that, run the search once per seed.

        Beside them, per candidate: ``task<i>_validation_accuracy`` (the
        accuracy on validation task i after the last training task) and,
        for each score ``<name>`` of ``task_scoring``,
        ``task<i>_validation_<name>`` and ``validation_<name>`` (its
        mean over the validation tasks).
    accuracy_matrices_ : ndarray of shape (n_candidates, n_tasks, n_tasks)
        The validation accuracy matrices ``R``; columns before the last
        are NaN unless the scoring looks at them.
    best_index_ : int
        Index of the best candidate; the first one among ties.
    best_params_ : dict
    best_score_ : float
    best_estimator_ : estimator
        The best candidate, trained on the training sequence. Only with
        ``refit=True``. When the leading steps of a pipeline transformed
        the sequences once, a pipeline of those steps (the same objects
        where they came fitted, fitted clones where they did not)
        followed by the best final step.
    scorer_ : SequenceScorer
    n_tasks_ : int
    n_candidates_ : int
    classes_ : ndarray of shape (n_classes,)
        Only with ``refit=True``.
"""

_ESTIMATOR_PARAMETER = """\
    estimator : skcl classifier, or a pipeline ending in one
        Must have ``partial_fit``: scikit-learn's ``Pipeline`` has none,
        :class:`skcl.pipeline.Pipeline` does. Its ``random_state`` is
        shared by every candidate, so an int gives reproducible results.

        Leading steps that come unfitted (``make_pipeline(StandardScaler(),
        AQCClassifier())``) are fitted on the first training task, then
        only transform, exactly as in a ``partial_fit`` loop; fitted ones
        (a pre-trained feature extractor) are used as they are.

        For an :class:`skcl.pipeline.Pipeline` whose candidates set only
        parameters of the final step (``<final step>__...``), every
        candidate would meet the same leading steps, so they transform the
        training and validation sequences once, before any candidate
        starts (after fitting, on the first training task, those that come
        unfitted); each candidate is a clone of the final step. The user's
        pipeline is not changed. Otherwise each candidate is a clone of the
        whole pipeline that fits its own unfitted leading steps on the
        first task. Since clone resets every fitted step not wrapped in
        :class:`~sklearn.frozen.FrozenEstimator`, a candidate whose grid
        would reset one of your fitted steps (a grid on its parameters)
        raises :class:`~sklearn.exceptions.NotFittedError` before any
        training, rather than silently refit a pre-trained step on the
        first task.
"""
