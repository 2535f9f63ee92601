"""The gradient-trained classifiers of the paper, grouped by their stand-in for L_{t-1}."""
