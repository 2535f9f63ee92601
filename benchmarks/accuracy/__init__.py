"""Accuracy experiments: scripts whose tables the docs and ``skcl reproduce`` cite."""
