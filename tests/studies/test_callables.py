"""``ul.study`` does not trust its callables (issue 53 item 3): a factory or metric that raises is reported with
its name and the grid point (that metrics see read-only copies: tests/studies/test_metrics.py)."""

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
