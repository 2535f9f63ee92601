"""The search scales out on Dask through joblib's dask backend."""

import numpy as np
import pytest

from skcl import EWCClassifier
from skcl.datasets import load_ci_split_iris
from skcl.model_selection import SequenceGridSearch

distributed = pytest.importorskip("distributed")
joblib = pytest.importorskip("joblib")


@pytest.mark.slow
def test_dask_cluster_gives_the_serial_results():
    data = load_ci_split_iris()
    estimator = EWCClassifier(learning_rate=0.1, random_state=0)
    grid = {"alpha": [1, 100, 10000]}
    serial = SequenceGridSearch(estimator, grid).fit(data.train, data.validation)
    # Two worker processes on loopback: the candidates are pickled to other
    # interpreters, as on a real cluster (Client("tcp://scheduler:8786")).
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
        dashboard_address=None, silence_logs=40,
    ) as cluster, distributed.Client(cluster) as client:
        with joblib.parallel_config(backend="dask"):
            on_dask = SequenceGridSearch(estimator, grid).fit(data.train, data.validation)
        workers = client.run(lambda: __import__("os").getpid())
        # Workers import skcl only to unpickle and train candidates.
        trained = client.run(lambda: "skcl._gradient.training" in __import__("sys").modules)
    assert len(set(workers.values())) == 2 and __import__("os").getpid() not in workers.values()
    assert any(trained.values())
    np.testing.assert_array_equal(on_dask.cv_results_["mean_test_score"],
                                  serial.cv_results_["mean_test_score"])
    np.testing.assert_array_equal(on_dask.accuracy_matrices_, serial.accuracy_matrices_)
    assert on_dask.best_params_ == serial.best_params_
    np.testing.assert_array_equal(on_dask.best_estimator_.theta_, serial.best_estimator_.theta_)
