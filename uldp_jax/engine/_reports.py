"""Report-based estimation inside ``simulate``: regenerate each repetition's reports, then estimate.

``simulate`` keeps only aggregate statistics. A method on per-report likelihoods (``input="reports"``, e.g.
"em" for RAPPOR/uRAP) needs the reports themselves, so ``report_estimates`` regenerates them with exactly the
randomness layout of the per-user path (``uldp_jax.engine._layout.block_inputs`` + ``mech.perturb_batch``, block
``b`` of repetition ``r`` keyed by ``fold_in(fold_in(key, r), b)``): the reports it feeds to the method
aggregate to the very ``stats`` that ``simulate`` returns for the same ``key`` and ``block_size``. Where the
route sums bit-vector reports on the device anyway, ``report_estimates_and_stats`` hands those sums back and
``simulate`` returns them as its stats instead of drawing the per-user pass as well.

Forms (decided once per call, from exact sizes): bit-vector reports of RAPPOR/UE and uRAP (EM on the product
likelihood) never exist as a dense ``bool[n, d]``. Reports without a compact form (``compact().stats`` off:
domains below ``COMPACT_MIN_D``, or many ones) are bit-packed block by block on the device, ``d / 8`` bytes per
report, whatever their density: support lists would be smaller at large eps, but they need a first pass for their
width and a scatter-add in every EM pass, and took longer (experiments/benchmarks/README.md (k)). Compact reports
are packed where that is the smaller form; otherwise (few ones) their positions become support lists in the column
layout, built on the device, sized by one exact first pass that counts what every repetition's reports hold (no
positions kept). Reports of every other kind are drawn whole per repetition (dense). Those are the device forms:
a call whose reports do not fit ``sizing().held_report_bytes`` in its form is refused with an error naming what
to change (there is no host route). The only host loop is the documented protocol's: a method registered without
engine forms gets ``ul.perturb``'s form, concrete, one call per repetition.

Running: every form is a repetition kernel on the engine's runner (``_shard.compile_kernel`` /
``run_chunks``), so the run settings of the stats path reach it: repetitions in host-side chunks of
``rep_chunk`` with the progress bar updated after each, ``rep_batch`` at a time, split over ``devices`` (always
by repetition: one repetition's EM reads all of its reports). A grid runs point by point.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _sizing, _validate
from uldp_jax.estimation import _packed, _support
from uldp_jax.mechanisms.core import _compact
from uldp_jax.mechanisms.core import CompactBits, num_stats
from uldp_jax.engine import _layout as _schedule
from uldp_jax.engine import _reports_device, _shard


def rep_reports(key_r: jax.Array, mech: Any, data: jax.Array, n: int, iid: bool, block_size: int,
                num_blocks: int) -> Any:
    """All ``n`` reports of one repetition (leading axis = users), in the per-user path's layout."""
    block_inputs = _schedule.block_inputs

    def block(b):
        ky, xs, _ = block_inputs(key_r, b, jnp.int32(n), data, iid, block_size)
        return mech.perturb_batch(ky, xs)

    ys = jax.vmap(block)(jnp.arange(num_blocks))
    return jax.tree_util.tree_map(lambda a: a.reshape((num_blocks * block_size,) + a.shape[2:])[:n], ys)


def report_estimates(key: jax.Array, plan: Any, method: str, bar: Any = None) -> jax.Array:
    """Estimates of ``method`` over the plan's repetitions, on the reports behind ``simulate``'s stats.

    Args:
      key: the key given to ``simulate`` (repetition ``r`` uses ``fold_in(key, r)``).
      plan: the call's ``_plan.Plan`` (per-user path): its mechanism (or 1-D grid), population ``data``,
        ``n``, model, ``block_size``, ``num_blocks``, repetitions and their run settings (``rep_chunk``,
        ``rep_batch``, ``mesh``), the method resolved for the mechanism (``input="reports"`` methods get the
        reports, ``input="stats"`` methods their aggregate) and its options.
      method: a method name of ``plan.methods``.
      bar: a progress bar (``update(k)`` after each chunk of ``k`` repetitions) or ``None``.

    Returns:
      ``float[reps, d]`` (``[g, reps, d]`` for a grid).
    """
    return report_estimates_and_stats(key, plan, method, bar)[0]


def report_estimates_and_stats(key: jax.Array, plan: Any, method: str,
                               bar: Any = None) -> tuple[jax.Array, jax.Array | None]:
    """``(report_estimates(...), int32[reps, num_stats] or None)``: where the route aggregates the reports on the
    device anyway (bit vectors), their per-bit sums, which are ``simulate``'s per-user stats for the same key and
    ``block_size`` (so ``simulate`` need not draw them a second time); ``None`` elsewhere.

    A grid runs point by point, each point in the form a single mechanism gets (points of one form and size share
    one compiled program): one point's reports are held at once, not the whole grid's, and a common form kept
    every point at the widest point's sizes (experiments/benchmarks/README.md (k)).
    """
    spec, opts = plan.methods[method], dict(plan.options.get(method, {}))
    if plan.grid is None:
        return _estimates(key, plan, plan.mech, spec, opts, bar)
    outs = []
    for i in range(plan.grid):
        point = jax.tree_util.tree_map(lambda leaf, i=i: leaf[i], plan.mech)
        outs.append(_estimates(key, plan, point, spec, opts, _Share(bar, plan.grid)))
    stats = None if any(st is None for _, st in outs) else jnp.stack([st for _, st in outs])
    return jnp.stack([est for est, _ in outs]), stats


class _Share:
    """A progress bar's updates shared by a grid's points: each point's repetitions count ``1 / points``."""

    def __init__(self, bar: Any, points: int):
        self.bar, self.points, self.done = bar, points, 0.0

    def update(self, k: int) -> None:
        if self.bar is not None:
            before = int(self.done)
            self.done += k / self.points
            if int(self.done) > before:
                self.bar.update(int(self.done) - before)


def _estimates(key, plan, mech, spec, opts, bar):
    """``report_estimates_and_stats`` of one mechanism (the plan's, or one point of its grid)."""
    if spec.input == "reports" and not spec.forms:  # the documented protocol: ul.perturb's form (_registry)
        return _perturb_form_estimates(key, plan, mech, spec, opts), None
    compact = mech.compact()
    if compact is not None and compact.stats:
        return _compact_estimates(key, plan, mech, spec, opts, bar)
    rows = plan.num_blocks * plan.block_size
    if _is_unary(mech):  # bit-packed even where support lists would be smaller (few ones): they need a first pass
        # for their width and a scatter-add per EM pass, and took longer (experiments/benchmarks/README.md (k))
        _, _, rows_pad = _reports_device.rows_and_chunk(mech, rows)
        nb = _reports_device.rows_and_chunk(mech, rows)[0]
        _check_bytes(plan.rep_batch, rows_pad, nb)
        return _reports_device.packed_estimates(key, plan, mech, spec, opts, bar=bar)
    _check_bytes(plan.rep_batch, rows, int(num_stats(mech)) if mech.report_kind == "bits" else 4)
    return _run_dense(key, plan, mech, spec, opts, bar), None


def _run_dense(key, plan, mech, spec, opts, bar):
    """Dense reports of any other kind (``perturb_batch``'s), on the engine's runner (``_shard``)."""
    items = _reports_device._hashable(opts)
    static = (("iid", plan.iid), ("block_size", plan.block_size), ("num_blocks", plan.num_blocks),
              ("rep_batch", plan.rep_batch), ("spec", spec), ("users", int(plan.n)),
              ("opts", items if items is not None else tuple(opts.items())))
    compile_kernel = _shard.compile_kernel if items is not None else _shard.compile_kernel.__wrapped__
    fn = compile_kernel(_dense_kernel, static, plan.mesh, "reps", False)
    ndev = 1 if plan.mesh is None else plan.mesh.size
    args = (key, mech, jnp.asarray(plan.n, jnp.int32), plan.data)
    est = _shard.run_chunks(fn, args, plan.reps, plan.rep_chunk, False, bar or _reports_device._NoBar(),
                            -(-plan.rep_chunk // ndev) * ndev)
    return jnp.asarray(est)


def _dense_kernel(key, m, n, data, rep_ids, *, axis, iid, block_size, num_blocks, rep_batch, spec, users, opts):
    """A repetition kernel: estimates of ``spec`` on each repetition's dense reports (``rep_ids``: -1 padding);
    ``users`` is ``n`` as a static size (the method sees exactly the ``n`` reports)."""
    del axis, n
    opts = dict(opts)

    def one_rep(r):
        ys = rep_reports(jax.random.fold_in(key, r), m, data, users, iid, block_size, num_blocks)
        if spec.input == "stats":
            return spec.fn(m, m.aggregate(ys), users, **opts)
        return spec.fn(m, ys, **opts)

    return _reports_device.skip_padding(one_rep, rep_ids, rep_batch)


def _perturb_form_estimates(key, plan, mech, spec, opts):
    """Each repetition's reports in ``ul.perturb``'s form, handed concrete to a method that declares no engine
    form (``_registry``'s protocol): ``CompactBits`` where the compact sampler draws the stats, else
    ``perturb_batch``'s reports. The method may be plain Python, so it is called once per repetition."""
    data, n, iid, block_size, num_blocks, reps = (plan.data, plan.n, plan.iid, plan.block_size, plan.num_blocks,
                                                  plan.reps)
    compact = mech.compact()
    if compact is not None and compact.stats:
        items_s = _StaticItems(compact.params[0])
        per = np.asarray(_chunks_all(mech, key, data, jnp.int32(n), iid, block_size, num_blocks, items_s, reps))
        nc = max(int(per[..., 0].max()), 1)
        return _compact_on_host(key, mech, spec, data, n, iid, block_size, num_blocks, reps, opts, items_s, nc)
    _check_bytes(1, num_blocks * block_size, int(num_stats(mech)) if mech.report_kind == "bits" else 4)
    draw = jax.jit(rep_reports, static_argnums=(3, 4, 5, 6))
    return jnp.stack([spec.fn(mech, draw(jax.random.fold_in(key, r), mech, data, n, iid, block_size, num_blocks),
                              **opts) for r in range(reps)])


def _is_unary(mech: Any) -> bool:
    try:
        _support.unary_parts(mech)
    except ValueError:
        return False
    return True


def _check_bytes(rep_batch: int, rows: int, per_user: int) -> None:
    if rep_batch * rows * per_user > _sizing.sizing().held_report_bytes:
        raise ValueError(f"simulate's report route would hold {rep_batch} x {rows} reports of {per_user} bytes at "
                         f"once, more than sizing().held_report_bytes = {_sizing.sizing().held_report_bytes}: reduce "
                         "n or rep_batch, or draw the reports with ul.perturb and estimate them with ul.estimate.")


def _prefers_packed(mech: Any) -> bool:
    """Bit-packed reports (``d / 8`` bytes each) where they are smaller than support lists (2 bytes per one):
    decided from the expected number of product-part ones (concrete rates; else support lists)."""
    compact = mech.compact()
    params = None if compact is None else compact.params
    if params is None or not all(_validate.is_concrete(a) for a in params[1:]):
        return False
    items_s, own_prob, q = params
    prod_mask, _ = _support.unary_parts(mech)
    ones = float(np.max(np.asarray(own_prob))) + len(items_s) * float(np.max(np.asarray(q)))
    return _packed.num_bytes(int(prod_mask.sum())) <= 2 * ones


class _StaticItems:
    """A concrete item set as a static (hashable) jit argument: compared by value."""

    def __init__(self, items: Any):
        self.items = np.asarray(items, np.int64)
        self._key = (self.items.shape, self.items.tobytes())

    def __hash__(self) -> int:
        return hash(self._key)

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, _StaticItems) and self._key == other._key


@functools.partial(jax.jit, static_argnums=(4, 5, 6, 7))
def _chunks_needed(m, key_r, data, n, iid, block_size, num_blocks, items_s):
    """``int32[num_blocks, 4]``: per block, the most chunks of ``CHUNK`` gaps a user needs, its product-part
    reports (rows of the support lists), a bound on those rows' ones (exact where every other item is in the
    product part; else every report's product-part ones) and the most ones in one of its reports
    (``sample_sizes`` / ``sample_counts``; no positions; the host sums blocks in int64)."""
    prod_mask, has_inv = _support.unary_parts(m)
    prod = jnp.asarray(prod_mask)
    d = num_stats(m)
    # where every "other" item is in the product part, a report leaves it only by its own bit: count per report,
    # so that the ones of the rows EM keeps are bounded, not every report's (uRAP's invertible rows hold ones
    # too: at bench_em's setting 6.2M kept of 27.7M, and the column layout was sized for all of them)
    per_report = _support.others_in_product(m)

    def block(b):
        ky, xs, w = _schedule.block_inputs(key_r, b, n, data, iid, block_size)
        _, own_prob, q = m.compact().params
        if per_report:
            nc, ones, own = _compact.sample_sizes(ky, xs, items_s.items, own_prob, q, d, w)
            out = own & ~prod[jnp.clip(xs, 0, d - 1)]  # the own bit outside the product part: an invertible row
            inv = jnp.sum(out, dtype=jnp.int32) if has_inv else 0
            kept_ones = jnp.sum(jnp.where(out, 0, ones), dtype=jnp.int32) if has_inv else jnp.sum(ones, dtype=jnp.int32)
            return jnp.stack([nc, jnp.sum(w, dtype=jnp.int32) - inv, kept_ones, jnp.max(ones, initial=0)])
        counts, nc, widest = _compact.sample_counts(ky, xs, items_s.items, own_prob, q, d, w)
        inv = jnp.sum(jnp.where(prod, 0, counts[:prod.shape[0]])) if has_inv else 0  # one non-sensitive bit each
        return jnp.stack([nc, jnp.sum(w, dtype=jnp.int32) - inv, jnp.sum(jnp.where(prod, counts, 0)), widest])

    return jax.lax.map(block, jnp.arange(num_blocks))


@functools.partial(jax.jit, static_argnums=(4, 5, 6, 7))
def _compact_reports(m, key_r, data, n, iid, block_size, num_blocks, num_chunks):
    """``ones[num_blocks * block_size, W]`` of one repetition (masked users: all padding)."""
    d = num_stats(m)

    def block(b):
        ky, xs, w = _schedule.block_inputs(key_r, b, n, data, iid, block_size)
        ones = m.compact().perturb(ky, xs, num_chunks).ones
        return jnp.where(w[:, None], ones, jnp.asarray(d, ones.dtype))

    batch = _reports_device.block_batch(num_blocks, block_size * (num_chunks * _compact.CHUNK + 1))
    ones = _sizing.chunked_map(block, jnp.arange(num_blocks), batch)
    return ones.reshape(num_blocks * block_size, -1)


def _compact_estimates(key, plan, mech, spec, opts, bar):
    """Report-based estimates from compact reports (``CompactBits``), every repetition on the device.

    Block ``b`` of repetition ``r`` draws ``mech.compact().perturb(ky, xs, num_chunks)`` with simulate's block
    inputs, so the reports aggregate to the very stats of simulate's per-user path (``sample_stats`` uses
    ``_compact.sample_counts`` on the same key). ``num_chunks`` (the most any user of any repetition needs) and the
    support lists' sizes come from one first pass of ``sample_sizes`` / ``sample_counts`` over all repetitions (no
    positions kept; one host read). Each block's ones are bit-packed on the device (``_packed.pack_ones``: ``d / 8``
    bytes per report) and the method gets ``PackedReports``, or (few ones) they are support lists in the column
    layout: no report leaves the device, no host loop over repetitions. A call whose reports of one repetition do
    not fit ``sizing().held_report_bytes`` in either form is refused.
    """
    data, n, iid, block_size, num_blocks, reps = (plan.data, plan.n, plan.iid, plan.block_size, plan.num_blocks,
                                                  plan.reps)
    rows = num_blocks * block_size
    items_s = _StaticItems(mech.compact().params[0])
    per = np.asarray(_chunks_all(mech, key, data, jnp.int32(n), iid, block_size, num_blocks, items_s, reps),
                     np.int64)
    nc = max(int(per[..., 0].max()), 1)
    kept, ones = (int(v) for v in per[..., 1:3].sum(axis=1).max(axis=0))  # bounds over repetitions
    sized = _static_sizes(mech, rows, nc, kept, ones, max(int(per[..., 3].max()), 1))
    if sized is None:
        raise ValueError(
            f"simulate's report route for a report-based method would hold one repetition's {rows} reports of "
            f"{type(mech).__name__}(d={mech.d}) on the device, more than sizing().held_report_bytes = "
            f"{_sizing.sizing().held_report_bytes} bytes in either exact form (bit-packed or support lists): reduce "
            "n, or draw the reports with ul.perturb and estimate them with ul.estimate.")
    return _reports_device.packed_estimates(key, plan, mech, spec, opts, _reports_device.Form(*sized), bar)


def _static_sizes(mech, rows, nc, kept, ones, widest):
    """``(num_chunks, packed, sizes)`` of ``packed_estimates`` for ``rows`` reports with ``nc`` chunks per user and
    (support lists) the kept rows, their ones and the widest report bounded as given, bucketed; ``None`` where one
    repetition's reports would pass ``sizing().held_report_bytes`` on the device."""
    widest = min(_support.bucket(widest), nc * _compact.CHUNK + 1)
    nb, _, rows_pad = _reports_device.rows_and_chunk(mech, rows)
    packed = _prefers_packed(mech)  # else the sampler's positions are the support lists (2 bytes per one)
    per_row = nb if packed else widest * np.dtype(_support.index_dtype(mech.d)).itemsize
    if rows_pad * per_row > _sizing.sizing().held_report_bytes:
        return None
    sizes = (0, 0, 0) if packed else (_support.bucket(max(kept, 1)), _support.bucket(max(ones, 1)), widest)
    return nc, packed, sizes


@functools.partial(jax.jit, static_argnums=(4, 5, 6, 7, 8))
def _chunks_all(m, key, data, n, iid, block_size, num_blocks, items_s, reps):
    """``_chunks_needed`` of every repetition: ``int32[reps, num_blocks, 3]`` (one compiled pass, one host read)."""
    return jax.lax.map(
        lambda r: _chunks_needed(m, jax.random.fold_in(key, r), data, n, iid, block_size, num_blocks, items_s),
        jnp.arange(reps))


def _compact_on_host(key, mech, spec, data, n, iid, block_size, num_blocks, reps, opts, items_s, nc):
    """The reports of each repetition as concrete ``CompactBits``, for a method that declares no engine form (the
    documented protocol hands it ``ul.perturb``'s form, so it may be plain Python: one call per repetition; memory
    O(number of ones), never ``n x d``)."""
    d = num_stats(mech)
    n_arr = jnp.int32(n)
    out = []
    for r in range(reps):
        key_r = jax.random.fold_in(key, r)
        ones = np.asarray(_compact_reports(mech, key_r, data, n_arr, iid, block_size, num_blocks, nc))[:n]
        width = max(max((int(np.max(np.sum(ones[i:i + 4096] < d, axis=1), initial=0))
                         for i in range(0, n, 4096)), default=0), 1)
        ys = CompactBits(jax.device_put(ones[:, :width]), d)  # one device copy, no host temporary
        del ones
        if spec.input == "stats":
            out.append(spec.fn(mech, mech.aggregate(ys), n, **opts))
        else:
            out.append(spec.fn(mech, ys, **opts))
        del ys
    return jnp.stack(out)
