"""simulate at scale: chunking invariance, no retracing, progress, path selection and bad input."""


import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul

from uldp_jax import _cache
from uldp_jax.engine import _engine as sim

P5 = np.array([0.4, 0.1, 0.2, 0.2, 0.1])
KEY = jax.random.key(11)


def _stats(**kw):
    return np.asarray(ul.simulate_stats(KEY, ul.GRR(5, 1.0), p=P5, **kw)[0])


def test_per_user_chunking_and_batching_do_not_change_results():
    base = _stats(n=3000, reps=4, path="per_user", block_size=256)
    for kw in ({"chunk_blocks": 1}, {"chunk_blocks": 5}, {"rep_batch": 2}, {"rep_chunk": 3}):
        np.testing.assert_array_equal(_stats(n=3000, reps=4, path="per_user", block_size=256, **kw), base)


P6 = np.array([0.3, 0.0, 0.25, 0.05, 0.1, 0.3])
R = 600  # the shapes of tests/engine/test_counts_path.py: the counts kernels compile once per session


def _counts(**kw):
    return np.asarray(ul.simulate_stats(KEY, ul.GRR(6, 1.0), p=P6, n=2500, **kw)[0])


def test_counts_rep_chunk_does_not_change_results():
    base = _counts(reps=R, path="counts")
    two_chunks = _counts(reps=2 * R, path="counts", rep_chunk=R)  # same compiled shape, two host chunks
    np.testing.assert_array_equal(two_chunks[:R], base)
    assert base.shape == (R, 6) and np.all(base.sum(1) == 2500)
    assert not np.array_equal(two_chunks[R:], base)


def test_auto_path_picks_counts_when_exact():
    np.testing.assert_array_equal(_counts(reps=R), _counts(reps=R, path="counts"))


def test_no_retrace_per_chunk_or_per_call():
    kw = {"n": 2000, "reps": 6, "path": "per_user", "block_size": 160, "rep_chunk": 2}
    before = sim.TRACE_COUNTS["per_user"]
    first = _stats(**kw)  # 3 chunks of 2 repetitions: at most one trace (none if an earlier test made this shape)
    assert sim.TRACE_COUNTS["per_user"] - before <= 1
    before, clears = sim.TRACE_COUNTS["per_user"], _cache._MAPS["clears"]
    again = np.asarray(ul.simulate_stats(jax.random.key(12), ul.GRR(5, 2.0), p=P5, **kw)[0])
    if _cache._MAPS["clears"] != clears:  # the memory-map guard freed every compiled program (a long-lived worker)
        before = sim.TRACE_COUNTS["per_user"]
        again = np.asarray(ul.simulate_stats(jax.random.key(12), ul.GRR(5, 2.0), p=P5, **kw)[0])
    assert sim.TRACE_COUNTS["per_user"] == before  # new key, eps and p: same compiled function
    assert first.shape == again.shape == (6, 5)


def test_progress_reports_per_chunk_and_can_be_off(capsys):
    _stats(n=2000, reps=6, path="per_user", block_size=160, rep_chunk=2, progress="stderr")
    err = capsys.readouterr().err
    assert "2/6 reps" in err and "6/6 reps" in err
    _stats(n=2000, reps=6, path="per_user", block_size=160, rep_chunk=2, progress=False)
    assert capsys.readouterr().err == ""
    with pytest.raises(TypeError, match="progress"):
        _stats(n=2000, reps=2, progress="loud")


class _NoFastPath(ul.GRR):
    """A GRR without a count-level sampler."""

    def counts(self):
        return None


def test_bad_input():
    mech = _NoFastPath(5, 1.0)
    with pytest.raises(ValueError, match="path='counts'"):
        ul.simulate(KEY, mech, p=P5, n=100, path="counts")
    with pytest.raises(ValueError, match="path"):
        ul.simulate(KEY, ul.GRR(5, 1.0), p=P5, n=100, path="fast")
    with pytest.raises(ValueError, match="shard"):
        ul.simulate(KEY, ul.GRR(5, 1.0), p=P5, n=100, shard="rows")
    with pytest.raises(ValueError, match="shard"):
        ul.simulate(KEY, ul.GRR(5, 1.0), p=P5, n=100, path="counts", shard="users")
    with pytest.raises(TypeError, match="devices"):
        ul.simulate(KEY, ul.GRR(5, 1.0), p=P5, n=100, devices=["cpu"])
    with pytest.raises(ValueError, match="rep_chunk"):
        ul.simulate(KEY, ul.GRR(5, 1.0), p=P5, n=100, rep_chunk=0)
    with pytest.raises(ValueError, match="n="):
        ul.simulate(KEY, ul.GRR(5, 1.0), p=P5, n=2**31, path="counts")


def test_single_device_list_matches_default():
    np.testing.assert_array_equal(_counts(reps=R, path="counts", devices=jax.devices()[:1]),
                                  _counts(reps=R, path="counts"))


class _ConstantCounts(ul.GRR):
    """An outside mechanism whose count sampler is a protocol method (no registry): the engine must call it."""

    def counts(self):
        # iid=None: the engine draws Multinomial(n, p) true counts, then fixed
        return ul.fastpath.Counts(fixed=lambda key, counts: counts[::-1] * 0 + jnp.arange(self.d, dtype=counts.dtype))


@pytest.mark.slow
def test_count_sampler_is_a_protocol_method():
    mech = _ConstantCounts(5, 1.0)
    rec = ul.fastpath.counts_of(mech)  # a bare Counts record gets the defaults filled in
    assert ul.fastpath.has_count_path(mech) and rec.fixed is not None and rec.iid is None
    assert rec.draws(True) == 10.0 and rec.memory(True) is None  # d + num_stats; memory estimated from draws
    stats = np.asarray(ul.simulate_stats(KEY, mech, p=P5, n=100, reps=2, path="counts")[0])
    np.testing.assert_array_equal(stats, np.tile(np.arange(5), (2, 1)))
    assert ul.GRR(5, 1.0).counts().iid is not None and ul.SS(5, 1.0).counts().fixed is None
    assert ul.Mechanism.counts(mech) is None


def test_a_counts_record_without_a_sampler_or_of_the_wrong_type_is_refused():
    with pytest.raises(ValueError, match="fixed or iid"):
        ul.fastpath.counts_of(type("Empty", (ul.GRR,), {"counts": lambda self: ul.fastpath.Counts()})(5, 1.0))
    bare = type("Bare", (ul.GRR,), {"counts": lambda self: (lambda key, counts: counts)})(5, 1.0)
    with pytest.raises(TypeError, match=r"Bare.counts\(\) to return a Counts record"):
        ul.fastpath.has_count_path(bare)


@pytest.mark.parametrize("impl", ["rbg", "unsafe_rbg"])
def test_non_threefry_keys_are_refused_with_the_reason(impl):
    """rbg draws are batched on the first key under vmap, so chunk_blocks would change the numbers (issue 17)."""
    for path in ("per_user", "counts"):
        with pytest.raises(ValueError, match="threefry.*chunk_blocks"):
            ul.simulate(jax.random.key(3, impl=impl), ul.GRR(5, 1.0), p=P5, n=100, path=path)
    sim.check_key_impl(jax.random.key(3))  # threefry (typed or raw) is accepted
    sim.check_key_impl(jax.random.PRNGKey(3))
