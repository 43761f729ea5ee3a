"""PUM privacy on exact channels (001 §5.2): Props 9 and 10 for random small user types."""

import jax
import numpy as np
import pytest

import uldp_jax as ul

D, SENS = 7, (1, 4)
X_N = np.array([x for x in range(D) if x not in SENS])


def _user_types(seed, num_types, num_tags, r):
    """Random user types: per tag, up to r items of X_N (-1 = none), no item under two tags."""
    key = jax.random.key(seed)
    out = np.full((num_types, num_tags, r), -1, np.int64)
    for i in range(num_types):  # a handful of user types on a tiny domain, not users
        k_perm, k_cnt, key = jax.random.split(key, 3)
        items = np.asarray(jax.random.permutation(k_perm, X_N))
        counts = np.asarray(jax.random.randint(k_cnt, (num_tags,), 0, r + 1))
        pos = 0
        for k in range(num_tags):
            out[i, k, : counts[k]] = items[pos: pos + counts[k]]
            pos += counts[k]
    return out


def _pums(eps, num_tags):
    z_s = SENS + tuple(range(D, D + num_tags))
    return [
        ul.PUM(D, SENS, num_tags, eps, base="urr"),
        ul.PUM(D, SENS, num_tags, eps, base="urap"),
        ul.PUM(D, SENS, num_tags, None, base=ul.URAP(D + num_tags, z_s, eps, theta=0.4)),
        ul.PUM(D, SENS, num_tags, eps, base=ul.USS(D + num_tags, z_s, eps, k=2)),
        ul.PUM(D, SENS, num_tags, eps, base=ul.GRR(D + num_tags, eps)),  # an LDP Q_cmn: everything protected
    ]


@pytest.mark.parametrize("eps", [0.1, 1.0, 5.0])
@pytest.mark.parametrize("num_tags", [1, 3])
def test_props_9_and_10_hold_for_random_user_types(eps, num_tags):
    types = _user_types(int(eps * 10) + num_tags, 6, num_tags, 2)
    types[0] = -1  # a user with no personal items
    for mech in _pums(eps, num_tags):
        assert ul.audit(mech).ok  # Q_cmn is (Z_S, Y_P, eps)-ULDP
        rep = ul.audit_pum(mech, types)
        assert rep.ok, (mech, rep)
        assert np.all(rep.ok_user) and np.all(rep.invertible_ok)
        assert np.all(rep.eps_user <= eps * (1 + 1e-9))  # Prop 9
        assert np.all(rep.eps_cross <= eps * (1 + 1e-9))  # Prop 10
        # Prop 10 is tight: a user whose item goes to a bot versus one who reports it as itself.
        has_items = np.any(types >= 0, axis=(1, 2))
        assert np.isclose(rep.eps_cross[has_items][:, 0].max(), eps, rtol=1e-9) or mech.report_kind == "glutf"


@pytest.mark.parametrize("base", ["urr", "urap"])
def test_sensitive_only_to_protected_and_rest_invertible(base):
    mech = ul.PUM(D, SENS, 2, 1.0, base=base)
    personal = np.array([[0, -1], [3, 6]])
    Q, protected = mech.user(personal).channel_matrix()
    assert Q.shape == (D, mech.num_outputs)
    np.testing.assert_allclose(Q.sum(1), 1.0, atol=1e-12)
    own = {0, 3, 6}
    for x in range(D):
        inv = Q[x, ~protected]
        if x in SENS or x in own:
            assert inv.max() == 0.0, x  # sensitive data only to Y_P
        else:
            assert inv.sum() > 0.0, x  # X_N \ X_S^(i): reported invertibly with positive probability
            cols = np.flatnonzero(~protected)[inv > 0]
            assert np.all(Q[:, cols][np.arange(D) != x] == 0.0), x  # ... and only x reaches those reports
    spec = mech.user(personal).privacy_spec()
    assert set(np.flatnonzero(~spec.invertible_inputs)) == set(SENS) | own


def test_composite_channel_is_qcmn_rows_after_preprocessing():
    mech = ul.PUM(D, SENS, 2, 0.7)
    Q_cmn = ul.channel(mech).Q
    assert Q_cmn.shape == (D + 2, D + 2)
    Q, _ = mech.user(np.array([[5, 0], [-1, -1]])).channel_matrix()
    np.testing.assert_array_equal(Q[5], Q_cmn[D])
    np.testing.assert_array_equal(Q[0], Q_cmn[D])
    np.testing.assert_array_equal(Q[2], Q_cmn[2])


def test_mislabelled_personal_items_fail_the_audit():
    """A device that skips the pre-processor leaks the user's items: Prop 9's audit must catch it."""
    mech = ul.PUM(D, SENS, 2, 1.0)
    honest, leaky = mech.user(np.array([3, 6])), mech.user(np.array([-1, -1]))

    class Leaky(ul.Mechanism):
        d = D
        num_outputs = leaky.num_outputs
        report_kind = leaky.report_kind

        def perturb_batch(self, key, xs):
            return leaky.perturb_batch(key, xs)

        def channel_matrix(self):
            return leaky.channel_matrix()

        def privacy_spec(self):
            return honest.privacy_spec()

    rep = ul.audit(Leaky())
    assert not rep.ok and not rep.invertible_ok


class _UnderClaimed(ul.URR):
    """uRR over Z whose channel uses eps=2 but which claims eps=1 (a mis-parameterised common mechanism)."""

    def _true(self):
        return ul.URR(self.d, self.sensitive, 2.0)

    def perturb_batch(self, key, zs):
        return self._true().perturb_batch(key, zs)

    def channel_matrix(self):
        return self._true().channel_matrix()


def test_underclaimed_common_mechanism_fails_props_9_and_10():
    mech = ul.PUM(D, SENS, 2, 1.0, base=_UnderClaimed(D + 2, SENS + (D, D + 1), 1.0))
    rep = ul.audit_pum(mech, np.array([[3, -1], [-1, -1], [5, 6]]))
    assert not rep.ok
    assert not np.any(rep.ok_user)
    np.testing.assert_allclose(rep.eps_cross.max(), 2.0, rtol=1e-9)
