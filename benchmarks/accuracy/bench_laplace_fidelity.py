"""How well does a quadratic stand-in predict the forgetting it should prevent?

AQC replaces the first task's loss by ½ dᵀ C d around its solution θ*_1
(d = θ − θ*_1). This script trains the DI Split MNIST pixel MLP of
``skcl reproduce mnist-mlp`` (784 → 100 → 1, 78,601 parameters) with
``AQCClassifier(curvature="ggn", structure="kron")`` on tasks 1, 2, …, and
after each later task t takes the move d = θ*_t − θ*_1 the training made.
Along it, it prints the first task's real NLL increase,
nll_1(θ*_1 + s·d) − nll_1(θ*_1) for s = 0.1 … 1, next to the quadratic
½ s² dᵀ M d that each curvature M predicts:

- the exact Hessian of nll_1 at θ*_1 (a Hessian-vector product),
- the exact generalised Gauss-Newton matrix (Jacobian-vector products),
- the Kronecker-factored GGN that the run used (K-FAC),
- the diagonal of that K-FAC (what a diagonal method would see).

It also prints the mean of p(1 − p) over the first task's samples at θ*_1:
the GGN of a logistic output is Jᵀ diag(p(1 − p)) J, so it vanishes as the
network grows confident, however far the loss rises a little further out.
No hyperparameter is searched; the defaults are the setting the 20-epoch
search chose (λ = 1000).

    SKCL_DATA_DIR=../shared/data PYTHONPATH=. \\
        python benchmarks/accuracy/bench_laplace_fidelity.py \\
        [--epochs 20] [--alpha 1000] [--tasks 5]
"""

import jax
import jax.numpy as jnp

from benchmarks import _harness as harness
from skcl import AQCClassifier
from skcl import reproduce as rp

SCALES = (0.1, 0.25, 0.5, 1.0)


def quadratic_forms(model, curvature, theta, d, X, y):
    """dᵀMd for the exact Hessian, exact GGN, the K-FAC and its diagonal."""
    weights = jnp.ones(len(y), jnp.float32)
    gradient = jax.grad(lambda th: model.nll(th, X, y, weights))
    hessian_d = jax.jvp(gradient, (theta,), (d,))[1]
    outputs, jacobian_d = jax.jvp(lambda th: model.network.apply(th, X), (theta,), (d,))
    p = jax.nn.sigmoid(outputs[:, 0])  # one logit: DI Split MNIST's tasks are binary
    return {
        "exact Hessian": float(d @ hessian_d),
        "exact GGN": float(jnp.sum(p * (1 - p) * jacobian_d[:, 0] ** 2)),
        "K-FAC (used)": float(curvature.quadratic(d)),
        "diag of K-FAC": float(jnp.sum(jnp.asarray(curvature.diag()) * d * d)),
    }, float(jnp.mean(p * (1 - p)))


def main():
    parser = harness.parser(__doc__, csv=False)
    parser.add_argument("--epochs", type=int, default=20, help="epochs per task (paper: 20)")
    parser.add_argument("--alpha", type=float, default=1000.0, help="λ")
    parser.add_argument("--tasks", type=int, default=5, help="tasks to learn (2 to 5)")
    args = parser.parse_args()
    print(harness.machine_line())
    sequence = rp.SEQUENCES["di-split-mnist-mlp"]
    data = sequence.loader()
    settings = sequence.settings("fcnn")
    settings["n_epochs"] = args.epochs
    estimator = AQCClassifier(alpha=args.alpha, curvature="ggn", structure="kron",
                              random_state=0, **settings)
    clock = harness.Stopwatch()
    (X1, y1), *later = data["train"][: args.tasks]
    estimator.partial_fit(X1, y1, classes=data["classes"])
    model = estimator._model()
    theta1 = jnp.asarray(estimator.theta_)
    # Only task 1's curvature: the stand-in that task 2 was learned against.
    curvature = estimator.consolidation_.curvature
    nll1 = jax.jit(lambda th: model.nll(th, X1, y1, jnp.ones(len(y1), jnp.float32)))
    base = float(nll1(theta1))
    print(f"DI Split MNIST pixel MLP, AQC(ggn, kron), λ = {args.alpha:g}, {args.epochs} epochs "
          f"per task, seed 0")
    print(f"task 1 learned: nll_1(θ*_1) = {base:.3f} summed over {len(y1)} samples, "
          f"test accuracy {100 * estimator.score(*data['test'][0]):.2f} %")
    for t, (X, y) in enumerate(later, start=2):
        estimator.partial_fit(X, y)
        d = jnp.asarray(estimator.theta_) - theta1
        forms, saturation = quadratic_forms(model, curvature, theta1, d, X1, y1)
        accuracy = 100 * estimator.score(*data["test"][0])
        table = harness.Table(
            {"s": ">5.2f", "real increase": ">14.3f", **{name: ">15.3f" for name in forms}},
            title=f"\nafter task {t}: task-1 test accuracy {accuracy:.2f} %, ‖d‖ = "
                  f"{float(jnp.linalg.norm(d)):.3f}, mean p(1−p) on task 1 at θ*_1 = "
                  f"{saturation:.2e}")
        for s in SCALES:
            real = float(nll1(theta1 + s * d)) - base
            table.row(s, real, *(0.5 * s * s * value for value in forms.values()))
    print(f"\n{clock.seconds:.0f} s")


if __name__ == "__main__":
    main()
