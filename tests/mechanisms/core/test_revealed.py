"""``Mechanism.revealed_inputs`` and ``ul.mechanisms.core.supported_items`` against the exact channel (exact
tests, no statistics): for every report column the channel lists, the predicate agrees with the channel's protected
mask, an invertible report names the channel column's one positive row, and the supported items are the column's.

Reports for every column: items and bit vectors are enumerated; uBD's subsets and disclosed items are built; GLUTF
reports are every base report (drawn from every base input until each base column is seen) combined with every
``(has_base, item)`` form (protected ``y_1``, ``x`` alone, the pair ``<y_1, x>``).
"""

from __future__ import annotations

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax.mechanisms.core import likelihood_of, supported_items

GLUTF_FAMILY = ["GLUTF", "UUE", "USS", "ULH", "UWheel"]


def _owner(mech):
    """(int[m]: -1 for a protected column, else its one positive row; the protected mask; bool[m]: columns of
    positive probability). The positive row is unique (ULDP's channel)."""
    Q, protected = mech.channel_matrix()
    Q, protected = np.asarray(Q, np.float64), np.asarray(protected, bool)
    assert np.all((Q[:, ~protected] > 0).sum(axis=0) <= 1)
    return np.where(protected, -1, np.argmax(Q > 0, axis=0)), protected, (Q > 0).any(axis=0)


def _assert_agrees(mech, ys):
    """Every column of the channel is among ``ys``' columns, and the predicates agree with the channel on each."""
    cols = np.asarray(likelihood_of(mech).index(ys))
    assert set(cols.tolist()) == set(range(int(mech.num_outputs))), "not every report column was built"
    owner, protected, reached = _owner(mech)
    np.testing.assert_array_equal(np.asarray(mech.revealed_inputs(ys)) < 0, protected[cols])
    # an invertible report names its column's one positive row (a column of probability 0 names no input)
    on = reached[cols]
    np.testing.assert_array_equal(np.asarray(mech.revealed_inputs(ys))[on], owner[cols][on])
    np.testing.assert_array_equal(np.asarray(supported_items(mech, ys)),
                                  np.asarray(likelihood_of(mech).support(), bool)[cols][:, :mech.d])


def _base_reports(base, key, per_input=200_000, rounds=20):
    """One base report of every base column, drawn from every base input in rounds until each column is seen
    (uWheel's base has columns of probability about 1e-5)."""
    xs = jnp.repeat(jnp.arange(base.d, dtype=jnp.int32), per_input)
    found = {}
    for r in range(rounds):
        ys = base.perturb_batch(jax.random.fold_in(key, r), xs)
        cols, first = np.unique(np.asarray(likelihood_of(base).index(ys)), return_index=True)
        new = ~np.isin(cols, list(found))
        found.update({int(c): jax.tree.map(lambda a: a[i], ys) for c, i in zip(cols[new], first[new])})
        if len(found) == int(base.num_outputs):
            return jax.tree.map(lambda *a: jnp.stack(a), *found.values())
    raise AssertionError(f"{len(found)} of {base.num_outputs} base columns drawn: raise per_input")


def _glutf_reports(mech, key):
    base = _base_reports(mech.base, key)
    nb = jax.tree.leaves(base)[0].shape[0]
    nonsens = [x for x in range(mech.d) if x not in mech.sensitive]
    forms = [(True, -1)] + [(False, x) for x in nonsens] + [(True, x) for x in nonsens]
    rep = lambda a: jnp.concatenate([a] * len(forms))  # noqa: E731
    has_base = jnp.repeat(jnp.array([h for h, _ in forms]), nb)
    item = jnp.repeat(jnp.array([x for _, x in forms], jnp.int32), nb)
    return type(mech.perturb_batch(key, jnp.zeros(1, jnp.int32)))(jax.tree.map(rep, base), has_base, item)


@pytest.mark.parametrize("name", GLUTF_FAMILY)
def test_glutf_family_predicate_is_the_channels_mask(key, name):
    mech = ul.mechanisms.examples()[name](1.0)
    _assert_agrees(mech, _glutf_reports(mech, key))


def test_ubd_predicate_is_the_channels_mask():
    mech = ul.mechanisms.examples()["UBD"](1.0)
    subsets = [np.array([np.isin(np.arange(mech.s), c) for c in itertools.combinations(range(mech.s), k)])
               for k in mech.sizes]
    nonsens = [x for x in range(mech.d) if x not in mech.sensitive]
    sub = np.concatenate(subsets + [np.zeros((len(nonsens), mech.s), bool)])
    item = np.r_[np.full(sum(len(b) for b in subsets), -1), nonsens].astype(np.int32)
    _assert_agrees(mech, type(mech.perturb_batch(jax.random.key(0), jnp.zeros(1, jnp.int32)))(
        jnp.asarray(sub), jnp.asarray(item)))


@pytest.mark.parametrize("mech", [ul.URR(5, (0, 2, 3), 1.0), ul.URR(6, (5,), 2.0)], ids=repr)
def test_urr_predicate_is_the_channels_mask(mech):
    ys = jnp.arange(mech.num_outputs, dtype=jnp.int32)
    _assert_agrees(mech, ys)
    np.testing.assert_array_equal(ul.Mechanism.revealed_inputs(mech, ys), mech.revealed_inputs(ys))  # = default


def test_urap_predicate_is_the_channels_mask():
    mech = ul.URAP(5, (0, 2, 3), 1.0)
    bits = (np.arange(2**5)[:, None] >> np.arange(5)) & 1
    ys = jnp.asarray(bits, bool)
    owner, protected, reached = _owner(mech)  # columns: sum_j bit_j 2^j
    np.testing.assert_array_equal(np.asarray(mech.revealed_inputs(ys)) < 0, protected)
    np.testing.assert_array_equal(np.asarray(mech.revealed_inputs(ys))[reached], owner[reached])
    np.testing.assert_array_equal(ul.Mechanism.revealed_inputs(mech, ys)[reached], owner[reached])  # the default
    compact = mech.compact().perturb(jax.random.key(1), jnp.arange(5, dtype=jnp.int32))
    np.testing.assert_array_equal(mech.revealed_inputs(compact), mech.revealed_inputs(ul.to_dense(compact)))


def test_the_default_for_ldp_and_its_refusals(key):
    grr = ul.GRR(4, 1.0)
    assert np.all(np.asarray(grr.revealed_inputs(jnp.arange(4))) == -1)  # LDP: every report protected
    uss = ul.mechanisms.examples()["USS"](1.0)
    ys = uss.perturb_batch(key, jnp.arange(5, dtype=jnp.int32))
    with pytest.raises(ValueError, match="define revealed_inputs"):
        ul.Mechanism.revealed_inputs(uss, ys)  # the default cannot read GLUTF reports off the channel
    urr = ul.URR(5, (0, 2, 3), 1.0)
    with pytest.raises(ValueError, match="concrete parameters"):
        jax.jit(lambda m, y: ul.Mechanism.revealed_inputs(m, y))(urr, jnp.arange(5))
    jax.jit(lambda m, y: m.revealed_inputs(y))(uss, ys)  # the overrides trace


def _uldp_over_items(mech):
    """A ULDP claim over the mechanism's own ``d`` items (PUM's is over Z, items and bots: its ``cmn``, a uRR, is
    what samples those inputs)."""
    spec = mech.privacy_spec()
    return spec.invertible_inputs is not None and int(np.shape(spec.E)[0]) == mech.d


ULDP_EXAMPLES = sorted(n for n, make in ul.mechanisms.examples().items() if _uldp_over_items(make(1.0)))


@pytest.mark.parametrize("name", ULDP_EXAMPLES)
def test_every_uldp_example_names_what_its_channel_says(key, name):
    """Every registered ULDP constructor (overriding ``revealed_inputs`` or not), on reports of every input: the
    predicate is the channel's mask and an invertible report names its column's one positive row."""
    assert len(ULDP_EXAMPLES) >= 9  # uRR, uRAP, the GLUTF family, uBD
    mech = ul.mechanisms.examples()[name](1.0)
    ys = mech.perturb_batch(key, jnp.repeat(jnp.arange(mech.d, dtype=jnp.int32), 200))
    cols = np.asarray(likelihood_of(mech).index(ys))
    owner, protected, _ = _owner(mech)
    np.testing.assert_array_equal(np.asarray(mech.revealed_inputs(ys)), owner[cols])
    assert (owner[cols] >= 0).any() and (owner[cols] < 0).any()  # both kinds of report were drawn
