"""The `skcl reproduce` command, the method registry and Figure 2."""

import csv
import importlib.util
import json
import subprocess
import sys

import numpy as np
import pytest

from skcl import FineTuningClassifier, JointClassifier
from skcl import reproduce as rp
from skcl.__main__ import main
from skcl.datasets import load_ci_split_2d_iris


def test_registry_holds_table_one_with_the_appendix_d_grids():
    names = [m.name for m in rp.METHODS]
    assert names == ["Joint", "Fine-tuning", "G-VCL", "GM-VCL", "G-SFSVI", "EWC",
                     "Online EWC", "SI", "AQC", "NC", "Exact Gaussian", "Exact least squares",
                     "RF least squares",
                     "RF Gaussian", "RanDumb", "GaussianNB", "SGD log loss"]
    assert [m.origin for m in rp.METHODS] == (["paper"] * 6 + ["field"] + ["paper"] * 3
                                              + ["skcl"] * 4 + ["scikit-learn"] * 3)
    # RF Gaussian and online EWC (of the field's scenario table only) run where
    # a sequence names them (the pixel and scenario columns) or when asked.
    assert [m.name for m in rp.METHODS if not m.default] == ["Online EWC", "RF Gaussian"]
    grids = {m.name: m.param_grid for m in rp.METHODS}
    lambdas = [1, 10, 100, 1000, 10000]
    assert grids["EWC"] == grids["AQC"] == grids["Online EWC"] == {"alpha": lambdas}
    assert grids["SI"] == {"alpha": lambdas, "damping": [0.1, 1.0, 10.0]}
    assert grids["NC"] == {"alpha": lambdas, "radius": [1.0, 10.0, 100.0]}
    aqc = next(m for m in rp.METHODS if m.name == "AQC")
    assert aqc.paper == {"Iris SR": 66.6667, "Iris FCNN": 63.3333, "Wine SR": 49.6032,
                         "Wine FCNN": 33.3333, "CI MNIST": 92.5394, "CI CIFAR-10": 61.31,
                         "CI HAM-8": 41.666, "DI MNIST": 90.9951, "DI CIFAR-8": 96.2,
                         "DI HAM-6": 66.1442}
    # Every estimator this build has is resolved; the others are None.
    from sklearn.linear_model import SGDClassifier
    from sklearn.naive_bayes import GaussianNB

    import skcl

    for method in rp.METHODS[:12]:
        assert method.resolve() is getattr(skcl, method.estimator, None)
    assert [m.resolve() for m in rp.METHODS[15:]] == [GaussianNB, SGDClassifier]
    assert rp.Method("X", "skcl.no_such_module:Clf").resolve() is None
    assert rp.Method("X", FineTuningClassifier).resolve() is FineTuningClassifier
    assert rp.columns_for("classical") == [("ci-split-iris", "sr"), ("ci-split-iris", "fcnn"),
                                           ("ci-split-wine", "sr"), ("ci-split-wine", "fcnn")]
    assert rp.columns_for("ci-split-wine", "fcnn") == [("ci-split-wine", "fcnn")]
    assert rp.SEQUENCES["ci-split-wine"].settings("fcnn") == {
        "hidden_layer_sizes": (16,), "learning_rate": 0.01, "batch_size": 16, "n_epochs": 100}


def test_a_missing_estimator_is_reported_not_run():
    missing = rp.Method("NC", "NoSuchClassifier", {"alpha": [1]}, {"Iris SR": 93.3333})
    lines = []
    rows, models = rp.run_column("ci-split-iris", "sr", [missing], log=lines.append)
    assert rows[0]["available"] is False and models == {}
    assert "not available" in lines[0]
    assert "n/a / 93.33" in rp.format_table(rows)


@pytest.mark.slow
def test_cli_reproduces_a_reduced_column(tmp_path, capsys):
    status = main(["reproduce", "ci-split-iris", "--model", "sr", "--methods", "fine-tuning",
                   "aqc", "joint", "--output", str(tmp_path)])
    assert status == 0
    out = capsys.readouterr().out
    assert "[Iris SR] AQC: 5 candidate(s)" in out  # progress lines
    assert "ours / paper / ref" in " ".join(out.split())  # fields padded to align
    with open(tmp_path / "ci-split-iris.csv") as f:
        rows = {row["method"]: row for row in csv.DictReader(f)}
    assert list(rows) == ["Joint", "Fine-tuning", "AQC"]  # Table I's order
    assert float(rows["Fine-tuning"]["test"]) == pytest.approx(100 / 3)
    assert float(rows["Joint"]["test"]) >= 90
    assert float(rows["AQC"]["test"]) >= 60
    assert json.loads(rows["AQC"]["best_params"])["alpha"] in [1, 10, 100, 1000, 10000]
    document = json.loads((tmp_path / "ci-split-iris.json").read_text())
    aqc = next(r for r in document["results"] if r["method"] == "AQC")
    assert len(aqc["grid"]) == 5
    assert aqc["validation"] == max(c["validation"] for c in aqc["grid"])
    assert aqc["test"] == pytest.approx(np.mean(aqc["test_task_accuracies"]))
    assert document["meta"]["wall_time_s"] > 0
    assert (tmp_path / "ci-split-iris.txt").read_text().startswith("Test final average")
    assert float(rows["Fine-tuning"]["test_forgetting"]) == pytest.approx(100.0)
    assert float(rows["Joint"]["test_log_loss"]) < float(rows["Fine-tuning"]["test_log_loss"])
    assert 0 <= float(rows["AQC"]["test_ece"]) <= 100
    if importlib.util.find_spec("matplotlib"):
        assert (tmp_path / "ci-split-iris_accuracy_matrices.png").stat().st_size > 1000

    # Quiet: the table only.
    assert main(["reproduce", "ci-split-iris", "--model", "sr", "--methods", "ft",
                 "--output", str(tmp_path), "--quiet"]) == 0
    assert "[Iris SR]" not in capsys.readouterr().out


def test_cli_rejects_unknown_names(capsys):
    assert main(["reproduce", "ci-split-iris", "--methods", "bogus"]) == 2
    assert "Unknown method 'bogus'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["reproduce", "ci-split-svhn"])


def test_cli_says_what_an_image_sequence_lacks(tmp_path, capsys):
    empty = str(tmp_path / "no-data")
    out = str(tmp_path / "out")
    # The paper's pre-training task for Split MNIST is missing offline.
    assert main(["reproduce", "ci-split-mnist", "--data-dir", empty, "--output", out]) == 2
    err = capsys.readouterr().err
    assert "EMNIST Letters was not found" in err
    # In the command's terms: its flags, not the loaders' Python arguments.
    assert "pass --download" in err and "--data-dir DIR" in err
    assert "download=True" not in err and "root=" not in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert main(["reproduce", "ci-split-mnist", "--model", "fcnn", "--output", out]) == 2
    assert "--model sr" in capsys.readouterr().err
    assert main(["reproduce", "ci-split-cifar10", "--pretrain", "mnist", "--output", out]) == 2
    assert "No task sequence of 'ci-split-cifar10' is pre-trained on 'mnist'" in (
        capsys.readouterr().err
    )
    assert main(["reproduce", "images", "--extractor-weights", "w.npz", "--output", out]) == 2
    assert "share one pre-training task" in capsys.readouterr().err


def test_python_dash_m_skcl_runs():
    result = subprocess.run([sys.executable, "-m", "skcl", "reproduce", "--help"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0
    assert "ci-split-2d-iris" in result.stdout and "--n-jobs" in result.stdout


@pytest.mark.slow
def test_figure2_is_a_nontrivial_png_of_the_right_size(tmp_path):
    plotting = pytest.importorskip("skcl.plotting")
    pytest.importorskip("matplotlib")
    from PIL import Image

    data = load_ci_split_2d_iris()
    X = np.concatenate([X for X, _ in data.train])
    y = np.concatenate([y for _, y in data.train])
    # One compiled loop each: joint as a single task, fine-tuning task by task.
    joint = JointClassifier(learning_rate=0.1, random_state=0).fit(X, y)
    fine_tuning = FineTuningClassifier(hidden_layer_sizes=(4,), learning_rate=0.1, random_state=0)
    for X_task, y_task in data.train:
        fine_tuning.partial_fit(X_task, y_task, classes=data.classes)
    models = {"Softmax regression": {"Joint": joint, "Fine-tuning": fine_tuning},
              "FCNN": {"Fine-tuning": fine_tuning}}
    fig = plotting.plot_figure2(models, X, y, panel_size=2.0, dpi=100)
    path = tmp_path / "figure2.png"
    fig.savefig(path)
    image = np.asarray(Image.open(path).convert("RGB"))
    assert image.shape == (430, 400, 3)  # (2·2.0 + 0.3) in × (2·2.0) in at 100 dpi
    colours = np.unique(image.reshape(-1, 3), axis=0)
    assert len(colours) > 1000  # smooth probability gradients, not a blank canvas
    # Joint has learned all three classes: its panel holds strong red, green
    # and blue; fine-tuning only knows the last class (blue); a method
    # missing from a row leaves a "not run" panel.
    for channel in range(3):
        others = [c for c in range(3) if c != channel]
        strong = (image[..., channel] > 200) & (image[..., others] < 60).all(axis=-1)
        assert strong.sum() > 500
    with pytest.raises(ValueError, match="2 features"):
        plotting.plot_class_probabilities(joint, np.ones((3, 3)), [0, 1, 2])


@pytest.mark.slow
def test_cli_writes_figure2_for_2d_iris(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    from PIL import Image

    assert main(["reproduce", "ci-split-2d-iris", "--model", "sr", "--methods", "joint", "ft",
                 "--quiet", "--output", str(tmp_path)]) == 0
    assert "figure2_ci-split-2d-iris.png" in capsys.readouterr().out
    image = Image.open(tmp_path / "figure2_ci-split-2d-iris.png")
    assert image.size == (440, 250)  # 2 panels of 2.2 in, 1 row (+0.3 in), 100 dpi
    assert len(np.unique(np.asarray(image.convert("RGB")).reshape(-1, 3), axis=0)) > 1000


def _first_mnist_images(shared_data_dir, folder, n_train, n_test):
    """A data folder of the first real MNIST images, in the files' own format."""
    from skcl.datasets import load_mnist
    from tests.test_image_datasets import write_idx

    mnist = load_mnist(shared_data_dir)
    raw = folder / "MNIST" / "raw"
    raw.mkdir(parents=True)
    for split, (X, y), n in (("train", mnist.train, n_train), ("t10k", mnist.test, n_test)):
        write_idx(raw / f"{split}-images-idx3-ubyte", X[:n], gz=True)
        write_idx(raw / f"{split}-labels-idx1-ubyte", y[:n], gz=True)
    return folder


@pytest.mark.slow
@pytest.mark.xdist_group("fashion_cnn4")
def test_cli_reproduces_split_mnist_on_fashion_mnist_features(shared_data_dir, fashion_cnn4,
                                                              tmp_path, capsys):
    """Real files, the paper's protocol for CI Split MNIST on frozen features
    (a quick extractor: 1 epoch on 6,000 Fashion-MNIST images, given as a
    weights file), on the first 10,000 training and 2,000 test images of
    MNIST. λ chosen on validation: AQC keeps old digits, fine-tuning keeps
    only the last task's two (measured: AQC 59.3 %, fine-tuning 18.8 %)."""
    weights = tmp_path / "fashion_cnn4.npz"
    fashion_cnn4.save_weights(weights)
    data_dir = _first_mnist_images(shared_data_dir, tmp_path / "data", 10000, 2000)
    status = main(["reproduce", "ci-split-mnist", "--pretrain", "fashion-mnist",
                   "--extractor-weights", str(weights), "--methods", "ft", "aqc",
                   "--data-dir", str(data_dir), "--output", str(tmp_path)])
    assert status == 0
    out = capsys.readouterr().out
    assert "Extractor: cnn4 pre-trained on Fashion-MNIST (file:" in out
    assert ("CI MNIST: features of an extractor pre-trained on Fashion-MNIST "
            "(the paper: EMNIST Letters)") in out
    with open(tmp_path / "ci-split-mnist.csv") as f:
        rows = {row["method"]: row for row in csv.DictReader(f)}
    assert float(rows["Fine-tuning"]["test"]) <= 21
    assert float(rows["AQC"]["test"]) >= 40
    assert float(rows["AQC"]["paper"]) == pytest.approx(92.5394)
    assert rows["AQC"]["pretraining"] == "Fashion-MNIST"


def test_rows_report_forgetting_log_loss_and_calibration(tmp_path):
    """Fine-tuning on CI Split Iris forgets every old task completely; its
    log loss and calibration error are those of its predictions on the test
    tasks, scored against all three classes."""
    from sklearn.metrics import log_loss

    from skcl.metrics import expected_calibration_error

    fine_tuning = [m for m in rp.METHODS if m.name == "Fine-tuning"]
    rows, models = rp.run_column("ci-split-iris", "sr", fine_tuning)
    row, model = rows[0], models["Fine-tuning"]
    test = rp.SEQUENCES["ci-split-iris"].loader().test
    np.testing.assert_allclose(row["test_accuracy_matrix"], 100 * np.eye(3))
    assert row["test_forgetting"] == pytest.approx(100.0)
    losses = [log_loss(y, model.predict_proba(X), labels=[0, 1, 2]) for X, y in test]
    eces = [100 * expected_calibration_error(y, model.predict_proba(X), labels=[0, 1, 2])
            for X, y in test]
    np.testing.assert_allclose(row["test_task_log_loss"], losses)
    assert row["test_log_loss"] == pytest.approx(np.mean(losses))
    np.testing.assert_allclose(row["test_task_ece"], eces)
    assert row["test_ece"] == pytest.approx(np.mean(eces))
    assert row["grid"][0]["validation_log_loss"] > 0 and row["grid"][0]["validation_ece"] > 0
    paths = rp.write_results(rows, tmp_path, "ci-split-iris")
    with open(paths["csv"]) as f:
        written = next(csv.DictReader(f))
    assert float(written["test_forgetting"]) == pytest.approx(100.0)
    assert float(written["test_log_loss"]) == pytest.approx(np.mean(losses))
    assert float(written["test_ece"]) == pytest.approx(np.mean(eces))
    np.testing.assert_allclose(json.loads(written["test_task_ece"]), eces)
    document = json.loads(paths["json"].read_text())
    assert document["results"][0]["test_accuracy_matrix"] == row["test_accuracy_matrix"]


def test_accuracy_matrix_heatmap_png(tmp_path):
    pytest.importorskip("matplotlib")
    from PIL import Image

    from skcl.__main__ import _write_accuracy_matrices
    from skcl.plotting import plot_accuracy_matrix

    ax = plot_accuracy_matrix(np.eye(3), title="Fine-tuning", task_names=["a", "b", "c"])
    assert [t.get_text() for t in ax.texts] == ["100", "0", "0", "0", "100", "0", "0", "0", "100"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "b", "c"]
    with pytest.raises(ValueError, match="square"):
        plot_accuracy_matrix(np.ones((2, 3)))
    rows = [{"column": "Iris SR", "method": m, "available": True,
             "test_accuracy_matrix": (100 * R).tolist()}
            for m, R in [("Fine-tuning", np.eye(3)), ("Joint", np.triu(np.ones((3, 3))))]]
    path = _write_accuracy_matrices(rows, tmp_path / "matrices.png")
    image = np.asarray(Image.open(path).convert("RGB"))
    assert image.shape[1] > image.shape[0]  # two panels side by side
    assert len(np.unique(image.reshape(-1, 3), axis=0)) > 50  # drawn, not blank


@pytest.mark.slow
def test_mnist_mlp_columns_learn_the_pixels_with_a_kronecker_aqc(shared_data_dir, monkeypatch):
    """The MLP-on-pixels columns are wired: real files flattened to [0, 1],
    an MLP of 100 hidden units, and AQC with K-FAC GGN curvature (the full
    Hessian of 78,601 parameters would not fit). A tiny run: 200 images per
    task, 1 epoch, one λ."""
    import dataclasses

    from skcl._gradient.consolidation.structures import KroneckerCurvature

    assert rp.columns_for("mnist-mlp") == [("ci-split-mnist-mlp", "fcnn"),
                                           ("di-split-mnist-mlp", "fcnn")]
    assert rp.columns_for("mnist-mlp", "sr") == []
    seq = rp.SEQUENCES["di-split-mnist-mlp"]
    assert seq.settings("fcnn") == {"hidden_layer_sizes": (100,), "learning_rate": 0.01,
                                    "batch_size": 64, "n_epochs": 20}
    data = seq.loader(shared_data_dir)
    X, y = data.train[0]
    assert X.shape[1] == 784 and X.dtype == np.float32 and 0 <= X.min() < X.max() <= 1
    assert set(np.unique(y)) == {0, 1}

    def tiny(root=None, *, download=False):
        full = seq.loader(root, download=download)
        for split in ("train", "validation", "test"):
            full[split] = [(X[:200], y[:200]) for X, y in full[split]]
        return full

    monkeypatch.setitem(rp.SEQUENCES, "di-split-mnist-mlp",
                        dataclasses.replace(seq, loader=tiny, n_epochs=1))
    methods = [next(m for m in rp.METHODS if m.name == "Fine-tuning"),
               rp.Method("AQC", "AQCClassifier", {"alpha": [100]})]
    rows, models = rp.run_column("di-split-mnist-mlp", "fcnn", methods, root=shared_data_dir)
    aqc = models["AQC"]
    assert (aqc.curvature, aqc.structure, aqc.hidden_layer_sizes) == ("ggn", "kron", (100,))
    assert aqc.network_.n_params == 785 * 100 + 101 * 1  # one logit: even vs odd
    assert isinstance(aqc.consolidation_.curvature, KroneckerCurvature)
    by_method = {row["method"]: row for row in rows}
    assert by_method["AQC"]["settings"] == {"curvature": "ggn", "structure": "kron"}
    # The column adds the curvature's reduction to AQC's grid: λ × {sum, mean}.
    assert by_method["AQC"]["n_candidates"] == 2
    assert by_method["AQC"]["best_params"]["curvature_reduction"] in ("sum", "mean")
    assert by_method["Fine-tuning"]["n_candidates"] == 1
    assert all(50 <= row["test"] <= 100 for row in rows)  # a binary question
    assert "DI MNIST MLP: AQC with curvature='ggn', structure='kron'." in rp.format_table(rows)


def test_cli_says_the_mnist_mlp_columns_are_fcnn(tmp_path, capsys):
    assert main(["reproduce", "mnist-mlp", "--model", "sr", "--output", str(tmp_path)]) == 2
    assert "--model fcnn" in capsys.readouterr().err


def _cheap_methods():
    """Joint and fine-tuning (one candidate each) and AQC on a one-λ grid."""
    import dataclasses

    by_name = {m.name: m for m in rp.METHODS}
    return [by_name["Joint"], by_name["Fine-tuning"],
            dataclasses.replace(by_name["AQC"], param_grid={"alpha": [10]})]


_TIMINGS = {"time_s", "search_time_s", "fit_time_s"}


def _without_timings(value):
    if isinstance(value, dict):
        return {k: _without_timings(v) for k, v in value.items() if k not in _TIMINGS}
    if isinstance(value, list):
        return [_without_timings(v) for v in value]
    return value


@pytest.mark.slow
def test_several_seeds_keep_every_run_and_the_first_is_the_single_seed_run(tmp_path):
    """Two seeds: every method's protocol runs once per seed, in order; the
    first seed's row is a one-seed run's row, bit for bit, plus its seed;
    the table gives mean ± sd and the seeds reaching the paper; the files
    keep both seeds and a summary whose mean is the rows' mean."""
    methods = _cheap_methods()
    one, one_models = rp.run_column("ci-split-iris", "sr", methods)
    lines = []
    rows, models = rp.run_column("ci-split-iris", "sr", methods, n_seeds=2, log=lines.append)
    assert [(r["method"], r["seed"]) for r in rows] == [
        ("Joint", 0), ("Joint", 1), ("Fine-tuning", 0), ("Fine-tuning", 1), ("AQC", 0),
        ("AQC", 1)]
    assert all("seed" not in r for r in one)
    for single, first in zip(one, rows[::2]):
        assert first["test"] == single["test"]  # bit-identical
        assert _without_timings({k: v for k, v in first.items() if k != "seed"}) == (
            _without_timings(single))
    # The seed matters: the two seeds' fine-tuning runs end with different losses.
    assert rows[2]["test_log_loss"] != rows[3]["test_log_loss"]
    assert list(models) == list(one_models)  # the first seed's estimators
    assert models["AQC"].random_state == 0
    assert "[Iris SR] AQC (seed 1):" in "\n".join(lines)
    assert any(line.startswith("[Iris SR] AQC over 2 seeds: test ") and "≥ paper" in line
               for line in lines)

    summary = rp.summarize(rows)
    assert [(c["method"], c["n_seeds"], c["seeds"]) for c in summary] == [
        ("Joint", 2, [0, 1]), ("Fine-tuning", 2, [0, 1]), ("AQC", 2, [0, 1])]
    for cell, pair in zip(summary, [rows[0:2], rows[2:4], rows[4:6]]):
        tests = [r["test"] for r in pair]
        assert cell["test_mean"] == pytest.approx(np.mean(tests))
        assert cell["test_sd"] == pytest.approx(np.std(tests, ddof=1))
        assert (cell["test_min"], cell["test_max"]) == (min(tests), max(tests))
        reach = sum(t >= cell["paper"] - 1e-3 for t in tests)
        assert cell["n_reach_paper"] == reach and cell["fraction_reach_paper"] == reach / 2
    assert summary[1]["n_reach_paper"] == 2  # fine-tuning: 33.33, as in the paper

    table = rp.format_table(rows)
    assert "over 2 seeds (0, 1): mean ± sample standard deviation" in table
    joint_line = next(line for line in table.splitlines() if "Joint" in line)
    assert "96.67 ±  0.00" in joint_line and joint_line.endswith("2/2")
    assert max(len(line) for line in table.splitlines()) <= 100

    paths = rp.write_results(rows, tmp_path, "seeds")
    with open(paths["csv"]) as f:
        written = list(csv.DictReader(f))
    assert [(r["method"], r["seed"]) for r in written] == [
        (r["method"], str(r["seed"])) for r in rows]
    assert [float(r["test"]) for r in written] == [r["test"] for r in rows]
    document = json.loads(paths["json"].read_text())
    assert [r["seed"] for r in document["results"]] == [0, 1, 0, 1, 0, 1]
    aqc = document["summary"][2]
    assert aqc["method"] == "AQC"
    assert aqc["test_mean"] == pytest.approx(np.mean([r["test"] for r in rows[4:]]))
    with open(paths["summary"]) as f:
        summary_csv = list(csv.DictReader(f))
    assert paths["summary"].name == "seeds_summary.csv"
    assert [r["method"] for r in summary_csv] == ["Joint", "Fine-tuning", "AQC"]
    assert float(summary_csv[2]["test_mean"]) == pytest.approx(aqc["test_mean"])
    assert json.loads(summary_csv[2]["seeds"]) == [0, 1]
    assert paths["txt"].read_text().startswith(table + "\nEnvironment: skcl ")


def test_a_missing_estimator_has_a_row_per_seed():
    missing = rp.Method("NC", "NoSuchClassifier", {"alpha": [1]}, {"Iris SR": 93.3333})
    rows, models = rp.run_column("ci-split-iris", "sr", [missing], random_state=5, n_seeds=3)
    assert [(r["seed"], r["available"]) for r in rows] == [(5, False), (6, False), (7, False)]
    assert models == {}
    (cell,) = rp.summarize(rows)
    assert cell["available"] is False and "test_mean" not in cell
    assert "over 3 seeds (5–7)" in rp.format_table(rows)
    nc_line = rp.format_table(rows).splitlines()[-1]
    assert "n/a" in nc_line and "93.33" in nc_line


@pytest.mark.parametrize("n_seeds", [0, -1, 2.0, "2", True])
def test_n_seeds_must_be_a_positive_integer(n_seeds):
    with pytest.raises(ValueError, match="n_seeds must be a positive integer"):
        rp.run_column("ci-split-iris", "sr", [], n_seeds=n_seeds)
    with pytest.raises(ValueError, match="n_seeds must be a positive integer"):
        rp.reproduce("ci-split-iris", "sr", [], n_seeds=n_seeds)


def test_baselines_not_in_the_paper_run_beside_it_and_are_marked(tmp_path):
    methods = rp.select_methods(["aqc", "online-ewc", "exact-gaussian", "exact-least-squares",
                                 "gaussiannb", "sgd-log-loss"])
    lines = []
    rows, models = rp.run_column("ci-split-iris", "sr", methods, log=lines.append)
    by_name = {row["method"]: row for row in rows}
    # The exact family keeps every task at its defaults; AQC's grid does not.
    assert by_name["Exact Gaussian"]["test"] >= 90
    assert by_name["GaussianNB"]["test"] >= 90  # scikit-learn's, by partial_fit
    assert by_name["SGD log loss"]["test"] == pytest.approx(100 / 3)  # it forgets
    assert by_name["Exact Gaussian"]["n_candidates"] == 1
    assert by_name["GaussianNB"]["origin"] == "scikit-learn"
    assert models["SGD log loss"].loss == "log_loss"
    # Every row has probabilities: log loss and ECE, never blank.
    for row in rows:
        assert np.isfinite(row["test_log_loss"]) and np.isfinite(row["test_ece"]), row["method"]
        assert np.isfinite(row["test_task_log_loss"]).all(), row["method"]
    said = {line.split(":")[0]: line for line in lines}
    for name in ("Exact least squares", "Exact Gaussian"):
        assert "log loss 0." in said[f"[Iris SR] {name}"]
    assert "nan" not in "".join(lines) and "no probabilities" not in "".join(lines)
    table = rp.format_table(rows)
    assert "Exact Gaussian †" in table and "GaussianNB ‡" in table
    assert "‡ not in the paper: scikit-learn's" in table
    assert "Online EWC §" in table and "§ not in the paper: a method of the field's" in table
    paths = rp.write_results(rows, tmp_path, "iris")
    assert "scikit-learn" in paths["csv"].read_text()


def test_the_defaults_protocol_searches_nothing():
    methods = rp.select_methods(["aqc", "exact-gaussian"])
    tuned, _ = rp.run_column("ci-split-iris", "sr", methods)
    defaults, models = rp.run_column("ci-split-iris", "sr", methods, protocol="defaults")
    assert [row["n_candidates"] for row in tuned] == [5, 1]
    assert [row["n_candidates"] for row in defaults] == [1, 1]
    assert models["AQC"].alpha == 1.0 and defaults[0]["protocol"] == "defaults"
    assert defaults[0]["test"] == pytest.approx(100 / 3)  # AQC at λ = 1 forgets
    assert defaults[1]["test"] == tuned[1]["test"]  # nothing to tune
    assert "at every method's defaults, no validation sequence" in rp.format_table(defaults)
    with pytest.raises(ValueError, match="protocol"):
        rp.run_column("ci-split-iris", "sr", methods, protocol="best")
