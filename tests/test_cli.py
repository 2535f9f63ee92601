"""The `skcl` command's user experience: fast help, flags, and every user
error caught before any training, as one line on stderr with exit status 2."""

import logging
import subprocess
import sys
import time

import numpy as np
import pytest

import skcl.__main__ as cli
from skcl import reproduce as rp

main = cli.main


@pytest.fixture
def no_training(monkeypatch):
    """Fail the test if the command starts any experiment."""
    started = []

    def spy(*args, **kwargs):
        started.append(args)
        raise AssertionError("training started")

    monkeypatch.setattr(rp, "reproduce", spy)
    monkeypatch.setattr(rp, "run_column", spy)
    return started


def _one_line_error(capsys):
    err = capsys.readouterr().err
    assert err.startswith("skcl reproduce: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    return err


def test_the_parser_offers_every_registry_entry(capsys):
    with pytest.raises(SystemExit):
        main(["reproduce", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for key in [*rp.SEQUENCES, *rp.GROUPS, *(m.key for m in rp.METHODS), *rp.PRETRAINING]:
        assert key in text
    assert cli._ISIC <= set(rp.SEQUENCES) | set(rp.PRETRAINING)


def test_help_is_fast_and_imports_nothing_heavy():
    code = ("import sys, time; start = time.perf_counter()\n"
            "from skcl.__main__ import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "heavy = [m for m in ('jax', 'sklearn', 'matplotlib', 'numpy') if m in sys.modules]\n"
            "print(heavy, file=sys.stderr)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0
    assert result.stderr.strip() == "[]"
    assert "reproduce" in result.stdout
    start = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "skcl", "--help"], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0 and "reproduce" in result.stdout
    assert time.perf_counter() - start < 1.5  # ~0.3 s; margin for a busy machine


def test_version(capsys):
    import skcl

    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out == f"skcl {skcl.__version__}\n"


def test_quiet_and_verbose_are_mutually_exclusive(capsys, no_training):
    with pytest.raises(SystemExit) as exit_:
        main(["reproduce", "ci-split-iris", "--quiet", "--verbose"])
    assert exit_.value.code == 2
    assert "--verbose: not allowed with argument --quiet" in capsys.readouterr().err
    assert no_training == []


@pytest.mark.parametrize("seed", ["-1", "2.5", str(2**32)])
def test_a_bad_seed_is_a_usage_error(capsys, no_training, seed):
    with pytest.raises(SystemExit) as exit_:
        main(["reproduce", "ci-split-iris", "--seed", seed])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "argument --seed: must be an integer" in err and "Traceback" not in err
    assert no_training == []


def test_n_jobs_zero_is_a_usage_error(capsys, no_training):
    with pytest.raises(SystemExit) as exit_:
        main(["reproduce", "ci-split-iris", "--n-jobs", "0"])
    assert exit_.value.code == 2
    assert "argument --n-jobs: must not be 0" in capsys.readouterr().err


@pytest.mark.parametrize("kind", ["file", "under a file"])
def test_an_unwritable_output_fails_before_any_work(tmp_path, capsys, no_training, kind):
    blocker = tmp_path / "results.txt"
    blocker.write_text("not a folder")
    output = blocker if kind == "file" else blocker / "results"
    start = time.perf_counter()
    assert main(["reproduce", "ci-split-iris", "--output", str(output)]) == 2
    assert time.perf_counter() - start < 5
    err = _one_line_error(capsys)
    assert f"--output {output}" in err
    assert no_training == []
    assert blocker.read_text() == "not a folder"


def test_the_output_folder_is_created_before_the_run(tmp_path, no_training):
    output = tmp_path / "new" / "results"
    with pytest.raises(AssertionError, match="training started"):
        main(["reproduce", "ci-split-iris", "--quiet", "--output", str(output)])
    assert output.is_dir()


def test_extractor_weights_in_a_npy_file_is_a_clear_error(tmp_path, capsys, no_training):
    weights = tmp_path / "weights.npy"
    np.save(weights, np.zeros(3))
    out = str(tmp_path / "out")
    assert main(["reproduce", "ci-split-mnist", "--pretrain", "fashion-mnist",
                 "--extractor-weights", str(weights), "--output", out]) == 2
    err = _one_line_error(capsys)
    assert "--extractor-weights" in err and "not a .npz weights file" in err
    assert main(["reproduce", "ci-split-mnist", "--extractor-weights",
                 str(tmp_path / "missing.npz"), "--output", out]) == 2
    assert "no such file" in _one_line_error(capsys)
    assert no_training == []
    assert not (tmp_path / "out").exists()  # nothing changed


def test_a_missing_matplotlib_fails_before_training_for_figure2(monkeypatch, tmp_path, capsys,
                                                                 no_training):
    """`pip install .` has no matplotlib: Figure 2 cannot be drawn, so say so
    at once instead of after the whole run."""
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` fails
    with pytest.raises(ImportError):
        import matplotlib  # noqa: F401
    out = tmp_path / "out"
    start = time.perf_counter()
    assert main(["reproduce", "ci-split-2d-iris", "--output", str(out)]) == 2
    assert time.perf_counter() - start < 5
    err = _one_line_error(capsys)
    assert "matplotlib not installed" in err and "pip install 'skcl[plot]'" in err
    assert main(["reproduce", "ci-split-iris", "--figure", "--output", str(out)]) == 2
    assert "matplotlib" in _one_line_error(capsys)
    assert no_training == []
    assert not out.exists()


def test_image_extras_are_checked_before_any_work(monkeypatch, tmp_path, capsys, no_training):
    monkeypatch.setitem(sys.modules, "torchvision", None)
    monkeypatch.setitem(sys.modules, "PIL", None)
    out = str(tmp_path / "out")
    assert main(["reproduce", "ci-split-mnist", "--download", "--output", out]) == 2
    assert "torchvision not installed" in _one_line_error(capsys)
    assert main(["reproduce", "ci-split-ham8", "--output", out]) == 2
    err = _one_line_error(capsys)
    assert "pillow not installed" in err and "skcl[images]" in err
    assert no_training == []


def test_progress_goes_through_logging(monkeypatch, tmp_path, capsys):
    """The command shows the library's log records as its progress lines."""
    seen = []

    def fake_reproduce(sequence, model, methods, **kwargs):
        logging.getLogger("skcl.reproduce").info("[Iris SR] Joint: progress line")
        logging.getLogger("skcl.model_selection").debug("hidden unless --verbose")
        seen.append(kwargs["verbose"])
        return [], {}

    monkeypatch.setattr(rp, "reproduce", fake_reproduce)
    monkeypatch.setattr(rp, "write_results", lambda *args, **kwargs: {})
    monkeypatch.setattr(rp, "format_table", lambda rows: "table")
    monkeypatch.setattr(cli, "_write_accuracy_matrices", lambda rows, path: path)
    assert main(["reproduce", "ci-split-iris", "--output", str(tmp_path)]) == 0
    assert "[Iris SR] Joint: progress line" in capsys.readouterr().out
    assert main(["reproduce", "ci-split-iris", "--quiet", "--output", str(tmp_path)]) == 0
    assert "progress line" not in capsys.readouterr().out
    assert seen == [0, 0]
    assert not logging.getLogger("skcl").handlers  # the handler is removed afterwards


def test_a_tqdm_bar_counts_methods_on_a_terminal(monkeypatch, tmp_path, capsys):
    """With tqdm installed (the `progress` extra) and a terminal, the lines
    go above a bar that advances once per finished method."""
    import types

    bars = []

    class FakeTqdm:
        def __init__(self, total, **kwargs):
            self.total, self.n, self.lines, self.closed = total, 0, [], False
            bars.append(self)

        def update(self, n):
            self.n += n

        def write(self, message, file=None):
            self.lines.append(message)

        def close(self):
            self.closed = True

    monkeypatch.setitem(sys.modules, "tqdm", types.SimpleNamespace(tqdm=FakeTqdm))
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)

    def fake_reproduce(sequence, model, methods, **kwargs):
        for method in methods:
            logging.getLogger("skcl.reproduce").info(f"[Iris SR] {method.name}: done",
                                                    extra={"skcl_method_done": True})
        return [], {}

    monkeypatch.setattr(rp, "reproduce", fake_reproduce)
    monkeypatch.setattr(rp, "write_results", lambda *args, **kwargs: {})
    monkeypatch.setattr(rp, "format_table", lambda rows: "table")
    monkeypatch.setattr(cli, "_write_accuracy_matrices", lambda rows, path: path)
    assert main(["reproduce", "ci-split-iris", "--model", "sr", "--methods", "joint", "ft",
                 "--output", str(tmp_path)]) == 0
    (bar,) = bars
    assert (bar.total, bar.n, bar.closed) == (2, 2, True)
    assert bar.lines == ["[Iris SR] Joint: done", "[Iris SR] Fine-tuning: done"]


def test_without_matplotlib_a_table_run_still_succeeds(monkeypatch, tmp_path, capsys):
    """`pip install . && skcl reproduce ci-split-iris` has no matplotlib: the
    run needs none; only the optional heatmap is skipped, and it says so."""
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setattr(rp, "reproduce", lambda *args, **kwargs: ([], {}))
    monkeypatch.setattr(rp, "format_table", lambda rows: "table")
    assert main(["reproduce", "ci-split-iris", "--output", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "no accuracy-matrix figure (pip install 'skcl[plot]')" in out
    assert not list(tmp_path.glob("*.png"))
    assert (tmp_path / "ci-split-iris.csv").is_file()


@pytest.mark.parametrize("seeds", ["0", "-2", "x", "1.5"])
def test_a_bad_number_of_seeds_is_a_usage_error(capsys, no_training, seeds):
    with pytest.raises(SystemExit) as exit_:
        main(["reproduce", "ci-split-iris", "--seeds", seeds])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "argument --seeds: must be a positive integer (the number of seeds)" in err
    assert "Traceback" not in err
    assert no_training == []


def test_seeds_past_the_largest_seed_fail_before_any_work(tmp_path, capsys, no_training):
    out = tmp_path / "out"
    assert main(["reproduce", "ci-split-iris", "--seed", str(2**32 - 1), "--seeds", "2",
                 "--output", str(out)]) == 2
    assert "goes past the largest seed, 2**32 - 1" in _one_line_error(capsys)
    assert no_training == [] and not out.exists()


def test_seeds_reach_the_library_and_the_bar(monkeypatch, tmp_path, capsys):
    """--seed S --seeds N runs seeds S..S+N-1; the bar counts each method's
    run per seed, a method this build lacks all its seeds at once; one seed
    calls the library exactly as before --seeds existed."""
    import types

    bars, calls = [], []

    class FakeTqdm:
        def __init__(self, total, **kwargs):
            self.total, self.n, self.unit = total, 0, kwargs["unit"]
            bars.append(self)

        def update(self, n):
            self.n += n

        def write(self, message, file=None):
            pass

        def close(self):
            pass

    monkeypatch.setitem(sys.modules, "tqdm", types.SimpleNamespace(tqdm=FakeTqdm))
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)

    def fake_reproduce(sequence, model, methods, **kwargs):
        calls.append(kwargs)
        log = logging.getLogger("skcl.reproduce")
        n_seeds = kwargs.get("n_seeds", 1)
        for method in methods[:-1]:
            for _ in range(n_seeds):
                log.info(f"[Iris] {method.name}: done", extra={"skcl_method_done": True})
        log.info("[Iris] last: not available",
                 extra={"skcl_method_done": True, "skcl_runs": n_seeds})
        return [], {}

    monkeypatch.setattr(rp, "reproduce", fake_reproduce)
    monkeypatch.setattr(rp, "write_results", lambda *args, **kwargs: {})
    monkeypatch.setattr(rp, "format_table", lambda rows: "table")
    monkeypatch.setattr(cli, "_write_accuracy_matrices", lambda rows, path: path)
    flags = ["reproduce", "classical", "--methods", "joint", "ft", "aqc",
             "--output", str(tmp_path)]
    assert main(flags + ["--seed", "7", "--seeds", "3"]) == 0
    assert (calls[-1]["random_state"], calls[-1]["n_seeds"]) == (7, 3)
    assert (bars[-1].total, bars[-1].n, bars[-1].unit) == (3 * 4 * 3, 3 * 3, "run")
    assert "for 3 seeds" in capsys.readouterr().out
    assert main(flags) == 0
    assert "n_seeds" not in calls[-1] and calls[-1]["random_state"] == 0
    assert (bars[-1].total, bars[-1].unit) == (3 * 4, "method")


@pytest.mark.slow
def test_cli_runs_two_seeds(tmp_path, capsys):
    """A cheap column, two seeds: the table's cells are mean ± sd beside the
    paper with the seeds reaching it; the files keep both seeds."""
    import csv
    import json

    assert main(["reproduce", "ci-split-iris", "--model", "sr", "--methods", "joint", "ft",
                 "--seeds", "2", "--output", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "[Iris SR] Joint (seed 1):" in out and "[Iris SR] Joint over 2 seeds:" in out
    assert "over 2 seeds (0, 1): mean ± sample standard deviation" in out
    assert "Wall time" in out and "for 2 seeds" in out and "ci-split-iris_summary.csv" in out
    with open(tmp_path / "ci-split-iris.csv") as f:
        rows = list(csv.DictReader(f))
    assert [(r["method"], r["seed"]) for r in rows] == [
        ("Joint", "0"), ("Joint", "1"), ("Fine-tuning", "0"), ("Fine-tuning", "1")]
    fine_tuning = next(line for line in out.splitlines() if "Fine-tuning  " in line)
    assert "33.33 ±  0.00" in fine_tuning and fine_tuning.endswith("2/2")
    document = json.loads((tmp_path / "ci-split-iris.json").read_text())
    assert document["meta"]["seed"] == 0 and document["meta"]["seeds"] == [0, 1]
    joint = document["summary"][0]
    assert joint["test_mean"] == pytest.approx(
        np.mean([float(r["test"]) for r in rows if r["method"] == "Joint"]))


def test_reproduce_accepts_version_where_the_docs_list_it(capsys):
    # docs/experiments.md lists --version among reproduce's options; it was
    # "unrecognized arguments: --version".
    import skcl

    with pytest.raises(SystemExit) as exit_:
        main(["reproduce", "--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out == f"skcl {skcl.__version__}\n"


def test_the_help_wraps_and_shows_one_example_per_group(capsys):
    # It printed the 21 sequences twice, each time as one line of ~400 characters.
    with pytest.raises(SystemExit):
        main(["reproduce", "--help"])
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 80
    examples = out[out.index("examples, one per group"):]
    for command in ["skcl reproduce ci-split-iris", "skcl reproduce ci-split-mnist ",
                    "skcl reproduce ci-split-mnist-mlp", "skcl reproduce mnist-pixels"]:
        assert command in examples
    assert "2 CPU cores" in examples and "--rows-per-task" in examples
    assert out.count("ci-split-wine") == 1  # listed once


def test_a_shrunk_run_writes_each_row_as_it_finishes(monkeypatch, tmp_path, capsys):
    """--rows-per-task and --epochs shrink the run and are recorded; the files
    are written after each method, and each row's time is the method's whole
    time (its search and its test evaluation), so the rows add up to the run."""
    import json

    written = []
    real_write = rp.write_results

    def spy(rows, output, stem, *, meta=None):
        written.append([row["method"] for row in rows])
        return real_write(rows, output, stem, meta=meta)

    monkeypatch.setattr(rp, "write_results", spy)
    assert main(["reproduce", "ci-split-iris", "--model", "sr", "--methods", "joint", "ft",
                 "--rows-per-task", "8", "--epochs", "3", "--output", str(tmp_path)]) == 0
    assert written == [["Joint"], ["Joint", "Fine-tuning"], ["Joint", "Fine-tuning"]]
    document = json.loads((tmp_path / "ci-split-iris.json").read_text())
    assert document["meta"]["shrunk"] == {"rows_per_task": 8, "n_epochs": 3}
    assert document["meta"]["complete"] is True
    for row in document["results"]:
        assert row["rows_per_task"] == 8 and row["settings"] == {"n_epochs": 3}
        assert row["time_s"] >= row["search_time_s"] > 0
        assert len(row["test_task_accuracies"]) == 3
    out = capsys.readouterr().out
    assert "(search " in out and "s in the rows' methods" in out


def test_run_column_rows_add_up_to_its_wall_time():
    # The rows' times were the search's alone: the test evaluation (the
    # chosen setting learned again for the accuracy matrix) was not counted.
    joint = [m for m in rp.METHODS if m.key in ("joint", "fine-tuning")]
    start = time.perf_counter()
    rows, _ = rp.run_column("ci-split-iris", "sr", joint, rows_per_task=8,
                            overrides={"n_epochs": 3})
    wall = time.perf_counter() - start
    assert sum(row["time_s"] for row in rows) == pytest.approx(wall, rel=0.1)


def test_a_long_method_prints_where_it_is():
    """Nothing printed for a while: a line with the candidates done, their
    rate and an estimate, and the task being learned."""
    import io

    from skcl.reproduce._console import _Progress

    stream = io.StringIO()
    handler = _Progress(stream, every=0.0)
    log = logging.getLogger("skcl.test_heartbeat")
    log.addHandler(handler)
    log.setLevel(logging.DEBUG)
    log.propagate = False
    try:
        handler.heartbeat()
        assert stream.getvalue() == ""  # no method running yet
        log.debug("start", extra={"skcl_method_start": "[CI MNIST pixels] RanDumb"})
        log.debug("candidate", extra={"skcl_candidate": (1, 3)})
        log.debug("task", extra={"skcl_task": (2, 5)})
        handler.heartbeat()
    finally:
        log.removeHandler(handler)
    line = stream.getvalue()
    assert line.startswith("  ... [CI MNIST pixels] RanDumb: running for")
    assert "grid candidate 1/3 done" in line and "s left" in line
    assert "task 2/5 learned" in line and "start" not in line and "epoch" not in line


def test_a_long_task_prints_its_epoch(caplog):
    """A task of many minibatches reports each epoch at DEBUG (its estimator's
    epoch_progress); the heartbeat names the epoch, its time and what is left."""
    import io

    from sklearn.datasets import load_digits

    from skcl import FineTuningClassifier
    from skcl.reproduce._console import _Progress

    X, y = load_digits(return_X_y=True)
    stream = io.StringIO()
    handler = _Progress(stream, every=0.0)
    log = logging.getLogger("skcl")
    old_level = log.level
    log.addHandler(handler)
    log.setLevel(logging.DEBUG)
    try:
        logging.getLogger("skcl.reproduce").debug(
            "start", extra={"skcl_method_start": "[Digits] Fine-tuning"})
        logging.getLogger("skcl.reproduce").debug("task", extra={"skcl_task": (1, 5)})
        FineTuningClassifier(n_epochs=4, batch_size=16, random_state=0).fit(X[:600] / 16,
                                                                            y[:600])
        handler.heartbeat()
    finally:
        log.removeHandler(handler)
        log.setLevel(old_level)
    line = stream.getvalue()
    assert line.startswith("  ... [Digits] Fine-tuning: running for"), line
    assert "task 1/5 learned" in line
    assert "the next task at epoch 4/4 (" in line and "about 0 s left in it)" in line, line
