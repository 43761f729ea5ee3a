"""Report-based estimation on bit-vector reports (RAPPOR/UE, uRAP) inside ``simulate``, on the device.

Every repetition runs on the device in one compiled program: block ``b`` of repetition ``r`` draws its reports
with simulate's block inputs (``fold_in(fold_in(key, r), b)``) and keeps them in the smaller exact form: packed to
``d / 8`` bytes per report (``_packed.pack_dense`` from ``perturb_batch``, or ``_packed.pack_ones`` from
``compact().perturb``'s positions of the ones; the method gets ``PackedReports``), or, for compact reports with few
ones, the positions themselves as support lists (``_support.compact_rows``; per user, ``_support.own_bit_rows``,
where only a report's own bit can leave the product part) in the column layout that ``ul.estimate`` builds on
the host, built here on the device (``_support_device.compact_columns``: product-part rows only, both EM passes
gathers). No report leaves the device and no host loop runs over repetitions or blocks. The program is
module-level and keyed by the mechanism type and static fields, the (bucketed) sizes, the method and its options:
a second ``simulate`` call with other data, key or eps in the same size buckets compiles nothing.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _sizing
from uldp_jax.estimation import _packed, _support, _support_device
from uldp_jax.mechanisms.core import _compact
from uldp_jax.mechanisms.core import CompactBits
from uldp_jax.engine import _layout as _schedule
from uldp_jax.engine import _shard


def rows_and_chunk(mech: Any, rows: int) -> tuple[int, int, int]:
    """``(bytes per report, rows per chunk, padded rows)`` of ``rows`` packed reports of ``mech``."""
    prod_mask, _ = _support.unary_parts(mech)
    nb = _packed.num_bytes(int(prod_mask.sum()))
    chunk = _packed.chunk_rows(nb, rows)
    return nb, chunk, -(-rows // chunk) * chunk


def _hashable(opts: dict) -> tuple | None:
    items = tuple(sorted(opts.items()))
    try:
        hash(items)
    except TypeError:
        return None
    return items


class Form(NamedTuple):
    """The device report form of a bit-vector route, decided once per call from exact sizes.

    ``num_chunks = 0``: dense reports from ``perturb_batch``, bit-packed; ``> 0``: ``compact().perturb(ky, xs,
    num_chunks)``, bit-packed (``packed``) or as support lists in the column layout
    (``_support_device.compact_columns``), their rows, ones and report width bounded by ``sizes = (rows, ones,
    width)`` (bucketed; ``rows = 0``: all rows, ones unbounded; ``width = 0``: the sampler's
    ``num_chunks * CHUNK + 1``; a narrower width drops only padding columns). The caller counts these sizes on the
    same reports (``_reports._chunks_all``), so no bound is ever passed.
    """

    num_chunks: int = 0
    packed: bool = True
    sizes: tuple[int, ...] = (0, 0, 0)


def packed_estimates(key: jax.Array, plan: Any, mech: Any, spec: Any, opts: dict, form: Form = Form(),
                     bar: Any = None) -> tuple:
    """``(float[reps, d] estimates of spec, int32[reps, num_stats] stats)`` of every repetition's reports (module
    docstring), run by the engine's runner (``_shard``): repetitions in host-side chunks of ``plan.rep_chunk``
    (``bar`` updated after each), ``plan.rep_batch`` at a time, split over ``plan.mesh``'s devices. The stats are
    the reports' own per-bit sums: ``simulate``'s per-user stats for the same key.

    ``plan`` gives the population and its layout; ``mech`` is the plan's mechanism or one point of its grid.
    """
    items = _hashable(opts)
    static = (("iid", plan.iid), ("block_size", plan.block_size), ("num_blocks", plan.num_blocks),
              ("rep_batch", plan.rep_batch), ("form", form), ("spec", spec),
              ("opts", items if items is not None else tuple(opts.items())))
    compile_kernel = _shard.compile_kernel if items is not None else _shard.compile_kernel.__wrapped__
    # one repetition's EM reads all of its reports: repetitions, never users, are split over the devices
    fn = compile_kernel(report_kernel, static, plan.mesh, "reps", False)
    ndev = 1 if plan.mesh is None else plan.mesh.size
    rep_len = -(-plan.rep_chunk // ndev) * ndev  # the padding repetitions are skipped, not drawn
    args = (key, mech, jnp.asarray(plan.n, jnp.int32), plan.data)
    est, stats = _shard.run_chunks(fn, args, plan.reps, plan.rep_chunk, False, bar or _NoBar(), rep_len)
    return jnp.asarray(est), jnp.asarray(stats)


class _NoBar:
    def update(self, _):
        pass


def report_kernel(key, m, n, data, rep_ids, *, axis, iid, block_size, num_blocks, rep_batch, form, spec, opts):
    """A repetition kernel (``_shard``): ``(estimates, stats)`` of the repetitions ``rep_ids`` (``-1``: padding,
    skipped), each from ``fold_in(key, r)`` with simulate's block inputs."""
    del axis  # repetitions mode only
    num_chunks, packed, sizes = form
    opts = dict(opts)
    prod_mask, has_inv = _support.unary_parts(m)
    items = jnp.asarray(np.flatnonzero(prod_mask), jnp.int32)
    rows = num_blocks * block_size
    nb, chunk, rows_pad = rows_and_chunk(m, rows)
    width = m.d if num_chunks == 0 else num_chunks * _compact.CHUNK + 1
    batch = block_batch(num_blocks, block_size * width)
    by_user = num_chunks > 0 and not packed and _support.others_in_product(m)

    def one_rep(r):
        key_r = jax.random.fold_in(key, r)

        def block(b):
            ky, xs, w = _schedule.block_inputs(key_r, b, n, data, iid, block_size)
            if num_chunks == 0:
                return _packed.pack_dense(m, m.perturb_batch(ky, xs), w)
            ones = m.compact().perturb(ky, xs, num_chunks).ones
            if packed:
                return _packed.pack_ones(m, ones, w)
            cut = sizes[2] if sizes[2] else ones.shape[1]  # the widest report: only padding columns are cut
            ones = jnp.where(w[:, None], ones[:, :cut], jnp.asarray(m.d, ones.dtype))
            if by_user:  # invertible reports found per user; their rows are padded after the column move
                wt, inv = _support.own_bit_rows(m, ones, xs, w)
                return ones, wt, inv, _compact.aggregate(CompactBits(ones, m.d))
            sup = _support.compact_rows(m, CompactBits(ones, m.d), block_size)
            return sup.support, sup.weight * w, sup.inverted, sup.stats

        by, wt, inv, st = _sizing.chunked_map(block, jnp.arange(num_blocks), batch)
        stats = jnp.sum(st, axis=0)
        sums = stats.astype(jnp.int32)  # handed back as simulate's stats
        if spec.input == "stats":
            return spec.fn(m, stats, n, **opts), sums
        if num_chunks and not packed:
            sup = by.reshape(rows, by.shape[-1])
            kept, ones = sizes[:2] if sizes[0] else (rows, rows * sup.shape[1])
            rep = _support_device.compact_columns(sup, wt.reshape(rows), jnp.sum(inv, axis=0), stats, m.d,
                                                  min(kept, rows), ones, int(prod_mask.sum()), clean=by_user and has_inv)
            return spec.fn(m, rep, **opts), sums
        pad = rows_pad - rows
        rep = _packed.PackedReports(jnp.pad(by.reshape(rows, nb), ((0, pad), (0, 0))),
                                    jnp.pad(wt.reshape(rows), (0, pad)), jnp.sum(inv, axis=0), stats, items, chunk)
        return spec.fn(m, rep, **opts), sums

    return skip_padding(one_rep, rep_ids, rep_batch)


def skip_padding(one_rep: Any, rep_ids: jax.Array, rep_batch: int) -> Any:
    """``one_rep`` over ``rep_ids`` (``-1``: padding), ``rep_batch`` repetitions at a time (vmapped; one at a time
    is a plain loop: a vmapped EM compiled to a slower program on XLA CPU, ``_sizing.chunked_map``). Batches that
    hold only padding are not run; their outputs are zeros."""
    R = rep_ids.shape[0]
    batch = max(1, min(rep_batch, R))
    nb = -(-R // batch)
    ids = jnp.full((nb * batch,), -1, rep_ids.dtype).at[:R].set(rep_ids)
    todo = -(-jnp.sum(rep_ids >= 0) // batch)
    run = (lambda r: jax.tree_util.tree_map(lambda a: a[None], one_rep(r[0]))) if batch == 1 else jax.vmap(one_rep)
    shapes = jax.eval_shape(one_rep, jnp.int32(0))
    init = jax.tree_util.tree_map(lambda sd: jnp.zeros((nb * batch,) + sd.shape, sd.dtype), shapes)

    def body(j, out):
        part = run(jnp.maximum(jax.lax.dynamic_slice_in_dim(ids, j * batch, batch), 0))
        return jax.tree_util.tree_map(lambda o, p: jax.lax.dynamic_update_slice_in_dim(o, p, j * batch, axis=0),
                                      out, part)

    out = jax.lax.fori_loop(0, todo, body, init)
    return jax.tree_util.tree_map(lambda o: o[:R], out)


def block_batch(num_blocks: int, block_entries: int) -> int:
    """Blocks of ``block_entries`` report entries drawn at once: the sizing policy's ``report_batch_entries``, as a
    divisor of ``num_blocks`` (``dividing_batch``)."""
    per_batch = _sizing.sizing().report_batch_entries
    return dividing_batch(num_blocks, max(1, min(num_blocks, per_batch // block_entries)))


def dividing_batch(num_blocks: int, batch: int) -> int:
    """The divisor of ``num_blocks`` nearest ``batch`` by ratio, at most ``3 batch / 2`` (the smaller of two equally
    near). ``lax.map`` maps the remainder of a batch that does not divide the blocks on its own and concatenates the
    two outputs, and XLA then held the reports three times (the batched output and one concatenated copy for each
    consumer, the column layout's and the EM's; experiments/benchmarks/README.md (k)); with a dividing batch the output
    is one buffer, which every consumer reshapes in place."""
    near = [c for c in range(1, min(num_blocks, 3 * batch // 2) + 1) if num_blocks % c == 0]
    return min(near, key=lambda c: (abs(np.log(c / batch)), c))


def row_chunk(rows: int, width: int) -> int:
    """The largest divisor of ``rows`` with at most ``sizing().row_chunk_entries / 4`` entries per chunk (>= 1)."""
    target = max(1, _sizing.sizing().row_chunk_entries // 4 // width)
    return max(c for c in range(1, min(rows, target) + 1) if rows % c == 0)
