"""``uldp_jax/studies/_methods.py`` (issue 54 item 1): a study's methods given as a callable of (mechanism, n), and
the method tables it refuses (one entry per mechanism, one per n, known methods only)."""

import jax
import numpy as np
import pytest

import uldp_jax as ul

D = 8
P = np.random.default_rng(1).dirichlet(np.ones(D))
GRR = lambda eps: ul.GRR(D, eps)  # noqa: E731
OUE = lambda eps: ul.OUE(D, eps)  # noqa: E731


@pytest.mark.slow  # a study run
def test_methods_as_a_callable_and_bad_tables():
    seen = []

    def methods(name, n):
        seen.append((name, n))
        return ("emp",) if n > 300 else ("emp", "emp+thr")

    res = ul.study(jax.random.key(1), {"GRR": GRR}, eps=[1.0], n=[300, 600], reps=2, p=P, methods=methods)
    assert {(r["n"], r["method"]) for r in res.rows()} == {(300, "emp"), (300, "emp+thr"), (600, "emp")}
    assert seen == [("GRR", 300), ("GRR", 600)]
    with pytest.raises(ValueError, match="one entry per mechanism"):
        ul.study(jax.random.key(1), {"GRR": GRR, "OUE": OUE}, eps=[1.0], n=[300], reps=2, p=P, methods={"GRR": "emp"})
    with pytest.raises(ValueError, match="one entry per n"):
        ul.study(jax.random.key(1), {"GRR": GRR}, eps=[1.0], n=[300, 600], reps=2, p=P, methods={"GRR": {300: "emp"}})
    with pytest.raises(ValueError, match="bogus"):
        ul.study(jax.random.key(1), {"GRR": GRR}, eps=[1.0], n=[300], reps=2, p=P, methods={"GRR": "bogus"})
