"""Synthetic data the benchmarks and the tests share (one copy of each generator)."""

import numpy as np


def topic_documents(per_topic=100, seed=0):
    """Six topics' documents, as issue 50's reproducer: words of a topic among shared ones.

    Synthetic text (no corpus is available offline): each word of a
    document of 50 to 200 is, with probability 0.2, one of its topic's 100
    words (``t{topic}w{i}``), else one of 5,000 shared words (``c{i}``) of
    Zipf frequencies.

    Returns
    -------
    docs : ndarray of shape (6 * per_topic,), dtype object
        The documents, topic by topic.
    labels : ndarray of shape (6 * per_topic,)
        Each document's topic, 0..5.
    """
    rng = np.random.default_rng(seed)
    zipf = 1.0 / np.arange(1, 5001)
    zipf /= zipf.sum()
    docs, labels = [], []
    for topic in range(6):
        for _ in range(per_topic):
            length = rng.integers(50, 200)
            own = rng.random(length) < 0.2
            shared = rng.choice(5000, size=length, p=zipf)
            docs.append(" ".join(f"t{topic}w{rng.integers(100)}" if mine else f"c{word}"
                                 for mine, word in zip(own, shared)))
            labels.append(topic)
    return np.array(docs, dtype=object), np.array(labels)


def drifting_stream(n_calls, rows=60, step=0.05, seed=0):
    """Calls of digits drawn with replacement, every row of call t shifted by s_t.

    s_t is a random walk, s_t = s_{t−1} + step·N(0, I), over scikit-learn's
    digits / 16 (a 70/30 stratified split, seed 0).

    Yields
    ------
    X, y : the call's ``rows`` training rows under s_t
    X_test, y_test : the test rows under the same shift (the current distribution)
    X_all : every digit under s_t
    """
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.3, random_state=0, stratify=y)
    rng = np.random.default_rng(seed)
    shift = np.zeros(X.shape[1])
    for _ in range(n_calls):
        shift = shift + step * rng.standard_normal(X.shape[1])
        drawn = rng.integers(0, len(X_train), rows)
        yield X_train[drawn] + shift, y_train[drawn], X_test + shift, y_test, X + shift
