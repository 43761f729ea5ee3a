"""simulate's report path draws its blocks of reports a batch at a time (``report_batch_entries`` of the sizing
policy) with a batch that divides the blocks: the reports and estimates do not depend on the batch, and the
compiled program holds the reports once (a batch with a remainder made ``lax.map`` concatenate its two outputs,
and XLA kept a concatenated copy per consumer)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import _sizing
from uldp_jax.engine import _reports_device, _shard


@pytest.fixture
def override():
    _sizing.SIZING_OVERRIDE.clear()
    yield _sizing.SIZING_OVERRIDE
    _sizing.SIZING_OVERRIDE.clear()


def test_cpu_report_batch_default():
    assert _sizing.sizing(jax.devices("cpu")[0]).report_batch_entries == 2**23


@pytest.mark.parametrize("num_blocks,batch,want", [(235, 44, 47), (235, 11, 5), (233, 44, 1), (12, 5, 6), (10, 3, 2),
                                                   (7, 7, 7), (1, 1, 1), (100, 1, 1), (64, 64, 64), (96, 40, 48)])
def test_dividing_batch(num_blocks, batch, want):
    got = _reports_device.dividing_batch(num_blocks, batch)
    assert got == want
    assert num_blocks % got == 0 and 1 <= got <= max(1, 3 * batch // 2)


def test_dividing_batch_is_the_nearest_divisor_by_ratio():
    for num_blocks in range(1, 80):
        for batch in range(1, num_blocks + 1):
            got = _reports_device.dividing_batch(num_blocks, batch)
            divisors = [c for c in range(1, 3 * batch // 2 + 1) if num_blocks % c == 0]
            assert num_blocks % got == 0
            assert abs(np.log(got / batch)) == min(abs(np.log(c / batch)) for c in divisors)


def _simulate(mech, override, entries):
    override["report_batch_entries"] = entries
    xs = jnp.asarray(np.arange(9 * 256 - 100) % 50, jnp.int32)  # 9 blocks of 256 (the last one partly masked)
    return ul.simulate(jax.random.key(4), mech, xs=xs, reps=2, methods=("em",), block_size=256)


@pytest.mark.slow
@pytest.mark.default_codegen  # XLA's element-wise emitter (the suite's flags) orders EM's sums by batch shape
@pytest.mark.parametrize("mech", [ul.RAPPOR(512, 8.0), ul.RAPPOR(512, 3.0), ul.URAP(512, tuple(range(100)), 8.0)],
                         ids=["RAPPOR-rows", "RAPPOR-packed", "URAP-rows"])
def test_report_path_bit_identical_across_report_batches(mech, override, monkeypatch):
    """From one block a batch to all 9 at once: the same stats; the same EM estimates to the last bit for 1 and 3
    blocks a batch. All 9 in one batch (a single map step, which XLA compiles without the loop) gives the same
    reports but EM sums that round differently: equal within float32 rounding (observed ~6e-9)."""
    batches = []
    dividing = _reports_device.dividing_batch

    def record(num_blocks, batch):
        batches.append(dividing(num_blocks, batch))
        return batches[-1]

    monkeypatch.setattr(_reports_device, "dividing_batch", record)
    base = None
    for entries in (1, 2**18, 2**30):  # batches of 1, 3 and 9 blocks (2**19 entries gave 3 again: the same program)
        jax.clear_caches()  # compiled programs are keyed without the sizing: trace each anew
        res = _simulate(mech, override, entries)
        got = (np.asarray(res.stats), np.asarray(res.estimates["em"]))
        if base is None:
            base = got
        else:
            np.testing.assert_array_equal(got[0], base[0])
            if batches[-1] < 9:
                np.testing.assert_array_equal(got[1], base[1], err_msg=f"entries={entries}, batches={batches}")
            else:
                np.testing.assert_allclose(got[1], base[1], rtol=0, atol=1e-7)
    assert len(set(batches)) >= 3 and 1 in batches and 9 in batches


@pytest.mark.slow
@pytest.mark.default_codegen  # its EM estimates of two batchings are compared bit for bit
def test_report_path_holds_the_reports_once(override, monkeypatch):
    """With a batch that leaves a remainder (the old rule) the compiled program's temporaries held the reports
    more than once; with a dividing batch they are smaller by at least one copy of the reports."""
    mech = ul.RAPPOR(2048, 6.0)
    xs = jnp.asarray(np.arange(45 * 1024) % 300, jnp.int32)  # 45 blocks of 1024
    seen = {}
    compile_kernel = _shard.compile_kernel.__wrapped__

    def measure(local, static, mesh, mode, grid):
        fn = compile_kernel(local, static, mesh, mode, grid)  # traced anew: the patched rule is read when tracing

        def call(*args):
            compiled = fn.lower(*args).compile()
            seen["temp"] = compiled.memory_analysis().temp_size_in_bytes
            seen["width"] = dict(static)["form"].sizes[2]  # sizes = (rows, ones, width): the support lists' width
            return compiled(*args)

        return call

    monkeypatch.setattr(_shard, "compile_kernel", measure)
    override["report_batch_entries"] = 2 * 1024 * 161  # 2 blocks of the sampler's width: 45 = 22 x 2 + 1
    out = {}
    for rule in ("remainder", "dividing"):
        if rule == "remainder":
            monkeypatch.setattr(_reports_device, "dividing_batch", lambda num_blocks, batch: batch)
        else:
            monkeypatch.undo()
            monkeypatch.setattr(_shard, "compile_kernel", measure)
        res = ul.simulate(jax.random.key(0), mech, xs=xs, reps=1, methods=("em",))
        out[rule] = seen["temp"], np.asarray(res.estimates["em"])
    reports_bytes = 45 * 1024 * seen["width"] * 2  # uint16 support lists
    assert out["dividing"][0] + reports_bytes < out["remainder"][0]
    np.testing.assert_array_equal(out["dividing"][1], out["remainder"][1])
