"""The gradient-trained classifiers: where JAX begins.

Everything here runs on JAX. A classifier of this family is a network
(:mod:`.networks`) with a likelihood (:mod:`.likelihoods`), trained task
by task by minimising the task's negative log-likelihood plus a stand-in
for the previous loss L_{t-1} (:mod:`.training`). The stand-ins are the
consolidations (:mod:`.consolidation`: quadratic, neural, variational,
replay); the estimators (:mod:`.estimators`) pair one with the shared
training core (:mod:`.base`). Serving that core: the minibatches and
padding (:mod:`.minibatches`), the guards against a diverged task
(:mod:`.divergence`), class growth (:mod:`.growth`), the key streams
(:mod:`.keys`), deferred folds for the search (:mod:`.deferred_folds`),
the log lines and callback events (:mod:`.reporting`) and the
compilation cache (:mod:`.compilation_cache`).
"""
