"""``uldp_jax/studies/_metrics.py``: ``evaluate`` gives a metric read-only copies and wants numbers back."""

import numpy as np
import pytest

from tests.studies.test_callables import P, _study


def test_a_metric_cannot_write_into_its_arguments():
    def shift(est, target):  # mutates its arguments: refused, so the rows never see a changed truth
        target -= 1.0
        return np.zeros(est.shape[:-1])

    with pytest.raises(ValueError, match=r"metric 'shift' at mechanisms\['GRR'\], eps\[0\]=1.0, n=400") as e:
        _study(metrics={"mse": "mse", "shift": shift})
    assert "read-only" in str(e.value)
    with pytest.raises(ValueError, match="metric 'clobber'"):
        _study(metrics={"clobber": lambda est, t: est.__setitem__(Ellipsis, 0.0) or np.zeros(est.shape[:-1])})


def test_later_metrics_see_the_truth():
    seen = []

    def spy(est, target):
        seen.append(np.array(target))
        return np.zeros(est.shape[:-1])

    res = _study(metrics={"spy": spy, "mse": "mse", "spy2": spy}, methods=("emp",))
    assert all(np.array_equal(t, P) for t in seen) and len(seen) == 2 * 2  # both points, before and after mse
    ref = _study(metrics=("mse",), methods=("emp",))
    assert [r["mean"] for r in res.rows() if r["metric"] == "mse"] == [r["mean"] for r in ref.rows()]


def test_a_metric_that_copies_before_writing_is_fine():
    def centred(est, target):
        e = est.copy()
        e -= e.mean(axis=-1, keepdims=True)
        return np.sum(e**2, axis=-1)

    rows = _study(metrics={"centred": centred}).rows()
    assert all(r["mean"] >= 0 for r in rows)


def test_a_metric_returning_no_numbers_is_named():
    with pytest.raises(ValueError, match=r"metric 'words'.*return numbers"):
        _study(metrics={"words": lambda est, t: np.array(["a"] * est.shape[0])})
