"""The exact classifiers, one module each."""
