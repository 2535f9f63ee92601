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
