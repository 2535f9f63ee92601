"""The printed report: summaries over seeds and the table beside the paper's."""

import unicodedata

import numpy as np

from ._registry import METHODS
from ._sequences import SEQUENCES

__all__ = ["format_table", "summarize"]


def _fmt(value):
    return "–" if value is None else f"{value:.2f}"


def _width(text):
    """Columns ``text`` takes on a terminal: East Asian wide and full-width
    characters take two, combining marks none, every other character one.

    Padding by ``len`` would shift a row by each wide or combining character
    its method's name or mark holds.
    """
    return sum(
        0 if unicodedata.combining(char) else
        2 if unicodedata.east_asian_width(char) in "WF" else 1
        for char in text
    )


def _ljust(text, width):
    return text + " " * max(width - _width(text), 0)


def _rjust(text, width):
    return " " * max(width - _width(text), 0) + text


def _center(text, width):
    # As str.center, which puts the odd space on the right.
    space = max(width - _width(text), 0)
    return " " * (space // 2) + text + " " * (space - space // 2)


#: Table I's numbers are rounded (to 4 decimals); ours are exact fractions.
#: A seed "reaches" the paper's number when it is at most this far below.
_REACH_TOLERANCE = 1e-3


def _several_seeds(rows):
    """Whether ``rows`` hold several seeds' runs (rows with a ``seed``)."""
    return any("seed" in row for row in rows)


def _reached(cell):
    return f"{cell['n_reach_paper']}/{cell['n_seeds']}"


def summarize(rows):
    """Each cell (column × method) over its seeds.

    Parameters
    ----------
    rows : list of dict
        As returned by :func:`run_column` or :func:`reproduce`, one row
        per column, method and seed.

    Returns
    -------
    list of dict
        One per column and method, in the rows' order: ``sequence``,
        ``model``, ``column``, ``method``, ``available``, ``n_seeds``,
        ``seeds``; the test final average accuracy's ``test_mean``,
        ``test_sd`` (the *sample* standard deviation, ``ddof=1``; None for
        a single seed), ``test_min``, ``test_median`` and ``test_max`` (%);
        ``test_forgetting_mean``; the paper's and the reference code's
        numbers (``paper``, ``reference``); and ``n_reach_paper``, the
        number of seeds whose test accuracy reaches the paper's number
        (at least it, up to its rounding), with ``fraction_reach_paper``
        (None where the paper has no number). A method this build lacks
        has ``available`` False and no statistics.

    Examples
    --------
    >>> from skcl.reproduce import summarize
    >>> rows = [{"sequence": "ci-split-iris", "model": "sr", "column": "Iris SR",
    ...          "method": "EWC", "seed": seed, "paper": 63.3333, "reference": 63.33,
    ...          "available": True, "test": test, "test_forgetting": 50.0}
    ...         for seed, test in enumerate([33.3333, 66.6667, 66.6667])]
    >>> (cell,) = summarize(rows)
    >>> round(cell["test_mean"], 2), round(cell["test_sd"], 2), cell["n_reach_paper"]
    (55.56, 19.25, 2)
    """
    cells = {}
    for row in rows:
        cells.setdefault((row["column"], row["method"]), []).append(row)
    summary = []
    for (column, method), group in cells.items():
        first = group[0]
        cell = {
            "sequence": first["sequence"], "model": first["model"], "column": column,
            "method": method, "available": bool(first["available"]), "n_seeds": len(group),
            "seeds": [row.get("seed") for row in group],
        }
        done = [row for row in group if row["available"]]
        if done:
            tests = np.array([row["test"] for row in done])
            paper = first["paper"]
            reach = None if paper is None else int(np.sum(tests >= paper - _REACH_TOLERANCE))
            cell.update(
                test_mean=float(np.mean(tests)),
                test_sd=float(np.std(tests, ddof=1)) if len(tests) > 1 else None,
                test_min=float(np.min(tests)),
                test_median=float(np.median(tests)),
                test_max=float(np.max(tests)),
                test_forgetting_mean=float(np.mean([row["test_forgetting"] for row in done])),
                n_reach_paper=reach,
                fraction_reach_paper=None if reach is None else reach / len(tests),
            )
        cell.update(paper=first["paper"], reference=first["reference"])
        summary.append(cell)
    return summary


def _seed_range(seeds):
    seeds = sorted(set(seeds))
    if len(seeds) > 2 and seeds == list(range(seeds[0], seeds[-1] + 1)):
        return f"{seeds[0]}–{seeds[-1]}"
    return ", ".join(str(s) for s in seeds)


_ORIGIN_MARKS = {"paper": "", "field": " §", "skcl": " †", "scikit-learn": " ‡"}


def _label(row):
    """A row's method as the table shows it: § the field's, † skcl's baselines, ‡ scikit-learn's."""
    return row["method"] + _ORIGIN_MARKS[row.get("origin") or _origin(row["method"])]


def _origin(name):
    return next((m.origin for m in METHODS if m.name == name), "paper")


def _protocol_note(rows):
    if any(row.get("protocol") == "defaults" for row in rows):
        return " at every method's defaults, no validation sequence"
    return ""


def _footnotes(rows):
    lines = []
    origins = {row.get("origin") or _origin(row["method"]) for row in rows}
    if "field" in origins:
        lines.append("§ not in the paper: a method of the field's scenario table (van de Ven "
                     "and Tolias), skcl's implementation, searched as the paper's rows are.")
    if "skcl" in origins:
        lines.append("† not in the paper: skcl's exact family, L_{t-1} kept as sums, "
                     "no grid (its one hyperparameter from all rows' sums: GCV or OAS).")
    if "scikit-learn" in origins:
        # RanDumb is named only where its row is in the table.
        randumb = any(row["method"] == "RanDumb" for row in rows)
        lines.append("‡ not in the paper: scikit-learn's, by partial_fit at its defaults"
                     + (", or (RanDumb) refitted on all data seen, its joint bound."
                        if randumb else "."))
    for column in dict.fromkeys(row["column"] for row in rows):
        row = next(r for r in rows if r["column"] == column)
        note = getattr(SEQUENCES.get(row.get("sequence")), "note", None)
        if note:  # where the column's "paper" numbers come from, and its budget
            lines.append(note)
        if "pretraining" in row:
            ours, papers = row["pretraining"], row["paper_pretraining"]
            note = "as in the paper" if ours == papers else f"the paper: {papers}"
            lines.append(f"{column}: features of an extractor pre-trained on {ours} ({note}).")
    for row in rows:
        if row.get("settings"):
            fixed = ", ".join(f"{k}={v!r}" for k, v in row["settings"].items())
            lines.append(f"{row['column']}: {row['method']} with {fixed}.")
    return list(dict.fromkeys(lines))  # once, however many seeds


def _format_seeds_table(rows):
    """One line per column × method: mean ± sd, range, paper, ref, seeds ≥ paper."""
    summary = summarize(rows)
    seeds = [row["seed"] for row in rows if "seed" in row]
    col_width = max(_width("column"), *(_width(c["column"]) for c in summary))
    labels = {row["method"]: _label(row) for row in rows}
    name_width = max(_width("method"), *(_width(labels[c["method"]]) for c in summary))
    header = ["mean ±    sd", "min", "max", "paper", "ref", "≥ paper"]
    widths = [len("100.00 ± 100.00"), 6, 6, 6, 6, 7]
    lines = [
        f"Test final average accuracy (%){_protocol_note(rows)} over {len(set(seeds))} seeds "
        f"({_seed_range(seeds)}): mean ± sample standard deviation,",
        "min and max; paper: Table I (one seed); ref: the paper's code on 2 cores (one seed);",
        "≥ paper: the seeds whose accuracy reaches the paper's number",
        "  ".join([
            _ljust("column", col_width), _ljust("method", name_width),
            *(_rjust(h, w) for h, w in zip(header, widths)),
        ]),
    ]
    previous = None
    for cell in summary:
        label = "" if cell["column"] == previous else cell["column"]
        previous = cell["column"]
        if "test_mean" in cell:
            sd = "–" if cell["test_sd"] is None else f"{cell['test_sd']:.2f}"
            values = [f"{cell['test_mean']:.2f} ± {sd:>5}", _fmt(cell["test_min"]),
                      _fmt(cell["test_max"])]
            reach = "–" if cell["n_reach_paper"] is None else _reached(cell)
        else:
            values, reach = ["n/a", "", ""], ""
        values += [_fmt(cell["paper"]), _fmt(cell["reference"]), reach]
        lines.append("  ".join([
            _ljust(label, col_width), _ljust(labels[cell["method"]], name_width),
            *(_rjust(v, w) for v, w in zip(values, widths)),
        ]).rstrip())
    return "\n".join(lines + _footnotes(rows))


def format_table(rows):
    """Table I's layout: methods down, columns across, ``ours / paper / ref``.

    Each cell's three numbers stand right-aligned under their headers, and
    names are padded by the columns a terminal gives them (a wide character
    takes two), so rows marked † or ‡, or holding any other character, line
    up with the rest.

    ``paper`` is Table I (it has no 2D Iris column and no Fashion-MNIST
    column); ``ref`` is the paper's public code on a 2-core CPU (classical
    sequences only); "n/a" marks a method this build of skcl lacks. Image
    columns get a footnote naming the extractor's pre-training task, and
    whether it is the paper's.

    Rows of several seeds (``run_column(..., n_seeds=N)``) give one line
    per column × method instead, whatever the number of columns: the
    mean ± the sample standard deviation of the test final average
    accuracy over the seeds, its minimum and maximum, the paper's and
    the reference code's single numbers, and how many seeds reach the
    paper's number (e.g. ``3/10``); see :func:`summarize`.

    Parameters
    ----------
    rows : list of dict
        As returned by :func:`run_column` or :func:`reproduce`.

    Returns
    -------
    str

    Examples
    --------
    >>> from skcl.reproduce import METHODS, format_table, run_column
    >>> rows, _ = run_column("ci-split-iris", "sr", [m for m in METHODS if m.name == "Joint"])
    >>> print(format_table(rows))
    Test final average accuracy (%): ours / paper's Table I / paper's code on 2 cores
    method         Iris SR
             ours / paper /   ref
    Joint   96.67 / 96.67 / 96.67

    Several seeds:

    >>> rows, _ = run_column("ci-split-iris", "sr", [m for m in METHODS if m.name == "Joint"],
    ...                      n_seeds=3)
    >>> print(format_table(rows))  # doctest: +NORMALIZE_WHITESPACE
    Test final average accuracy (%) over 3 seeds (0–2): mean ± sample standard deviation,
    min and max; paper: Table I (one seed); ref: the paper's code on 2 cores (one seed);
    ≥ paper: the seeds whose accuracy reaches the paper's number
    column   method     mean ±    sd     min     max   paper     ref  ≥ paper
    Iris SR  Joint    96.67 ±  0.00   96.67   96.67   96.67   96.67      3/3
    """
    if not rows:
        return "Test final average accuracy (%): no method was run."
    if _several_seeds(rows):
        return _format_seeds_table(rows)
    columns = list(dict.fromkeys(row["column"] for row in rows))
    methods = list(dict.fromkeys(_label(row) for row in rows))
    # Each cell is three fields, each right-aligned in its own width, so a
    # missing number ("–") keeps the others under their headers.
    fields = {}
    for row in rows:
        ours = _fmt(row.get("test")) if row["available"] else "n/a"
        fields[_label(row), row["column"]] = (ours, _fmt(row["paper"]), _fmt(row["reference"]))
    names = ("ours", "paper", "ref")
    field_widths = [max(_width(text) for text in [name, *(f[k] for f in fields.values())])
                    for k, name in enumerate(names)]

    def cell(parts):
        return " / ".join(_rjust(part, w) for part, w in zip(parts, field_widths))

    subheader = cell(names)
    width = max(_width(text) for text in [subheader, *columns])
    name_width = max(_width("method"), *(_width(m) for m in methods))
    lines = [
        f"Test final average accuracy (%){_protocol_note(rows)}: ours / paper's Table I / "
        "paper's code on 2 cores",
        "  ".join([_ljust("method", name_width)] + [_center(c, width) for c in columns]),
        "  ".join([" " * name_width] + [_rjust(subheader, width)] * len(columns)),
    ]
    for method in methods:
        lines.append("  ".join(
            [_ljust(method, name_width)]
            + [_rjust(cell(fields[method, column]) if (method, column) in fields else "", width)
               for column in columns]
        ))
    return "\n".join([line.rstrip() for line in lines] + _footnotes(rows))
