"""The linter: ``ruff check`` is clean on the library, the tests and the benchmarks.

Its configuration is in ``pyproject.toml`` (pycodestyle, pyflakes and
import order; lines of at most 100 characters). It runs here, inside the
README's test command, so that CI's last line stays pytest's own and a
newcomer's one command checks everything. ruff comes with the test extra.
"""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_finds_nothing():
    pytest.importorskip("ruff", reason="ruff is in the test extra: pip install '.[test]'")
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "skcl", "tests", "benchmarks"],
        cwd=ROOT, capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
