"""What `skcl reproduce` shows a person: tables whose columns line up on a
terminal whatever marks a row carries, read back from the printed text."""

import re
import unicodedata

import numpy as np
import pytest

import skcl.__main__ as cli
from skcl.reproduce import METHODS, format_table, write_results


def _display(char):
    """Terminal columns of one character (wide 2, combining 0, else 1)."""
    if unicodedata.combining(char):
        return 0
    return 2 if unicodedata.east_asian_width(char) in "WF" else 1


def _tokens(line, start=0):
    """(first column, column after the last, text) of each space-free run of
    ``line`` from display column ``start`` on, in terminal columns."""
    columns, column = [], 0
    for char in line:
        columns.append(column)
        column += _display(char)
    columns.append(column)
    return [(columns[m.start()], columns[m.end()], m.group())
            for m in re.finditer(r"\S+", line) if columns[m.start()] >= start]


def _check_right_aligned(header, rows, start):
    """Every token of every row, from display column ``start`` on, ends in
    a column where a header token ends: numbers stand under their headers."""
    ends = {end for _, end, _ in _tokens(header, start)}
    assert ends, header
    for row in rows:
        tokens = _tokens(row, start)
        assert tokens, row
        stray = [text for _, end, text in tokens if end not in ends]
        assert not stray, f"{stray} under no header:\n{header}\n{row}"


def _label_end(labels):
    """The display column after the widest label: where the numbers begin."""
    return max(sum(_display(c) for c in label) for label in labels)


def _rows(columns, methods, *, seeds=(None,)):
    rows = []
    for seed in seeds:
        for column in columns:
            for name, origin, paper in methods:
                row = {"sequence": "s", "model": "sr", "column": column, "method": name,
                       "origin": origin, "available": name != "SI", "test": 100 / 3,
                       "test_forgetting": 1.5, "paper": paper,
                       "reference": None if paper is None else paper - 1}
                if seed is not None:
                    row["seed"] = seed
                rows.append(row)
    return rows


# Marks and names of every width: †/‡ (one column each), a wide CJK name and
# a combining accent (zero columns), beside the paper's unmarked methods.
_METHODS = [
    ("Joint", "paper", 96.6667), ("SI", "paper", 63.3333), ("EWC", "paper", 100.0),
    ("Exact least squares", "skcl", None), ("GaussianNB", "scikit-learn", None),
    ("学習", "skcl", None), ("Me\u0301thode", "scikit-learn", None),
]


def test_one_seed_table_lines_up_whatever_the_marks():
    rows = _rows(["Iris SR", "Wine FCNN", "ＣＩ ✓"], _METHODS)
    lines = format_table(rows).splitlines()
    header, subheader, body = lines[1], lines[2], lines[3:3 + len(_METHODS)]
    labels = [line.split("  ")[0] for line in body]
    assert labels == ["Joint", "SI", "EWC", "Exact least squares †", "GaussianNB ‡", "学習 †",
                      "Me\u0301thode ‡"]
    start = _label_end(labels)
    _check_right_aligned(subheader, body, start)
    # Each column's name is centred over its cells: its middle lies inside
    # the span of its three fields.
    fields = _tokens(subheader, start)
    spans = [(fields[k][0], fields[k + 4][1]) for k in range(0, len(fields), 5)]
    assert len(spans) == 3
    for name, (lo, hi) in zip(["Iris SR", "Wine FCNN", "ＣＩ ✓"], spans):
        before = header[:header.index(name)]
        first = sum(map(_display, before))
        middle = first + sum(map(_display, name)) / 2
        assert lo <= middle <= hi, (name, header, subheader)
    # A method without the paper's numbers: its own number under "ours".
    exact = body[3]
    assert [t for _, _, t in _tokens(exact, start)][:5] == ["33.33", "/", "–", "/", "–"]
    assert "n/a" in body[1]


def test_several_seeds_table_lines_up_whatever_the_marks():
    rows = _rows(["Iris SR", "ＣＩ"], _METHODS, seeds=(0, 1, 2))
    lines = format_table(rows).splitlines()
    header = next(line for line in lines if line.startswith("column"))
    body = lines[lines.index(header) + 1:lines.index(header) + 1 + 2 * len(_METHODS)]
    method_start = header.index("method")
    for line in body:
        # The method's name starts under "method", whatever the column's width.
        first = next(t for t in _tokens(line) if t[0] >= method_start)
        assert first[0] == method_start, line
    start = method_start + max(sum(map(_display, name)) for name, _, _ in _METHODS) + 2
    _check_right_aligned(header, body, start)


def test_write_results_text_lines_up(tmp_path):
    """mnist.txt's writer: the same table in the file, marked rows aligned."""
    rows = _rows(["CI Split MNIST", "DI Split MNIST"], _METHODS)
    for row in rows:
        row.update(pretraining="Fashion-MNIST", paper_pretraining="Fashion-MNIST")
    text = write_results(rows, tmp_path, "mnist")["txt"].read_text()
    lines = text.splitlines()
    body = lines[3:3 + len(_METHODS)]
    _check_right_aligned(lines[2], body, _label_end([line.split("  ")[0] for line in body]))


@pytest.mark.parametrize("several", [False, True], ids=["one seed", "two seeds"])
def test_the_command_prints_an_aligned_table(tmp_path, capsys, several):
    """The real command on cheap methods of each origin: the paper's, skcl's
    (†) and scikit-learn's (‡)."""
    names = [m.name for m in METHODS]
    assert {"Joint", "Exact Gaussian", "GaussianNB"} <= set(names)
    argv = ["reproduce", "ci-split-iris", "--model", "sr", "--methods", "joint",
            "exact-gaussian", "gaussiannb", "--quiet", "--output", str(tmp_path)]
    if several:
        argv += ["--seeds", "2"]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out.splitlines()
    printed = [line for line in out if line.startswith(("Joint", "Exact Gaussian †",
                                                        "Iris SR", "  ", "GaussianNB ‡"))]
    if several:
        header = next(line for line in out if line.startswith("column"))
        body = [line for line in printed if line.startswith(("Iris SR", " "))][:3]
        assert any("†" in line for line in body) and any("‡" in line for line in body)
        _check_right_aligned(header, body, header.index("method") + len("Exact Gaussian †") + 2)
    else:
        subheader = next(line for line in out if line.strip().startswith("ours"))
        body = [line for line in out if line.startswith(("Joint", "Exact Gaussian †",
                                                          "GaussianNB ‡"))]
        assert len(body) == 3
        _check_right_aligned(subheader, body, len("Exact Gaussian †"))
        file = (tmp_path / "ci-split-iris.txt").read_text().splitlines()
        assert file[:5] == out[out.index(subheader) - 2:out.index(subheader) + 3]


def _matrix_rows(columns, methods, n_tasks, *, seeds=(None,)):
    """Rows with test accuracy matrices: method k forgets every task but the
    last k+1, and seed s adds s % to the last task's final accuracy."""
    rows = []
    for seed in seeds:
        for column in columns:
            for k, (name, origin, _) in enumerate(methods):
                R = np.triu(np.full((n_tasks, n_tasks), 90.0))
                R[: max(n_tasks - 1 - k, 0), -1] = 0.0
                R[-1, -1] = 90.0 + (seed or 0)
                row = {"sequence": "s", "model": "sr", "column": column, "method": name,
                       "origin": origin, "available": True, "test_accuracy_matrix": R.tolist()}
                if seed is not None:
                    row["seed"] = seed
                rows.append(row)
    rows.append({"sequence": "s", "model": "sr", "column": columns[0], "method": "Missing",
                 "available": False})
    return rows


@pytest.mark.parametrize("n_seeds", [1, 2])
def test_the_figure_is_one_grid_per_column_with_methods_as_rows(tmp_path, monkeypatch, n_seeds):
    """`skcl reproduce mnist`'s figure: one grid per column (here 2, of 5
    tasks, and 13 methods as the registry has), rows marked as in the
    table, final accuracies per task and their mean in every cell, one
    shared colour scale and colour bar, numbers at a legible size."""
    pytest.importorskip("matplotlib")
    from PIL import Image

    import skcl.plotting
    from skcl.reproduce._files import write_accuracy_matrices

    drawn = []

    def keep(grids, **kwargs):
        drawn.append(plot(grids, **kwargs))
        return drawn[-1]

    plot = skcl.plotting.plot_final_accuracies
    monkeypatch.setattr(skcl.plotting, "plot_final_accuracies", keep)
    # The figure's font has no CJK glyphs: the marks and the accent only.
    methods = [m for m in _METHODS if m[0] != "学習"]
    methods += [(f"Method {k}", "paper", None) for k in range(13 - len(methods))]
    seeds = (None,) if n_seeds == 1 else tuple(range(n_seeds))
    rows = _matrix_rows(["CI Split MNIST", "DI Split MNIST"], methods, 5, seeds=seeds)
    path = write_accuracy_matrices(rows, tmp_path / "mnist_accuracy_matrices.png")
    width, height = Image.open(path).size
    # One image a screen shows whole at 100 %: not a 4,585-pixel strip.
    assert width <= 1600 and height <= 1000, (width, height)

    (fig,) = drawn
    grid_axes = [ax for ax in fig.axes if ax.images]
    titles = ["CI Split MNIST", "DI Split MNIST"]
    if n_seeds > 1:
        titles = [f"{title} (mean of 2 seeds)" for title in titles]
    assert [ax.get_title() for ax in grid_axes] == titles
    assert len(fig.axes) == 3  # two grids and one colour bar
    assert {ax.images[0].get_clim() for ax in grid_axes} == {(0, 100)}
    labels = [t.get_text() for t in grid_axes[0].get_yticklabels()]
    assert labels[:6] == ["Joint", "SI", "EWC", "Exact least squares †", "GaussianNB ‡",
                          "Me\u0301thode ‡"]
    assert len(labels) == 13 and "Missing" not in labels  # not run: no row
    assert [t.get_text() for t in grid_axes[0].get_xticklabels()] == [
        "0", "1", "2", "3", "4", "mean"]
    texts = [t.get_text() for t in grid_axes[1].texts]
    last = 90 + (n_seeds - 1) / 2
    # Row k: tasks 0..3-k forgotten, the rest kept, then the mean.
    assert texts[:6] == ["0", "0", "0", "0", f"{last:.0f}", f"{last / 5:.0f}"]
    assert texts[6:12] == ["0", "0", "0", "90", f"{last:.0f}", f"{(90 + last) / 5:.0f}"]
    assert min(t.get_fontsize() for ax in grid_axes for t in ax.texts) >= 8


def test_the_figure_refuses_matrices_of_two_sizes_in_one_grid():
    pytest.importorskip("matplotlib")
    from skcl.plotting import plot_final_accuracies

    with pytest.raises(ValueError, match="different numbers of tasks"):
        plot_final_accuracies({"Iris SR": {"A": np.eye(3), "B": np.eye(2)}})
    with pytest.raises(ValueError, match="square"):
        plot_final_accuracies({"Iris SR": {"A": np.ones((2, 3))}})
    with pytest.raises(ValueError, match="no accuracy matrix"):
        plot_final_accuracies({"Iris SR": {}})


def test_a_run_with_nothing_to_draw_writes_no_figure(monkeypatch, tmp_path, capsys):
    """No method available (e.g. a build without them): the table says n/a
    and the command succeeds without a figure, instead of failing on it."""
    pytest.importorskip("matplotlib")
    from skcl import reproduce as rp

    rows = [{"sequence": "ci-split-iris", "model": "sr", "column": "Iris SR",
             "method": "NC", "available": False, "paper": 93.3333, "reference": 93.33}]
    monkeypatch.setattr(rp, "reproduce", lambda *args, **kwargs: (rows, {}))
    assert cli.main(["reproduce", "ci-split-iris", "--model", "sr", "--methods", "nc",
                     "--quiet", "--output", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "n/a / 93.33 / 93.33" in out
    assert not list(tmp_path.glob("*.png")) and (tmp_path / "ci-split-iris.txt").is_file()
