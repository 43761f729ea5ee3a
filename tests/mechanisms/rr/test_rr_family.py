"""Foundation mechanisms: GRR, RAPPOR/UE (SUE, OUE), uRR, uRAP, BinaryCA (Warner, Mangat)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import testing

EPS_GRID = (1e-3, 0.1, 0.5, 1.0, 2.0, 5.0, 50.0)


def _mechs(eps):
    return [
        ul.GRR(6, eps),
        ul.RAPPOR(5, eps),
        ul.RAPPOR(5, eps, theta=0.3),
        ul.OUE(5, eps),
        ul.UE(4, eps, p=0.8),
        ul.URR(7, [0, 3, 5], eps),
        ul.URR(5, [4], eps),
        ul.URR(4, [0, 1, 2, 3], eps),
        ul.URAP(6, [1, 4], eps),
        ul.URAP(6, [0, 2, 5], eps, theta=0.5),
        ul.URAP(5, [2], eps, theta=0.9),
        ul.Warner(eps),
        ul.Mangat(eps),
        ul.BinaryCA(eps, 2 * eps),
    ]


class _Delegate(ul.Mechanism):
    """Delegates every protocol member to ``inner`` (subclasses change one)."""

    inner: object

    @property
    def d(self):
        return self.inner.d

    @property
    def report_kind(self):
        return self.inner.report_kind

    @property
    def num_outputs(self):
        return self.inner.num_outputs

    def perturb_batch(self, key, xs):
        return self.inner.perturb_batch(key, xs)

    def channel_matrix(self):
        return self.inner.channel_matrix()

    def privacy_spec(self):
        return self.inner.privacy_spec()


class _Mislabelled(_Delegate):
    """A mechanism whose channel is computed at one eps but which claims a smaller one."""

    claimed: float = ul.static_field()

    def privacy_spec(self):
        spec = self.inner.privacy_spec()
        scale = self.claimed / spec.eps
        return spec._replace(E=spec.E * scale, eps=self.claimed)


@pytest.mark.parametrize("eps", EPS_GRID)
def test_channel_rows_sum_to_one_and_audit_is_tight(eps):
    for mech in _mechs(eps):
        ch = ul.channel(mech)
        assert ch.Q.dtype == np.float64 and ch.protected.dtype == bool
        assert ch.Q.shape == (mech.d, mech.num_outputs)
        np.testing.assert_allclose(ch.Q.sum(axis=1), 1.0, rtol=0, atol=1e-12)
        assert np.all(np.isfinite(ch.Q)) and np.all(ch.Q >= 0)
        rep = ul.audit(mech)
        assert rep.ok, (mech, rep)
        assert rep.tight, (mech, rep)
        if rep.kind in ("ldp", "uldp"):
            np.testing.assert_allclose(rep.eps, eps, rtol=1e-9)


@pytest.mark.parametrize("eps", (0.1, 1.0, 5.0))
def test_misparameterised_variant_fails_audit(eps):
    for mech in _mechs(eps):
        rep = ul.audit(_Mislabelled(mech, 0.9 * eps))
        assert not rep.ok and rep.excess > 0, mech


def test_uldp_structure():
    mech = ul.URR(6, [1, 4], 1.0)
    ch = ul.channel(mech)
    np.testing.assert_array_equal(ch.protected, [False, True, False, False, True, False])
    # Sensitive inputs never reach invertible outputs; non-sensitive outputs reveal the input.
    assert np.all(ch.Q[[1, 4]][:, ~ch.protected] == 0)
    rep = ul.audit(mech)
    assert rep.invertible_ok and rep.eps_ldp == np.inf and rep.num_invertible == 4
    # uRAP: Y_P = all non-sensitive bits 0; Y_I = exactly one set; two or more: probability 0.
    urap = ul.URAP(5, [0, 3], 1.0)
    rep = ul.audit(urap)
    assert rep.num_protected == 4 and rep.num_invertible == 3 * 4 and rep.num_null == 32 - 16


def test_urr_with_all_items_sensitive_is_grr():
    for eps in (0.3, 2.0):
        np.testing.assert_allclose(ul.channel(ul.URR(5, range(5), eps)).Q, ul.channel(ul.GRR(5, eps)).Q,
                                   rtol=1e-12)


def test_presets_and_binary_special_cases():
    eps = 1.3
    e = np.exp(eps)
    assert np.isclose(float(ul.SUE(4, eps).theta), np.exp(eps / 2) / (np.exp(eps / 2) + 1))
    assert float(ul.OUE(4, eps).p) == 0.5
    np.testing.assert_allclose(ul.channel(ul.Warner(eps)).Q, np.array([[e, 1], [1, e]]) / (e + 1), rtol=1e-12)
    p = np.exp(-eps)
    np.testing.assert_allclose(ul.channel(ul.Mangat(eps)).Q, np.array([[1 - p, p], [0, 1]]), atol=1e-15)
    # Eq 9 read literally, against the stable implementation.
    e12, e21 = 0.7, 1.9
    a, b = np.exp(e21), np.exp(-e12)
    Q9 = np.array([[a - 1, 1 - b], [b * (a - 1), a * (1 - b)]]) / (a - b)
    np.testing.assert_allclose(ul.channel(ul.BinaryCA(e12, e21)).Q, Q9, rtol=1e-12)
    # Both constraints are tight.
    L = ul.privacy.pairwise_log_ratios(Q9)
    np.testing.assert_allclose([L[0, 1], L[1, 0]], [e12, e21], rtol=1e-12)
    # Mangat is the eps12 -> inf limit.
    np.testing.assert_allclose(ul.channel(ul.BinaryCA(60.0, eps)).Q, ul.channel(ul.Mangat(eps)).Q, atol=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("batched,jit", [(True, False), (False, False), (True, True)])
def test_samplers_match_exact_channel(batched, jit):
    """Pearson chi-square, 20000 draws per input; accept at p > 1e-3 (false alarm 0.1% per test)."""
    key = jax.random.key(0)
    for i, mech in enumerate(_mechs(1.0)):
        m = mech
        if jit:
            m = _JitWrapped(mech)
        for x in {0, mech.d - 1, mech.d // 2}:
            res = testing.sampler_vs_channel(jax.random.fold_in(key, 100 * i + x), m, x, 20000, batched=batched,
                                             Q=ul.channel(mech).Q)
            assert testing.fits(res), (mech, x, res)


def test_sampler_rejects_wrong_epsilon_channel():
    """A 20% error in eps must be detected with 20000 draws (p < 1e-6)."""
    key = jax.random.key(1)
    cases = [(ul.GRR(6, 1.0), ul.GRR(6, 1.2)), (ul.URR(7, [0, 3, 5], 1.0), ul.URR(7, [0, 3, 5], 1.2)),
             (ul.RAPPOR(5, 1.0), ul.RAPPOR(5, 1.2)), (ul.URAP(6, [1, 4], 1.0), ul.URAP(6, [1, 4], 1.2)),
             (ul.Mangat(1.0), ul.Mangat(1.2))]
    for mech, wrong in cases:
        res = testing.sampler_vs_channel(key, mech, 0, 20000, Q=ul.channel(wrong).Q)
        assert res.pvalue < 1e-6, (mech, res)


# One jitted function each (the mechanism is a pytree argument): one compile per mechanism configuration, reused
# for every input x, instead of a fresh jit of a fresh lambda on every call.
_jit_perturb_batch = jax.jit(lambda k, m, x: m.perturb_batch(k, x))


class _JitWrapped(_Delegate):
    """Delegates to a mechanism but runs its samplers under jit (the jit variant of the tests)."""

    def perturb_batch(self, key, xs):
        return _jit_perturb_batch(key, self.inner, xs)


@pytest.mark.parametrize("mech", _mechs(1.0), ids=lambda m: type(m).__name__)
def test_shapes_dtypes_determinism(mech):
    key = jax.random.key(0)
    xs = jnp.arange(20, dtype=jnp.int32) % mech.d
    for fn in (ul.perturb, jax.jit(ul.perturb)):
        ys = fn(key, mech, xs)
        if mech.report_kind == "item":
            assert ys.shape == (20,) and ys.dtype == jnp.int32
            assert int(ys.min()) >= 0 and int(ys.max()) < mech.num_outputs
        else:
            assert ys.shape == (20, mech.d) and ys.dtype == jnp.bool_
        np.testing.assert_array_equal(ys, fn(key, mech, xs))  # same key, same reports
    big = jnp.zeros(2000, jnp.int32)
    a = ul.perturb(jax.random.key(1), mech, big)
    b = ul.perturb(jax.random.key(2), mech, big)
    assert not np.array_equal(np.asarray(a), np.asarray(b))  # different keys, different draws
    stats = ul.aggregate(mech, ul.perturb(key, mech, xs))
    assert stats.shape == (ul.mechanisms.core.num_stats(mech),) and stats.dtype == jnp.int32


def test_vmapped_eps_grid_matches_individual_mechanisms():
    eps_grid = jnp.array([0.5, 1.0, 2.0])
    key = jax.random.key(3)
    xs = jnp.arange(50, dtype=jnp.int32) % 7
    grid = jax.vmap(lambda e: ul.URR(7, [1, 2], e))(eps_grid)
    ys = jax.vmap(lambda m: ul.perturb(key, m, xs))(grid)
    for i, e in enumerate([0.5, 1.0, 2.0]):
        np.testing.assert_array_equal(ys[i], ul.perturb(key, ul.URR(7, [1, 2], e), xs))


@pytest.mark.slow
def test_extreme_eps_gives_finite_channels_and_estimates():
    key = jax.random.key(0)
    xs = jnp.arange(500, dtype=jnp.int32) % 6
    for eps in (1e-3, 50.0):
        for mech in _mechs(eps):
            assert np.all(np.isfinite(ul.channel(mech).Q))
            if mech.d == 2:
                xs2 = xs % 2
            else:
                xs2 = xs % mech.d
            est = ul.estimate(mech, ul.perturb(key, mech, xs2))
            assert np.all(np.isfinite(np.asarray(est))), (mech, est)


def test_urr_perturb_table_and_binary_search_agree(monkeypatch):
    """uRR's rank table (d <= TABLE_MAX_D) and its O(s) binary search (larger d) draw the very same reports."""
    from uldp_jax.mechanisms.rr import _urr

    mech = ul.URR(40, (1, 5, 6, 17, 30, 39), 1.3)
    xs = jnp.arange(4000, dtype=jnp.int32) % 40
    key = jax.random.key(11)
    table = np.asarray(jax.jit(mech.perturb_batch)(key, xs))
    monkeypatch.setattr(_urr, "TABLE_MAX_D", 0)
    search = np.asarray(jax.jit(mech.perturb_batch)(key, xs))
    np.testing.assert_array_equal(table, search)
    assert len(np.unique(table)) == 40  # both branches exercised: every item is reported
