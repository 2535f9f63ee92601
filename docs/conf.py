"""Sphinx configuration of skcl's documentation.

The site builds without network access: no intersphinx inventories, no
fonts or scripts from a CDN (MathJax comes from the sphinx-mathjax-offline
package), and every gallery script and notebook is executed locally.

Build it from the project's root with::

    python -m sphinx -W --keep-going -b html docs docs/_build/html
"""

import os
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent

sys.path.insert(0, str(DOCS / "sphinxext"))
if (ROOT / "skcl" / "__init__.py").is_file():
    # Document the checkout's skcl, whatever else is installed, and let the
    # kernels that execute the notebooks import the same one.
    sys.path.insert(0, str(ROOT))
    os.environ["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])
    )
# The notebooks' kernels must choose their own backend (inline, so that
# figures become outputs); sphinx-gallery sets Agg for the scripts itself.
os.environ.pop("MPLBACKEND", None)

import skcl  # noqa: E402
import skcl_docs  # noqa: E402

# -- Project -----------------------------------------------------------------

project = "skcl"
author = "the skcl developers"
copyright = "the skcl developers; MIT licence"
version = release = skcl.__version__

# -- Extensions --------------------------------------------------------------

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "myst_nb",
    "sphinx-mathjax-offline",  # MathJax served from _static, not a CDN
    "skcl_docs",  # local: notebooks from examples/, docs of module variables
]

templates_path = ["_templates"]
exclude_patterns = [
    "_build",
    "jupyter_execute",
    # sphinx-gallery writes a notebook beside each script for download;
    # they are not pages (and must not be executed a second time).
    "auto_examples/*.ipynb",
    "**.ipynb_checkpoints",
]
root_doc = "index"

# -- API reference -------------------------------------------------------------

autosummary_generate = True
autodoc_typehints = "none"  # the numpydoc sections state the types
autodoc_member_order = "bysource"
add_module_names = False
# "On this page" lists a class's members as "fit()", not "AQCClassifier.fit()":
# the narrow sidebar would otherwise break the long names mid-word.
toc_object_entries_show_parents = "hide"

numpydoc_show_class_members = False  # the class template lists the methods
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True

# -- Gallery (examples/*.py, executed but for skcl_docs.NOT_EXECUTED) ----------

sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    # Run every script, not only plot_*.py, and show what it prints; the few
    # that need real image files and long CPU time are shown, not run.
    "filename_pattern": skcl_docs.gallery_filename_pattern(),
    "ignore_pattern": r"__init__\.py|(^|[\\/])_[^\\/]*\.py$",
    "within_subsection_order": "FileNameSortKey",
    "reset_argv": "skcl_docs.gallery_argv",
    "reset_modules": ("matplotlib", "skcl_docs.clear_jax_caches"),
    "image_scrapers": ("skcl_docs.figure_scraper",),
    "doc_module": ("skcl",),
    "backreferences_dir": "generated/backreferences",
    "abort_on_example_error": True,
    "remove_config_comments": True,
    "show_signature": False,
    # Its pages load jQuery and DataTables from CDNs; the site stays offline.
    "write_computation_times": False,
}

# -- Notebooks (examples/*.ipynb, executed at every build) ---------------------

nb_execution_mode = "force"
nb_execution_timeout = 900
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 3

# -- HTML ----------------------------------------------------------------------

html_theme = "pydata_sphinx_theme"
html_title = f"skcl {release}"
html_static_path = ["_static"]
html_css_files = ["skcl.css"]
html_theme_options = {
    "logo": {"text": "skcl"},
    "navbar_align": "left",
    "header_links_before_dropdown": 6,
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc", "sourcelink"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
# Pages whose figures and printed tables need the width: no left sidebar
# (the gallery index and the previous / next links navigate between them).
html_sidebars = {
    "index": [],
    "install": [],
    "auto_examples/*": [],
    "auto_notebooks/*": [],
}
html_show_sourcelink = True
html_copy_source = True
