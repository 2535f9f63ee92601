"""Every Python code block of the README and of the docs runs, and prints
what its page says it prints.

The pages are ``README.md`` and every ``docs/**/*.rst`` and ``docs/**/*.md``
(a new page is picked up by the same walk; ``.. include::`` files are read
where they are included). A page's blocks run in order, as a reader pastes
them into one script: in one namespace, in a fresh working directory, with
the page's data (the bundled Iris, Wine and digits; MNIST files through
``SKCL_DATA_DIR``; when that is unset, a page's blocks from the first that
reads them on are checked as blocks not run are, and the test is skipped,
saying so). One test per page, so that pytest-xdist spreads the pages.

What a block prints is stated on its page, by a comment on the line that
prints it::

    print(score)   # prints 1.0
    print(score)   # prints 0.666...        ("..." stands for any text)
    print(score)   # prints 0.9055 ± 0.01   (every number within 0.01)
    print(score)   # prints 1.0 — a remark after a spaced dash is not output

and the block's output must be those lines, in order; a block with no such
comment must print nothing. A block must not warn (a ``UserWarning`` or a
``FutureWarning`` a reader would see) unless a ``# warns NameOfWarning``
comment on the page says it does, and why.

A block that cannot run here says so on the page, visibly, in its
``:caption:`` (rst; MyST's ``{code-block}`` takes the same option):

* ``Not run by the tests: <reason>`` (a GPU, a download, a cluster): it
  must still compile, and every name it uses must be bound by the page's
  blocks before it, by itself, or be a builtin;
* ``From skcl/<path>.py (an excerpt, not run)``: a piece of skcl's own
  source; it must compile, and the names it uses must exist in that module.
"""

import ast
import contextlib
import importlib
import importlib.util
import io
import json
import math
import os
import re
import subprocess
import sys
import textwrap
import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
#: Folders under docs/ that the build writes: not pages of the source.
GENERATED = {"_build", "auto_examples", "auto_notebooks", "generated", "jupyter_execute",
             "_templates", ".ipynb_checkpoints"}
PYTHON = {"python", "python3", "py"}
NOT_RUN = re.compile(r"^Not run by the tests: (?P<reason>\S.*)$")
EXCERPT = re.compile(r"^From (?P<path>skcl/\S+\.py) \(an excerpt, not run\)$")
#: Pages whose blocks read the MNIST files (skcl.datasets' image loaders).
NEEDS_IMAGE_FILES = re.compile(r"load_(ci_|di_)?(split_|permuted_|rotated_)?(fashion_)?mnist\(")
#: A block that imports torch needs the torch extra, which the test extra
#: leaves out (``pip install ".[torch]"``; CI installs it).
NEEDS_TORCH = re.compile(r"^\s*(import|from)\s+(torch|torchvision)\b", re.M)



@dataclass
class Block:
    """One Python code block of a page."""

    page: str          # path relative to the repository's root
    line: int          # where its code starts on the page (1-based)
    code: str          # dedented
    caption: str = ""  # "" for a block that runs

    @property
    def where(self):
        return f"{self.page}:{self.line}"


def pages():
    """README.md and the docs' rst and md pages, relative to the root."""
    found = [ROOT / "README.md"]
    for pattern in ("*.rst", "*.md"):
        found += [p for p in DOCS.rglob(pattern)
                  if not GENERATED & set(p.relative_to(DOCS).parts[:-1])]
    return sorted(str(p.relative_to(ROOT)) for p in found)


def _rst_lines(path, seen=()):
    """The page's lines as (text, source line), its includes read in place."""
    lines = []
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        include = re.match(r"^\s*\.\. include:: (\S+)\s*$", text)
        if include and path not in seen:
            included = (path.parent / include.group(1)).resolve()
            lines += _rst_lines(included, (*seen, path))
        else:
            lines.append((text, f"{path.relative_to(ROOT)}:{number}"))
    return lines


def _indent(text):
    return len(text) - len(text.lstrip())


def rst_blocks(page):
    """The ``.. code-block:: python`` (or ``code``, ``sourcecode``) blocks."""
    lines = _rst_lines(ROOT / page)
    blocks, i = [], 0
    directive = re.compile(r"^(\s*)\.\. (?:code-block|code|sourcecode)::\s*(\S*)\s*$")
    while i < len(lines):
        match = directive.match(lines[i][0])
        i += 1
        if not match:
            continue
        base, options, body = len(match.group(1)), {}, []
        while i < len(lines) and (option := re.match(r"^\s+:([\w-]+):\s*(.*)$", lines[i][0])) \
                and _indent(lines[i][0]) > base:
            options[option.group(1)] = option.group(2).strip()
            i += 1
        while i < len(lines) and (not lines[i][0].strip() or _indent(lines[i][0]) > base):
            body.append(lines[i])
            i += 1
        while body and not body[0][0].strip():
            body.pop(0)
        if match.group(2).lower() in PYTHON and body:
            code = textwrap.dedent("\n".join(text for text, _ in body)).strip("\n") + "\n"
            page_of, line = body[0][1].rsplit(":", 1)
            blocks.append(Block(page_of, int(line), code, options.get("caption", "")))
    return blocks


def md_blocks(page):
    """The fenced ```` ```python ```` and MyST ```` ```{code-block} python ```` blocks."""
    lines = (ROOT / page).read_text(encoding="utf-8").splitlines()
    blocks, i = [], 0
    fence = re.compile(r"^(\s*)(`{3,}|~{3,})\s*(?:\{(?:code-block|code|sourcecode)\}\s*)?(\S*)")
    while i < len(lines):
        match = fence.match(lines[i])
        i += 1
        if not match:
            continue
        marker, body, options = match.group(2), [], {}
        while i < len(lines) and (option := re.match(r"^\s*:([\w-]+):\s*(.*)$", lines[i])):
            options[option.group(1)] = option.group(2).strip()
            i += 1
        start = i + 1
        while i < len(lines) and not lines[i].strip().startswith(marker):
            body.append(lines[i])
            i += 1
        i += 1
        if match.group(3).lower() in PYTHON and "".join(body).strip():
            code = textwrap.dedent("\n".join(body)).strip("\n") + "\n"
            blocks.append(Block(page, start, code, options.get("caption", "")))
    return blocks


def blocks_of(page):
    return md_blocks(page) if page.endswith(".md") else rst_blocks(page)


PAGES = pages()
PAGES_WITH_BLOCKS = [p for p in PAGES if blocks_of(p)]


# ------------------------------------------------------- what a block prints


_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def stated_output(code):
    """The lines a block says it prints: its ``# prints ...`` comments, in
    order, each up to a `` — `` that starts a remark."""
    return [line.split(" — ")[0].strip()
            for line in re.findall(r"#\s*prints\s+(.*?)\s*$", code, re.M)]


def stated_warnings(code):
    return set(re.findall(r"#\s*warns\s+(\w+)", code))


def line_matches(expected, actual):
    """Whether one printed line is the stated one.

    ``a ± tol``: the text around the numbers equal and every number of
    ``a`` within ``tol``; otherwise equal up to runs of spaces, ``...``
    standing for any text.
    """
    actual = " ".join(actual.split())
    expected, _, tolerance = expected.partition(" ± ")
    expected = " ".join(expected.split())
    if tolerance:
        tol = float(tolerance)
        want, got = _NUMBER.findall(expected), _NUMBER.findall(actual)
        return (_NUMBER.sub("#", expected) == _NUMBER.sub("#", actual) and len(want) == len(got)
                and all(math.isclose(float(w), float(g), rel_tol=0, abs_tol=tol)
                        for w, g in zip(want, got)))
    pattern = ".*".join(re.escape(part) for part in expected.split("..."))
    return re.fullmatch(pattern, actual) is not None


def check_output(block, printed):
    expected = stated_output(block.code)
    lines = printed.rstrip("\n").splitlines() if printed.strip() else []
    assert len(lines) == len(expected) and all(map(line_matches, expected, lines)), (
        f"{block.where}: the block printed\n{printed}\nwhere its page says "
        + ("\n".join(f"# prints {e}" for e in expected) if expected else "nothing")
    )


# ---------------------------------------------------------- names and syntax


def undefined_names(code):
    """The names ruff finds undefined in ``code`` (F821), compiled first."""
    compile(code, "<block>", "exec")
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--isolated", "--select", "F821",
         "--output-format", "json", "--stdin-filename", "block.py", "-"],
        input=code, capture_output=True, text=True, check=False,
    )
    if result.returncode not in (0, 1):
        raise RuntimeError(result.stderr)
    return {re.search(r"`(.+?)`", d["message"]).group(1) for d in json.loads(result.stdout)}


def bound_names(code):
    """The names a block binds at its top level (what a later block may use)."""
    names = set()
    for node in ast.parse(code).body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        else:
            names |= {n.id for n in ast.walk(node)
                      if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return names


def check_not_run(block, namespace, *, marked=True):
    """A block marked on its page as not run: syntax and names only.

    ``namespace`` holds what the blocks before it bound (those not run
    bind their names as ``None``), and receives this block's names.
    ``marked=False``: a runnable block that this run cannot execute (no
    data), checked as if it were marked not run.
    """
    if not marked:
        missing = undefined_names(block.code) - set(namespace)
        assert not missing, f"{block.where}: names bound nowhere before: {sorted(missing)}"
    elif match := EXCERPT.match(block.caption):
        module = importlib.import_module(match.group("path")[:-3].replace("/", "."))
        missing = undefined_names(block.code) - set(vars(module))
        assert not missing, f"{block.where}: not in {match.group('path')}: {sorted(missing)}"
    else:
        assert NOT_RUN.match(block.caption), (
            f"{block.where}: caption {block.caption!r} says neither 'Not run by the tests: "
            "<reason>' nor 'From skcl/<path>.py (an excerpt, not run)'"
        )
        missing = undefined_names(block.code) - set(namespace)
        assert not missing, f"{block.where}: names bound nowhere before: {sorted(missing)}"
    namespace.update(dict.fromkeys(bound_names(block.code) - set(namespace)))


# ---------------------------------------------------------------- the pages


def run_block(block, namespace):
    printed = io.StringIO()
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(printed):
        warnings.simplefilter("always")
        # Those Python's default filters hide from a reader's script.
        for hidden in (DeprecationWarning, PendingDeprecationWarning, ResourceWarning):
            warnings.filterwarnings("ignore", category=hidden)
        exec(compile(block.code, block.where, "exec"), namespace)
    check_output(block, printed.getvalue())
    unexpected = [w for w in caught if w.category.__name__ not in stated_warnings(block.code)]
    assert not unexpected, f"{block.where} warns:\n" + "\n".join(
        f"{w.category.__name__}: {w.message}" for w in unexpected)


@pytest.mark.parametrize("page", PAGES_WITH_BLOCKS)
def test_page_code_blocks_run_and_print_what_the_page_says(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # what the blocks write stays out of the checkout
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    namespace, without_data = {"__name__": "__main__"}, None
    try:
        for block in blocks_of(page):
            if block.caption:
                check_not_run(block, namespace)
                continue
            if NEEDS_IMAGE_FILES.search(block.code) and not os.environ.get("SKCL_DATA_DIR"):
                without_data = without_data or (
                    block.where, "read the MNIST files: set SKCL_DATA_DIR to run them")
            if NEEDS_TORCH.search(block.code) and importlib.util.find_spec("torch") is None:
                without_data = without_data or (
                    block.where, 'need torch: pip install ".[torch]" to run them')
            if without_data:  # the rest is checked as if not run, then skipped
                check_not_run(block, namespace, marked=False)
            else:
                run_block(block, namespace)
    finally:
        import matplotlib.pyplot as plt

        plt.close("all")
    if without_data:
        where, why = without_data
        pytest.skip(f"{where} and the blocks after it {why} (checked for syntax and names "
                    "only)")


# ------------------------------------------------------------- the collector


def test_every_python_block_of_the_pages_is_collected():
    # A crude count of the openings, independent of the parsers.
    opening = re.compile(
        r"^\s*(\.\. (code-block|code|sourcecode):: *(python|python3|py)\s*$"
        r"|(```|~~~)\s*(\{(code-block|code|sourcecode)\}\s*)?(python|python3|py)\s*$)", re.M)
    texts = {p: (ROOT / p).read_text(encoding="utf-8") for p in PAGES}
    for page, text in texts.items():
        collected = [b for b in blocks_of(page) if b.page == page]
        assert len(collected) == len(opening.findall(text)), page
    assert "README.md" in PAGES_WITH_BLOCKS and "docs/index.rst" in PAGES_WITH_BLOCKS
    assert not any("_build" in p or "auto_examples" in p for p in PAGES)


def test_every_block_marked_not_run_gives_its_reason():
    for page in PAGES:
        for block in blocks_of(page):
            if block.caption:
                assert NOT_RUN.match(block.caption) or EXCERPT.match(block.caption), (
                    f"{block.where}: {block.caption!r}")


def test_printed_lines_are_compared_as_the_pages_state():
    assert line_matches("1.0", "1.0") and not line_matches("1.0", "0.9")
    assert line_matches("0.666...", "0.6666666666666666")
    assert not line_matches("0.666...", "0.7")
    assert line_matches("0.9055 ± 0.01", "0.9123") and not line_matches("0.9055 ± 0.01", "0.92")
    assert line_matches("acc 0.90 ± 0.01", "acc  0.905")
    assert not line_matches("acc 0.90 ± 0.01", "loss 0.905")
    assert stated_output("print(a)  # prints 1.0 — a remark\nb = 2  # not\n"
                         "print(c)   # prints x ...\n") == ["1.0", "x ..."]
    block = Block("page.rst", 1, "print(1)  # prints 2\n")
    with pytest.raises(AssertionError, match="page.rst:1"):
        check_output(block, "1\n")
    with pytest.raises(AssertionError, match="nothing"):
        check_output(Block("page.rst", 1, "x = 1\n"), "1\n")


def test_blocks_not_run_are_still_checked_for_names():
    assert undefined_names("import numpy as np\nprint(np.pi, clf)\n") == {"clf"}
    with pytest.raises(SyntaxError):
        undefined_names("def f(a, ...):\n    pass\n")
    block = Block("page.rst", 1, "clf.fit(X, y)\n", "Not run by the tests: needs a GPU")
    with pytest.raises(AssertionError, match=r"\['X', 'clf', 'y'\]"):
        check_not_run(block, {})
    check_not_run(block, {"clf": 0, "X": 0, "y": 0})
    namespace = {}
    check_not_run(Block("page.rst", 1, "import numpy as np\nfrom a import b as c\nclf = np\n"
                        "for i, (j, k) in c:\n    pass\ndef f():\n    inner = 1\n",
                        "Not run by the tests: needs a GPU"), namespace)
    assert set(namespace) == {"np", "c", "clf", "i", "j", "k", "f"}
    check_not_run(Block("page.rst", 9, "clf.fit(np.ones(3), c, f)\n",
                        "Not run by the tests: needs a GPU"), namespace)
    excerpt = Block("page.rst", 1, "x = PAPER_SEED + NOT_THERE\n",
                    "From skcl/datasets/__init__.py (an excerpt, not run)")
    with pytest.raises(AssertionError, match="NOT_THERE"):
        check_not_run(excerpt, {})
