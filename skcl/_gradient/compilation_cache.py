"""JAX's persistent compilation cache, on by default: compile once per machine.

Every training loop of skcl is a jitted XLA program, compiled the first
time a process meets its shapes. On CPU the compilation often costs more
than the training itself (a few seconds per network, method and task
size), and every new process (a script, a test session, a joblib worker of
a hyperparameter search) paid it again. JAX can keep the compiled
programs on disk; :func:`setup` turns that on the first time a skcl
estimator trains (the training drivers of :mod:`skcl._gradient.training` and the
gradient-trained classifiers' ``partial_fit`` call it), or when called
explicitly. No import changes JAX's configuration: ``import skcl`` (e.g.
for ``skcl --help``) does not even import JAX, and importing the
estimators leaves the process as it was until one of them learns.

Settings, read once per process from the environment:

``SKCL_COMPILATION_CACHE``
    ``0`` (or ``false``, ``no``, ``off``) turns the cache off.
``SKCL_COMPILATION_CACHE_DIR``
    Where the programs are kept; default ``$XDG_CACHE_HOME/skcl/jax``,
    else ``~/.cache/skcl/jax``.

A cache folder set through JAX itself (``JAX_COMPILATION_CACHE_DIR`` or
``jax.config.update("jax_compilation_cache_dir", ...)`` before a skcl
estimator first trains) is left as it is. Results do not depend on the
cache: a cached program is the very executable a compilation would give.
"""

import logging
import os
import tempfile
from pathlib import Path

__all__ = ["setup", "default_cache_dir"]

logger = logging.getLogger("skcl")

SWITCH_VARIABLE = "SKCL_COMPILATION_CACHE"
DIR_VARIABLE = "SKCL_COMPILATION_CACHE_DIR"
_OFF = {"0", "false", "no", "off"}

# JAX only caches programs that took at least a second to compile, which
# leaves out most of skcl's small CPU programs (measured: 0.1–1 s each, and
# a task sequence compiles dozens). Below this threshold are the single
# operations JAX compiles when run eagerly (milliseconds): reading them
# from disk saves nothing and would fill the folder with thousands of files.
MIN_COMPILE_TIME_S = 0.05

_done = False


def default_cache_dir():
    """``$SKCL_COMPILATION_CACHE_DIR``, else a per-user cache folder.

    Returns
    -------
    pathlib.Path
        ``$XDG_CACHE_HOME/skcl/jax`` when ``XDG_CACHE_HOME`` is set, else
        ``~/.cache/skcl/jax``.
    """
    path = os.environ.get(DIR_VARIABLE)
    if path:
        return Path(path).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base).expanduser() / "skcl" / "jax"


def _writable(path):
    """Create ``path`` if needed and check that a file can be written there."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".skcl-write-test-"):
            pass
    except OSError as error:
        return error
    return None


def setup():
    """Turn on JAX's persistent compilation cache, once per process.

    Does nothing when ``SKCL_COMPILATION_CACHE`` is off, when a cache
    folder was already configured through JAX, or on a second call. An
    unusable folder (read-only, not creatable) leaves the cache off: JAX
    would otherwise warn on every compilation, and a cache is an
    optimisation, never a reason to fail; the reason is logged at DEBUG
    level on the ``skcl`` logger.

    Returns
    -------
    str or None
        The cache folder in use, or None when skcl did not enable one.
    """
    global _done
    if _done:
        return None
    _done = True
    if os.environ.get(SWITCH_VARIABLE, "1").strip().lower() in _OFF:
        logger.debug("JAX compilation cache off: %s is set to %r.", SWITCH_VARIABLE,
                     os.environ[SWITCH_VARIABLE])
        return None
    import jax

    if jax.config.jax_compilation_cache_dir is not None:
        logger.debug("JAX compilation cache already set to %s; left as it is.",
                     jax.config.jax_compilation_cache_dir)
        return None
    path = default_cache_dir()
    error = _writable(path)
    if error is not None:
        logger.debug("JAX compilation cache off: %s is not writable (%s).", path, error)
        return None
    jax.config.update("jax_compilation_cache_dir", str(path))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", MIN_COMPILE_TIME_S)
    # -1: cache programs of any size; JAX's default (0) lets a backend
    # raise the minimum for its file system.
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
    logger.debug("JAX compilation cache in %s.", path)
    return str(path)
