"""The persistent compilation cache: on by default, off on request, never in the way.

Each check runs in a fresh process, since the cache is set up once per
process, when a skcl estimator first trains (never by an import).
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from skcl._gradient import compilation_cache as _compilation_cache

ROOT = Path(__file__).resolve().parents[1]

# Imports the training code, then: with "fit", compiles and runs one small
# estimator's programs; with "setup", calls the set-up its training calls
# first (half the time of a fit: the checks that need no program written
# use it); with nothing, stops there. Says which cache folder JAX uses.
SCRIPT = """
import warnings
warnings.simplefilter("error", UserWarning)
import logging, sys
logging.basicConfig(level=logging.DEBUG, stream=sys.stderr)
import skcl._gradient.training
import jax, jax.numpy as jnp
from skcl import FineTuningClassifier
from skcl.datasets import load_ci_split_iris
if sys.argv[1:] == ["fit"]:
    data = load_ci_split_iris()
    FineTuningClassifier(n_epochs=2, random_state=0).partial_fit(*data.train[0],
                                                                 classes=data.classes)
elif sys.argv[1:] == ["setup"]:
    skcl._gradient.training._setup_compilation_cache()
print(jax.config.jax_compilation_cache_dir)
"""


def _run(tmp_path, mode="fit", **env):
    environment = {k: v for k, v in os.environ.items()
                   if not k.startswith(("SKCL_COMPILATION", "JAX_COMPILATION"))}
    environment.update(PYTHONPATH=str(ROOT), HOME=str(tmp_path / "home"),
                       XDG_CACHE_HOME="", **env)
    command = [sys.executable, "-c", SCRIPT] + ([mode] if mode else [])
    result = subprocess.run(command, env=environment, cwd=tmp_path, capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()[-1], result.stderr


def test_on_by_default_in_the_per_user_cache_folder(tmp_path):
    folder, _ = _run(tmp_path)
    expected = tmp_path / "home" / ".cache" / "skcl" / "jax"
    assert Path(folder) == expected
    # The small CPU programs are written, not only those compiling for > 1 s.
    assert any(expected.iterdir())


def test_the_folder_can_be_chosen_or_the_cache_turned_off(tmp_path):
    folder, _ = _run(tmp_path, SKCL_COMPILATION_CACHE_DIR=str(tmp_path / "mine"))
    assert Path(folder) == tmp_path / "mine" and any((tmp_path / "mine").iterdir())
    folder, stderr = _run(tmp_path, "setup", SKCL_COMPILATION_CACHE="0")
    assert folder == "None"
    assert "JAX compilation cache off" in stderr
    assert not (tmp_path / "home" / ".cache").exists()


def test_an_unwritable_folder_leaves_the_cache_off_silently(tmp_path):
    # A regular file where the folder should be: it cannot be created. (A
    # read-only folder would not do: the tests may run as root.)
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    # warnings are errors in the script: the run itself shows none is raised.
    folder, stderr = _run(tmp_path, "setup", SKCL_COMPILATION_CACHE_DIR=str(blocker / "jax"))
    assert folder == "None"
    assert "is not writable" in stderr  # the DEBUG record says why


def test_a_folder_set_through_jax_is_left_alone(tmp_path):
    folder, _ = _run(tmp_path, "setup", JAX_COMPILATION_CACHE_DIR=str(tmp_path / "jaxs"))
    assert Path(folder) == tmp_path / "jaxs"


def test_importing_skcl_changes_nothing_in_the_process(tmp_path):
    # Importing the estimators and the training code leaves JAX's
    # configuration alone; the first training switches the cache on.
    folder, stderr = _run(tmp_path, mode=None)
    assert folder == "None"
    assert "JAX compilation cache" not in stderr
    assert not (tmp_path / "home" / ".cache").exists()


@pytest.mark.parametrize("xdg, expected", [("", ".cache/skcl/jax"), ("/xdg", "/xdg/skcl/jax")])
def test_default_folder(monkeypatch, tmp_path, xdg, expected):
    monkeypatch.delenv(_compilation_cache.DIR_VARIABLE, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", xdg)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert _compilation_cache.default_cache_dir() == tmp_path / expected
