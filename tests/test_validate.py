"""Bad arguments raise ValueError/TypeError naming the argument and value at construction."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul

BAD_EPS = [0.0, -1.0, float("nan"), float("inf"), "1.0", None]


@pytest.mark.parametrize("eps", BAD_EPS)
@pytest.mark.parametrize("ctor", [
    lambda e: ul.GRR(4, e), lambda e: ul.RAPPOR(4, e), lambda e: ul.OUE(4, e), lambda e: ul.UE(4, e),
    lambda e: ul.URR(4, [0], e), lambda e: ul.URAP(4, [0], e), lambda e: ul.Warner(e), lambda e: ul.Mangat(e),
])
def test_bad_eps(ctor, eps):
    with pytest.raises((ValueError, TypeError), match="eps"):
        ctor(eps)


@pytest.mark.parametrize("theta", [0.0, 1.0, -0.1, 1.5, float("nan")])
def test_bad_theta(theta):
    with pytest.raises(ValueError, match="theta"):
        ul.RAPPOR(4, 1.0, theta=theta)
    with pytest.raises(ValueError, match="theta"):
        ul.URAP(4, [1], 1.0, theta=theta)
    with pytest.raises(ValueError, match="p"):
        ul.UE(4, 1.0, p=theta)


@pytest.mark.parametrize("d", [1, 0, -3])
def test_bad_d(d):
    for ctor in (lambda: ul.GRR(d, 1.0), lambda: ul.RAPPOR(d, 1.0), lambda: ul.URR(d, [0], 1.0)):
        with pytest.raises(ValueError, match="d"):
            ctor()
    with pytest.raises(TypeError, match="d"):
        ul.GRR(4.0, 1.0)


@pytest.mark.parametrize("sensitive,exc", [
    ([], ValueError), ([1, 1], ValueError), ([0, 9], ValueError), ([-1], ValueError), ([0.5], TypeError),
    ("01", TypeError), (np.array([[0, 1]]), ValueError), ([True], TypeError),
])
def test_bad_sensitive_sets(sensitive, exc):
    with pytest.raises(exc, match="sensitive"):
        ul.URR(6, sensitive, 1.0)
    with pytest.raises(exc, match="sensitive"):
        ul.URAP(6, sensitive, 1.0)


def test_sensitive_sets_are_arbitrary_index_sets():
    m = ul.URR(6, np.array([5, 2]), 1.0)
    assert m.sensitive == (2, 5)
    assert ul.URAP(6, range(3, 5), 1.0).sensitive == (3, 4)


def test_bad_xs_for_perturb():
    import jax

    mech = ul.GRR(5, 1.0)
    key = jax.random.key(0)
    with pytest.raises(ValueError, match="xs"):
        ul.perturb(key, mech, jnp.array([0, 5]))
    with pytest.raises(ValueError, match="xs"):
        ul.perturb(key, mech, jnp.array([-1, 2]))
    with pytest.raises(TypeError, match="xs"):
        ul.perturb(key, mech, jnp.array([0.0, 1.0]))
    with pytest.raises(ValueError, match="xs"):
        ul.perturb(key, mech, jnp.zeros((2, 2), jnp.int32))


def test_binary_ca_bad_input():
    with pytest.raises(ValueError, match="eps12"):
        ul.BinaryCA(-1.0, 1.0)
    with pytest.raises(ValueError, match="eps21"):
        ul.BinaryCA(1.0, 0.0)
    ul.BinaryCA(np.inf, 1.0)  # Mangat: allowed


def test_zero_reports_and_no_privacy_binary_are_refused():
    with pytest.raises(ValueError, match="n=0"):
        ul.estimate(ul.GRR(4, 1.0), jnp.zeros((0,), jnp.int32))
    with pytest.raises(ValueError, match="eps12"):
        ul.BinaryCA(float("inf"), float("inf"))


@pytest.mark.parametrize("value", [1 - 1e-9, 1e-46])
def test_keep_probabilities_must_survive_float32(value):
    with pytest.raises(ValueError, match="theta"):
        ul.RAPPOR(6, 5.0, theta=value)
    with pytest.raises(ValueError, match="theta"):
        ul.URAP(6, [1, 3], 5.0, theta=value)
    with pytest.raises(ValueError, match="p"):
        ul.UE(6, 20.0, p=value)


def test_bad_inputs_name_the_argument():
    mech = ul.GRR(6, 1.0)
    with pytest.raises(ValueError, match=r"ys in \[0, 6\), got 99"):
        ul.aggregate(mech, np.array([0, 99]))
    assert np.asarray(ul.estimate(mech, [0, 1, 2])).shape == (6,)  # a list of reports is a batch
    for p in ("uniform", np.array([True] * 6), np.full(6, 1 / 6 + 0j), np.full(6, 1 / 6, dtype=object)):
        with pytest.raises(TypeError, match="p"):
            ul.theory.mse(mech, p, 100)
        with pytest.raises(TypeError, match="p"):
            ul.simulate(jax.random.key(0), mech, p=p, n=10)
    with pytest.raises(ValueError, match="eps"):
        ul.theory.grr_nmse(-1.0, 6)
    with pytest.raises(ValueError, match="n="):
        ul.theory.nonprivate_l2(np.full(4, 0.25), -5)
    with pytest.raises(ValueError, match="theta_n"):
        ul.theory.urr_nmse(1.0, 3, 1.5)
    assert np.isfinite(float(ul.theory.mse(mech, np.full(6, 1 / 6), 10**15)))  # no int32 overflow
