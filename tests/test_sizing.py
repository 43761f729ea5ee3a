"""``uldp_jax._sizing`` owns every size budget and rounding rule: code reads them through ``sizing()``'s record, so
``SIZING_OVERRIDE`` reaches each reader (a module constant elsewhere would not)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import _sizing


def test_perturb_reads_its_report_budget_through_sizing(monkeypatch):
    mech, xs = ul.OUE(64, 1.0), np.zeros(5000, np.int32)
    assert jax.tree_util.tree_leaves(ul.perturb(jax.random.key(0), mech, xs[:10]))[0].shape == (10, 64)
    monkeypatch.setitem(_sizing.SIZING_OVERRIDE, "perturb_report_bytes", 1000)
    with pytest.raises(ValueError, match="GiB of reports"):
        ul.perturb(jax.random.key(0), mech, xs)


def test_simulate_reads_its_vector_budget_through_sizing(monkeypatch):
    monkeypatch.setitem(_sizing.SIZING_OVERRIDE, "vector_bytes", 8 * 10)
    with pytest.raises(ValueError, match="GiB each"):
        ul.simulate(jax.random.key(0), ul.GRR(12, 1.0), p=np.full(12, 1 / 12), n=100)


def test_one_bucket_rule_per_kind_of_size():
    reps = [_sizing.rep_bucket(x) for x in (1, 2, 3, 4, 5, 7, 9, 13, 600)]
    assert reps == [1, 2, 3, 4, 6, 8, 12, 16, 768]  # 2^k or 3 * 2^k
    reports = [_sizing.report_bucket(k) for k in (1, 8, 9, 17, 100, 1000)]
    assert reports == [1, 8, 10, 20, 112, 1024]  # m 2^j, m in 4..7
    for k in range(1, 5000):
        assert k <= _sizing.report_bucket(k) <= 1.25 * k + 1 and k <= _sizing.rep_bucket(k) <= 1.5 * k + 1


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


def test_simulate_refuses_a_domain_whose_vectors_do_not_fit():
    with pytest.raises(ValueError, match=r"float64\[d\].*7.45 GiB"):
        ul.simulate(jax.random.key(0), ul.GRR(10**9, 1.0), xs=np.arange(10), reps=1)


def test_em_refuses_a_per_report_likelihood_too_large_to_iterate():
    mech = ul.OLH(10**4, 1.0)
    ys = ul.perturb(jax.random.key(0), mech, np.arange(2 * 10**4) % 10**4)
    with pytest.raises(ValueError, match=r"20000 x 10000 .*method='emp'"):
        ul.estimate(mech, ys, "em")


def test_few_reports_get_one_chunk_of_their_own_size_on_every_em_layout():
    """``_sizing.chunk_for``, the one rule of the packed passes, the host support lists (``_support.assemble``) and
    the device column layout (``_support_device.layout_sizes``): 300 compact reports of RAPPOR(1100) were padded to
    8,192 rows that every EM pass read."""
    from uldp_jax.estimation import _em_reports, _support_device

    assert _sizing.chunk_for(8192, None) == 8192 and _sizing.chunk_for(8192, 10**6) == 8192
    assert _sizing.chunk_for(8192, 300) == 512 and _sizing.chunk_for(8192, 512) == 512
    assert _sizing.chunk_for(8192, 1) == 8 and _sizing.chunk_for(4, 300) == 4
    mech = ul.RAPPOR(1100, 9.0)
    ys = ul.perturb(jax.random.key(1), mech, np.arange(300) % mech.d)
    rows = _em_reports.to_support(mech, ys, layout="rows")
    assert rows.support.shape[0] == rows.chunk == 512 and float(rows.weight.sum()) == 300
    many = _em_reports.to_support(mech, ul.perturb(jax.random.key(2), mech, np.arange(20_000) % mech.d),
                                  layout="rows")
    assert many.chunk == _sizing.pow2_floor(_sizing.sizing().row_chunk_entries // 4 // many.support.shape[1])
    chunk, num_blocks, block_rows = _support_device.layout_sizes(300, 24)
    assert chunk == block_rows == 512 and num_blocks == 1
