"""Local Sphinx extension and gallery hooks of skcl's documentation.

* The public API: :func:`public_modules`, :func:`public_names` and
  :func:`public_doc` walk ``skcl`` and every public submodule's
  ``__all__``; ``tests/test_docs.py`` uses them to demand a docstring and a
  page for every public name.
* Notebooks: every ``examples/*.ipynb`` is copied to ``auto_notebooks/``
  when the build starts, with an index page, and myst-nb executes it.
* Module variables (``PAPER_SEED``, ``METHODS``...) are documented by a
  ``#:`` comment or a string below their assignment; autodoc only looks in
  the module that re-exports them, so their documentation is fetched from
  the submodule that assigns them.
* Gallery hooks (named in ``sphinx_gallery_conf`` by their dotted names so
  that the configuration stays picklable): per-script arguments, clearing
  jax's compiled executables between scripts, and a figure scraper that
  also shows the bare ``matplotlib.figure.Figure`` objects that
  :mod:`skcl.plotting` returns.
"""

import importlib
import inspect
import pkgutil
import re
import shutil
import sys
from pathlib import Path

PACKAGE = "skcl"

# ---------------------------------------------------------------- public API


def public_modules(package=PACKAGE):
    """The package and its public submodules, at any depth.

    A module is public when no part of its dotted name starts with "_".
    """
    root = importlib.import_module(package)
    names = [package]
    for info in pkgutil.walk_packages(root.__path__, prefix=package + "."):
        if any(part.startswith("_") for part in info.name.split(".")[1:]):
            continue
        names.append(info.name)
    return names


def public_names(package=PACKAGE):
    """``(module, name)`` for every name in a public module's ``__all__``.

    Raises
    ------
    AttributeError
        When a public module has no ``__all__``: its public names would be
        unknown.
    """
    pairs = []
    for module_name in public_modules(package):
        module = importlib.import_module(module_name)
        if not hasattr(module, "__all__"):
            raise AttributeError(
                f"The public module {module_name} has no __all__; list its public "
                "names there (or rename it with a leading underscore)."
            )
        pairs += [(module_name, name) for name in module.__all__]
    return pairs


def attribute_doc(module_name, name):
    """Documentation of a module variable, wherever in the package it is assigned.

    The ``#:`` comment or the string literal after the assignment, searched
    in ``module_name`` and then in its (already imported) submodules.
    """
    from sphinx.pycode import ModuleAnalyzer

    candidates = [module_name] + sorted(
        m for m in list(sys.modules) if m.startswith(module_name + ".")
    )
    for candidate in candidates:
        try:
            docs = ModuleAnalyzer.for_module(candidate).find_attr_docs()
        except Exception:  # no source (built-in, compiled): nothing to find
            continue
        lines = docs.get(("", name))
        if lines and "".join(lines).strip():
            return "\n".join(lines).strip()
    return ""


def public_doc(module_name, name):
    """The object's own documentation, or "" when it has none.

    Classes and functions need their own ``__doc__`` (not one inherited from
    a base class, nor the signature that ``dataclass`` writes in place of a
    missing docstring); other objects need a ``#:`` comment or a docstring
    after their assignment.
    """
    obj = getattr(importlib.import_module(module_name), name)
    if inspect.isclass(obj) or inspect.isroutine(obj):
        doc = obj.__dict__.get("__doc__") if inspect.isclass(obj) else obj.__doc__
        doc = inspect.cleandoc(doc or "")
        if inspect.isclass(obj) and doc.startswith(f"{obj.__name__}("):
            return ""  # written by dataclass
        return doc
    return attribute_doc(module_name, name)


# ------------------------------------------------------------------ notebooks


def copy_notebooks(app):
    """Copy ``examples/*.ipynb`` into ``auto_notebooks/`` with an index page."""
    source = Path(app.srcdir)
    examples = source.parent / "examples"
    target = source / "auto_notebooks"
    if target.exists():
        shutil.rmtree(target)
    target.mkdir()
    notebooks = sorted(examples.glob("*.ipynb"))
    for notebook in notebooks:
        shutil.copy2(notebook, target / notebook.name)
    lines = [
        "Notebooks",
        "=========",
        "",
        "Each notebook of the project's ``examples/`` folder, executed when",
        "this documentation was built; the outputs below are that run's.",
        "",
    ]
    if notebooks:
        lines += [".. toctree::", "   :maxdepth: 1", ""]
        lines += [f"   {notebook.stem}" for notebook in notebooks]
    else:
        lines += ["There is no notebook yet."]
    (target / "index.rst").write_text("\n".join(lines) + "\n")


# --------------------------------------------------------- module variables


def document_variables(app, what, name, obj, options, lines):
    """Give autodoc the documentation of re-exported module variables."""
    if what != "data":
        return
    builtin_doc = inspect.cleandoc(type(obj).__doc__ or "")
    if lines and "\n".join(lines).strip() != builtin_doc:
        return
    module_name, _, attr = name.rpartition(".")
    doc = attribute_doc(module_name, attr)
    if doc:
        lines[:] = doc.splitlines()


# ---------------------------------------------------------------- gallery


# Scripts shown in the gallery but not executed while it builds: they need
# the real image files and minutes to an hour of CPU (pre-training a CNN).
# Their code is on the page; the numbers they print are in the user guide.
NOT_EXECUTED = ("split_mnist_pipeline.py", "split_mnist_torchvision.py")


def gallery_filename_pattern(not_executed=NOT_EXECUTED):
    """sphinx-gallery's ``filename_pattern``: every script but ``not_executed``.

    sphinx-gallery executes the scripts whose path this pattern matches
    (``re.search``) and renders the others without output.
    """
    excluded = "|".join(re.escape(name) for name in not_executed)
    return rf"^(?!.*[\\/]({excluded})$)" if excluded else r".*"


# Arguments of gallery scripts that take some, to keep the build short.
GALLERY_ARGV = {
    # All four columns take minutes; one shows the method, and NC's λ is
    # searched at the r that its whole grid picks there (r = 10).
    "nc_vi_table.py": ["--columns", "Iris SR", "--nc-radius", "10"],
}


def gallery_argv(gallery_conf, script_vars):
    """``sys.argv[1:]`` of a gallery script while the docs are built."""
    return list(GALLERY_ARGV.get(Path(script_vars["src_file"]).name, []))


def clear_jax_caches(gallery_conf, fname):
    """Drop jax's compiled executables before each script (as tests/conftest.py
    does between tests): each holds memory mappings, and one process runs
    every script."""
    if "jax" in sys.modules:
        sys.modules["jax"].clear_caches()


def figure_scraper(block, block_vars, gallery_conf):
    """Matplotlib's scraper, plus the bare Figures bound to the script's names.

    :func:`skcl.plotting.plot_figure2` returns a ``matplotlib.figure.Figure``
    that pyplot does not know of, so matplotlib's own scraper misses it.
    Such figures are often wide (one panel per method): each links to its
    full-size file.
    """
    from matplotlib.figure import Figure
    from sphinx_gallery.scrapers import matplotlib_scraper

    # Found before matplotlib's scraper runs: it closes pyplot's figures,
    # which leaves them without a manager too.
    bare = [
        value
        for value in list(block_vars["example_globals"].values())
        if isinstance(value, Figure)
        and value.canvas.manager is None
        and not getattr(value, "_skcl_docs_shown", False)
    ]
    rst = matplotlib_scraper(block, block_vars, gallery_conf)
    source = Path(gallery_conf["src_dir"])
    for value in bare:
        path = Path(next(block_vars["image_path_iterator"]))
        value.savefig(path)
        value._skcl_docs_shown = True
        # The page lives in the gallery folder, the parent of images/;
        # Sphinx copies every image to _images/ under its own name.
        depth = len(path.parent.parent.relative_to(source).parts)
        target = "../" * depth + "_images/" + path.name
        rst += (
            f"\n\n.. image:: /{path.relative_to(source).as_posix()}\n"
            f"   :alt: {path.stem}\n"
            f"   :class: sphx-glr-single-img skcl-full-size-figure\n"
            f"   :target: {target}\n\n"
            f"(Click the figure to see it at full size.)\n\n"
        )
    return rst


# ------------------------------------------------- shapes in docstrings

# "of shape (n_features_in_,)": to reStructuredText a word ending in "_"
# before punctuation is a hyperlink reference, here to nothing. Such words
# in docstrings are attribute names, so they are shown as literals.
_TRAILING_UNDERSCORE = re.compile(r"(?<![`\w])([A-Za-z]\w*_)(?=[,)\]])")


_PARAMETER_LINE = re.compile(r"^(\s*[\w*][\w, *]* : )(.*)$")


def literal_attribute_names(app, what, name, obj, options, lines):
    """Turn ``n_features_in_,`` into a literal, not a dangling reference.

    The names of a numpydoc parameter line ("name_, other_ : type") are left
    alone: numpydoc formats them itself.
    """
    for i, line in enumerate(lines):
        parameter = _PARAMETER_LINE.match(line)
        head, text = parameter.groups() if parameter else ("", line)
        lines[i] = head + _TRAILING_UNDERSCORE.sub(r"``\1``", text)


# ------------------------------------------------------------ class members


def _defining_module(obj):
    for candidate in (obj, getattr(obj, "fget", None), getattr(obj, "__func__", None)):
        module = getattr(candidate, "__module__", None)
        if isinstance(module, str):
            return module
    return ""


def skip_foreign_members(app, what, name, obj, skip, options):
    """Document a class's own and skcl-inherited members, not scikit-learn's.

    ``get_params``, ``score``, the metadata-routing ``set_*_request``... are
    scikit-learn's, documented there, and their docstrings refer to labels of
    scikit-learn's own documentation that do not exist here.
    """
    if what == "class" and not skip:
        module = _defining_module(obj)
        if not (module == PACKAGE or module.startswith(PACKAGE + ".")):
            return True
    return None


def setup(app):
    app.connect("builder-inited", copy_notebooks)
    app.connect("autodoc-process-docstring", document_variables)
    # Before numpydoc (priority 500) turns the sections into fields.
    app.connect("autodoc-process-docstring", literal_attribute_names, priority=400)
    app.connect("autodoc-skip-member", skip_foreign_members)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
