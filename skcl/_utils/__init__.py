"""Helpers every room uses and none owns (numpy and scikit-learn only, no JAX).

Validation, docstrings, logging, progress, lazy imports, where a
warning points and advice given once.
"""
