"""Helpers every room uses and none owns: validation, docstrings, logging, progress,
lazy imports, and where a warning points.

numpy and scikit-learn only; nothing here imports JAX.
"""
