"""Defects and validation gaps of issue 22, one test each: every bad input is a ValueError/TypeError naming the
argument, large work is refused before it allocates, the audit checks the claim's consistency, and tuning honours
a closed form's declared domain (for a family defined outside the package)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import cli, testing
from uldp_jax.estimation import _registry
from uldp_jax.mechanisms.core import _records
from uldp_jax.mechanisms.core._family import Family


from tests.outside_mechanisms import Keep


# ---- tuning an outside family on its declared domain --------------------------------------------------------

def _family(domain, integer=False, closed=False):
    # n * MSE = (w - 1)^2 + 1: the unconstrained optimum w = 1 lies below every domain here
    return Family("Wide", "width", lambda e, s, th, w: (w - 1.0) ** 2 + 1.0, None, ldp=True, integer=integer,
                  domain=domain, closed=closed)


OPEN, INTEGER, CLOSED = _family(lambda s: (2.0, 1000.0)), _family(lambda s: (3, 50), integer=True), \
    _family(lambda s: (2.0, 1000.0), closed=True)


class WideOpen(Keep):
    width: float = 5.0

    def closed_form(self):
        return OPEN


class WideInteger(Keep):
    width: int = ul.static_field(default=7)

    def closed_form(self):
        return INTEGER


class WideClosed(Keep):
    width: float = 5.0

    def closed_form(self):
        return CLOSED


def test_tune_honours_an_outside_family_domain():
    w_open = float(ul.tune(WideOpen(4, 1.0), steps=300).width)
    assert 2.0 < w_open < 2.1  # open: approaches its lower end, never reaches it (the old tuner returned 1)
    assert ul.tune(WideInteger(4, 1.0), steps=300).width == 3  # integer: the smallest integer of [3, 50]
    assert float(ul.tune(WideClosed(4, 1.0), steps=300).width) == pytest.approx(2.0, abs=0.1)
    with pytest.raises(ValueError, match="declared domain"):
        ul.tuning._optimize.check_in_domain(OPEN, 4, 2.0)
    with pytest.raises(ValueError, match="declared domain"):
        ul.tuning._optimize.check_in_domain(INTEGER, 4, 3.5)


# ---- the audit checks the claim --------------------------------------------------------------------------------

def _fixed(Q, spec, protected=None):
    Q = np.asarray(Q, np.float64)
    return testing.FixedChannel(Q, np.ones(Q.shape[1], bool) if protected is None else protected, spec)


def test_audit_refuses_claims_inconsistent_with_their_kind():
    Q = ul.channel(ul.GRR(4, 1.0)).Q
    E = np.full((4, 4), 10.0)
    np.fill_diagonal(E, 0.0)
    with pytest.raises(ValueError, match="claims eps=0.5"):
        ul.audit(_fixed(Q, ul.PrivacySpec("ldp", E, 0.5, None)))
    E1 = np.full((4, 4), np.inf)
    np.fill_diagonal(E1, 0.0)
    E1[0, 1] = 1.0
    with pytest.raises(ValueError, match="not eps"):
        ul.audit(_fixed(np.eye(4), ul.PrivacySpec("uldp", E1, 1.0, np.ones(4, bool))))
    with pytest.raises(ValueError, match="no sensitive input"):
        ul.audit(_fixed(np.eye(4), ul.PrivacySpec.uldp(4, [], 1.0), np.zeros(4, bool)))


class LyingLog(Keep):
    """Honest ``likelihood().log_channel`` except on tiny entries, where it hides an e^9.2 ratio."""

    def channel_matrix(self):
        Q = np.full((2, 2), 0.5)
        Q[0] = [1.0, 1e-305]
        Q[1] = [1.0, 1e-301]
        Q = Q / Q.sum(axis=1, keepdims=True)
        return Q, np.ones(2, bool)

    def likelihood(self):
        def log_channel():
            Q, p = self.channel_matrix()
            with np.errstate(divide="ignore"):
                return np.log(np.maximum(Q, 1e-300)), p

        return _records.Likelihood(log_channel=log_channel)


def test_a_lying_log_channel_is_refused():
    with pytest.raises(ValueError, match=r"likelihood\(\).log_channel disagrees"):
        ul.audit(LyingLog(2, 1.0))


# ---- inputs --------------------------------------------------------------------------------------------------

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


def test_register_method_protects_builtins_and_needs_a_callable():
    with pytest.raises(ValueError, match="built in"):
        _registry.register_method("emp", lambda mech, stats, n: stats)
    with pytest.raises(TypeError, match="callable"):
        _registry.register_method("test-nope", 3)
    f = lambda mech, stats, n: jnp.zeros(mech.d)  # noqa: E731
    _registry.register_method("test-mine", f)
    try:
        with pytest.raises(ValueError, match="replace=True"):
            _registry.register_method("test-mine", f)
        _registry.register_method("test-mine", f, replace=True)
    finally:
        _registry._METHODS.pop("test-mine", None)


def test_mechanisms_are_hashable_by_value():
    assert hash(ul.GRR(6, 1.0)) == hash(ul.GRR(6, 1.0)) and ul.GRR(6, 1.0) == ul.GRR(6, 1.0)
    assert hash(ul.GRR(6, 1.0)) != hash(ul.GRR(6, 2.0))
    assert len({ul.URR(6, [0, 1], 1.0), ul.URR(6, [1, 0], 1.0), Keep(4, 1.0), Keep(4, 1.0)}) == 2


# ---- large work is refused before it allocates ---------------------------------------------------------------

def test_large_work_is_refused_up_front():
    key = jax.random.key(0)
    with pytest.raises(ValueError, match="GiB of reports"):
        ul.perturb(key, ul.OUE(10**9, 1.0), np.zeros(10, np.int32))
    with pytest.raises(ValueError, match="GiB of reports"):
        ul.perturb(key, ul.RAPPOR(10**8, 1.0), np.zeros(100, np.int32))
    with pytest.raises(ValueError, match="log-ratios"):
        ul.audit(ul.GRR(4096, 1.0))
    with pytest.raises(ValueError, match="in all"):
        ul.channel(jax.vmap(lambda e: ul.GRR(2048, e))(jnp.linspace(0.5, 2.0, 64)))
    with pytest.raises(ValueError, match="d\\^2 <= 2\\^24"):
        ul.ldp_matrix(10**9, 1.0)
    with pytest.raises(ValueError, match="2\\^24"):
        ul.recommend(10**9, 3, 1.0, 0.5)
    with pytest.raises(ValueError, match="100 x 2\\^100 entries"):  # exact, not capped at 2^64
        ul.channel(ul.RAPPOR(100, 1.0))


def test_pum_urap_users_estimate_their_own_reports():
    pum = ul.PUM(5, (0, 2, 3), 2, 1.0, base="urap")
    user = pum.user(jnp.asarray([1, -1], jnp.int32))
    ys = ul.perturb(jax.random.key(0), user, jnp.arange(5, dtype=jnp.int32))
    assert ys.shape == (5, 7) and ul.mechanisms.core.num_stats(user) == 7
    assert np.asarray(ul.estimate(user, ys)).shape == (5,)


def test_cli_out_an_existing_file_is_a_usage_error(tmp_path, capsys):
    target = tmp_path / "a_file"
    target.write_text("x")
    assert cli.main(["run", "demo", "--quick", "--out", str(target)]) == 2
    assert "existing file" in capsys.readouterr().err
