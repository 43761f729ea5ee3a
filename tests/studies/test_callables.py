"""``ul.study`` does not trust its callables (issue 53 item 3): metrics see read-only copies (a metric that
writes into ``target`` or the estimates cannot change later metrics), and a factory or metric that raises is
reported with its name and the grid point."""

import jax
import numpy as np
import pytest

import uldp_jax as ul

D = 4
P = np.array([0.1, 0.2, 0.3, 0.4])
ARGS = dict(eps=[1.0, 2.0], n=400, reps=3, p=P)


def _grr(eps):
    return ul.GRR(D, eps)


def _study(mechanisms=None, **kw):
    return ul.study(jax.random.key(0), mechanisms or {"GRR": _grr}, **{**ARGS, **kw})


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


@pytest.mark.parametrize("exc, err", [(ZeroDivisionError, RuntimeError), (KeyError, RuntimeError),
                                      (ValueError, ValueError), (TypeError, TypeError)])
def test_a_failing_factory_is_named_with_its_grid_point(exc, err):
    def factory(eps):
        if eps == 2.0:
            raise exc("boom")
        return ul.GRR(D, eps)

    with pytest.raises(err, match=r"mechanisms\['broken'\].*eps\[1\]=2\.0") as e:
        _study({"GRR": _grr, "broken": factory})
    assert "boom" in str(e.value)
    if err is RuntimeError:
        assert exc.__name__ in str(e.value) and isinstance(e.value.__cause__, exc)


@pytest.mark.parametrize("exc, err", [(ZeroDivisionError, RuntimeError), (KeyError, RuntimeError),
                                      (ValueError, ValueError)])
def test_a_failing_metric_is_named_with_its_grid_point(exc, err):
    def metric(est, target):
        raise exc("bad metric")

    with pytest.raises(err, match=r"metric 'mine' at mechanisms\['GRR'\], eps\[0\]=1\.0, n=400, method 'emp'") as e:
        _study(metrics={"mine": metric})
    if err is RuntimeError:
        assert exc.__name__ in str(e.value) and isinstance(e.value.__cause__, exc)


def test_a_metric_returning_no_numbers_is_named():
    with pytest.raises(ValueError, match=r"metric 'words'.*return numbers"):
        _study(metrics={"words": lambda est, t: np.array(["a"] * est.shape[0])})
