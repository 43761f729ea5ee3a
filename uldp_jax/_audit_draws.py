"""Drawing the reports ``ul.audit_sampler`` counts: batched on the device for mechanisms and JAX functions, in a host
loop for plain Python callables; memory bounded by the batch, whatever the number of trials.

Two count forms, one per way of choosing events (``privacy._empirical_eps``):

* ``outputs``: ``int64[I, m]``, reports of each tested input in each of ``m`` report columns (item reports as is,
  bit vectors of at most ``MAX_BITS`` bits as ``sum_j bit_j 2^j``, other reports by a dictionary built as they come);
* ``support``: for reports too many to enumerate (long bit vectors, hashed reports, subsets), whether each report
  supports each item ``j`` (``s_j``): ``S1[i, j]`` reports of input ``i`` supporting both ``i`` and ``j``,
  ``S0[i, j]`` supporting ``j`` but not ``i``, ``N1[i]`` supporting ``i``; enough for the four cells of
  ``(s_x, s_x')`` of every pair. Under a ULDP claim only protected reports count there (their number ``P[i]``;
  the others make a fifth cell no event may use), and ``R[i, j]`` counts the invertible reports of input ``i``
  that reveal input ``j`` (column ``d``: an invertible report whose input the predicate does not name), which
  ``privacy._empirical_eps.revealed_violations`` checks.

Keys: sample ``s`` (0: selection, 1: fresh) draws batch ``j`` with ``fold_in(fold_in(key, s), j)``, so the reports
do not depend on how batches are grouped into device calls.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax.mechanisms.core import CompactBits, counts_of, supported_items, to_dense

MAX_BITS = 16  # bit vectors up to this length can be enumerated (2^16 report columns; events="outputs")
AUTO_BITS = 8  # events="auto" enumerates bit vectors up to this length; longer ones use support events, whose
# "supports x, not x'" cell is the exact worst case of UE, SS and LH (likelihood-ratio sets over 2^16 sparse columns
# are chosen from too few reports per column)
MAX_CELLS = 2**16  # report columns counted per input in the outputs form
BATCH_REPORTS = 2**20  # reports per sampler call (all tested inputs together): bounds the device memory
CALL_REPORTS = 2**23  # reports per device call (one progress update)
HOST_BATCH = 2**16  # reports per host loop chunk (Python callables)


UNNAMED = -2  # revealed "input" of an invertible report whose input a bool predicate does not name


class Counts(NamedTuple):
    """Counts of one sample (see the module docstring); ``table`` is ``int64[I, m]`` (outputs) or
    ``(S1 int64[I, D], S0 int64[I, D], N1 int64[I], P int64[I], R int64[I, d + 1])`` (support); ``n``: reports
    per input."""

    table: Any
    n: int


def add(a: Counts | None, b: Counts) -> Counts:
    """Cumulative counts (outputs tables of different widths are padded: a Python callable's space grows)."""
    if a is None:
        return b
    if isinstance(a.table, tuple):
        return Counts(tuple(u + v for u, v in zip(a.table, b.table)), a.n + b.n)
    m = max(a.table.shape[1], b.table.shape[1])
    pad = lambda t: np.pad(t, ((0, 0), (0, m - t.shape[1])))  # noqa: E731
    return Counts(pad(a.table) + pad(b.table), a.n + b.n)


# ---- device: mechanisms and JAX functions ------------------------------------------------------------------------
def _packed(bits: jax.Array) -> jax.Array:
    bits = bits.astype(jnp.int32)
    return (bits << jnp.arange(bits.shape[-1], dtype=jnp.int32)).sum(axis=-1)


def revealed_of(r: jax.Array) -> jax.Array:
    """A predicate's answer as revealed inputs: ``bool`` (protected or not) -> ``-1`` / ``UNNAMED``; ints as is."""
    r = jnp.asarray(r)
    return jnp.where(r, -1, UNNAMED).astype(jnp.int32) if r.dtype == jnp.bool_ else r.astype(jnp.int32)


@functools.partial(jax.jit, static_argnames=("draw", "sampler", "mode", "m", "b_sub", "inner", "d"))
def _device_counts(params: Any, key: jax.Array, inputs: jax.Array, start: jax.Array, remaining: jax.Array, *,
                   draw: Callable, sampler: Any, mode: str, m: int, b_sub: int, inner: int, d: int) -> Any:
    """Counts of ``inner`` batches of ``b_sub`` reports per input (batch ``j`` keyed ``fold_in(key, start + j)``;
    reports past ``remaining`` per input are drawn and not counted, so one compiled shape serves every call)."""
    I = inputs.shape[0]
    xs = jnp.repeat(inputs, b_sub)
    rows = jnp.repeat(jnp.arange(I, dtype=jnp.int32), b_sub)

    def body(acc, j):
        out = draw(params, sampler, jax.random.fold_in(key, start + j), xs)
        valid = jnp.tile(j * b_sub + jnp.arange(b_sub) < remaining, I)
        if mode == "outputs":
            cells = out.astype(jnp.int32)
            inside = (cells >= 0) & (cells < m)
            idx = rows * m + jnp.clip(cells, 0, m - 1)
            table, bad = acc
            return (table.at[idx].add((valid & inside).astype(jnp.int32)), bad + jnp.sum(valid & ~inside)), None
        s, revealed = out  # bool[I * b_sub, D], int32[I * b_sub] (-1: protected)
        prot = (revealed == -1) & valid
        s = s.astype(bool) & prot[:, None]  # only protected reports make events
        own = s[jnp.arange(xs.shape[0]), xs]
        other = ~own & prot
        s = s.reshape(I, b_sub, -1)
        S1, S0, N1, P, R = acc
        cell = rows * (d + 1) + jnp.where((revealed >= 0) & (revealed < d), revealed, d)
        return (S1 + jnp.sum(own.reshape(I, b_sub, 1) & s, axis=1, dtype=jnp.int32),
                S0 + jnp.sum(other.reshape(I, b_sub, 1) & s, axis=1, dtype=jnp.int32),
                N1 + jnp.sum(own.reshape(I, b_sub), axis=1, dtype=jnp.int32),
                P + jnp.sum(prot.reshape(I, b_sub), axis=1, dtype=jnp.int32),
                R + jnp.zeros(I * (d + 1), jnp.int32).at[cell].add((valid & ~prot).astype(jnp.int32)).reshape(
                    I, d + 1)), None

    if mode == "outputs":
        init = (jnp.zeros(I * m, jnp.int32), jnp.int32(0))
    else:
        D = jax.eval_shape(lambda k: draw(params, sampler, k, xs), key)[0].shape[-1]
        init = (jnp.zeros((I, D), jnp.int32), jnp.zeros((I, D), jnp.int32), jnp.zeros(I, jnp.int32),
                jnp.zeros(I, jnp.int32), jnp.zeros((I, d + 1), jnp.int32))
    acc, _ = jax.lax.scan(body, init, jnp.arange(inner))
    return acc


def device_draws(params: Any, draw: Callable, sampler: Any, mode: str, m: int, width: int, key: jax.Array,
                 inputs: np.ndarray, trials: int, d: int = 0) -> Iterator[Counts]:
    """Yields the counts of successive device calls (``trials`` reports per input in all).

    Args:
      params: the mechanism (a pytree argument: its leaves are traced, so a new eps does not recompile) or None.
      draw: static ``(params, sampler, key, xs) -> cells int32[n]`` (outputs) or ``(bool[n, D], revealed
        int32[n])`` (support: the items each report supports, and ``-1`` for a protected report, else the input an
        invertible one reveals, ``UNNAMED`` where unknown).
      sampler: static (hashable) user function, or None.
      mode: ``"outputs"`` or ``"support"``.
      m: report columns (outputs mode).
      width: values per report held at once (1 for cells, ``D`` for support vectors): sizes the batches.
      key: the sample's key.
      inputs: ``int[I]`` tested inputs.
      trials: reports per input.
      d: number of inputs (support mode: the revealed-input counts' width).

    Raises:
      ValueError: a report outside ``[0, m)`` (outputs mode).
    """
    I = len(inputs)
    # batch sizes rounded up to powers of two: a few compiled shapes serve every number of trials
    b_sub = int(max(1, min(_pow2(trials), _pow2(BATCH_REPORTS // (I * max(width, 1))) // 2 or 1)))
    inner = int(max(1, min(_pow2(-(-trials // b_sub)), CALL_REPORTS // (I * b_sub * max(width, 1)) or 1)))
    per_call = b_sub * inner
    xs = jnp.asarray(inputs, jnp.int32)
    for c in range(-(-trials // per_call)):
        remaining = min(per_call, trials - c * per_call)
        acc = _device_counts(params, key, xs, jnp.int32(c * inner), jnp.int32(remaining), draw=draw,
                             sampler=sampler, mode=mode, m=m, b_sub=b_sub, inner=inner, d=int(d))
        if mode == "outputs":
            table, bad = acc
            if int(bad):
                raise ValueError(f"the sampler returned {int(bad)} reports outside its report space [0, {m}) "
                                 "(pass num_outputs= for item reports of a wider space).")
            yield Counts(np.asarray(table, np.int64).reshape(I, m), remaining)
        else:
            yield Counts(tuple(np.asarray(a, np.int64) for a in acc), remaining)


COUNT_CHUNK = 2**22  # reports per input per count-sampler draw (float32 carries such counts exactly)
COUNT_CALL_CHUNKS = 8  # count-sampler draws per device call


@functools.partial(jax.jit, static_argnames=("inner",))
def _count_sampler_counts(mech: Any, key: jax.Array, inputs: jax.Array, start: jax.Array, remaining: jax.Array, *,
                          inner: int) -> jax.Array:
    """``int32[I, m]``: ``inner`` draws of the mechanism's exact count sampler (``counts().fixed``) for
    ``COUNT_CHUNK`` users holding each input (the last ones cut to ``remaining`` users in all)."""
    fixed = counts_of(mech).fixed
    d = mech.d

    def body(acc, j):
        n = jnp.clip(remaining - j * COUNT_CHUNK, 0, COUNT_CHUNK).astype(jnp.float32)
        k = jax.random.fold_in(key, start + j)
        rows = jax.vmap(lambda kk, x: fixed(kk, n * jax.nn.one_hot(x, d, dtype=jnp.float32)))(
            jax.random.split(k, inputs.shape[0]), inputs)
        return acc + jnp.round(rows).astype(jnp.int32), None

    m = jax.eval_shape(lambda: fixed(key, jnp.zeros(d, jnp.float32))).shape[-1]
    acc, _ = jax.lax.scan(body, jnp.zeros((inputs.shape[0], m), jnp.int32), jnp.arange(inner))
    return acc


def count_sampler_draws(mech: Any, key: jax.Array, inputs: np.ndarray, trials: int) -> Iterator[Counts]:
    """Yields ``outputs`` counts drawn by the mechanism's exact count sampler (``path="counts"``: the sampler
    ``ul.simulate``'s counts path uses), ``CALL_REPORTS`` reports per input per device call at most."""
    inner = COUNT_CALL_CHUNKS  # one compiled shape for every number of trials: an empty chunk costs O(d)
    per_call = inner * COUNT_CHUNK
    xs = jnp.asarray(inputs, jnp.int32)
    for c in range(-(-trials // per_call)):
        remaining = min(per_call, trials - c * per_call)
        table = _count_sampler_counts(mech, key, xs, jnp.int32(c * inner), jnp.int32(remaining), inner=inner)
        yield Counts(np.asarray(table, np.int64), remaining)


def _pow2(n: int) -> int:
    return 1 << max(int(n) - 1, 0).bit_length()


def mechanism_cells(mech: Any, sampler: Any, key: jax.Array, xs: jax.Array) -> jax.Array:
    """A mechanism's reports as report columns: items as is, bit vectors packed."""
    ys = mech.perturb_batch(key, xs)
    return ys if mech.report_kind == "item" else _packed(_dense(ys))


def mechanism_support(mech: Any, predicate: Any, key: jax.Array, xs: jax.Array) -> tuple[jax.Array, jax.Array]:
    """``(bool[n, D], int32[n])``: the items each report supports (``supported_items``) and the input each report
    reveals (``predicate``, static: ``None``, no invertible reports, ``-1`` everywhere; ``"mechanism"``, its
    ``revealed_inputs``; or the user's ``protected=`` callable)."""
    ys = mech.perturb_batch(key, xs)
    if predicate is None:
        revealed = jnp.full(xs.shape, -1, jnp.int32)
    elif isinstance(predicate, str):
        revealed = mech.revealed_inputs(ys)
    else:
        revealed = predicate(ys)
    return supported_items(mech, ys), revealed_of(revealed)


def function_cells(params: Any, fn: Callable, key: jax.Array, xs: jax.Array) -> jax.Array:
    """A JAX function's reports as report columns (int items as is, bit vectors ``[n, k]`` packed)."""
    ys = jnp.asarray(fn(key, xs))
    return ys if ys.ndim == 1 else _packed(ys)


def function_support(params: Any, fns: tuple[Callable, Callable | None], key: jax.Array,
                     xs: jax.Array) -> tuple[jax.Array, jax.Array]:
    """A JAX function's bit-vector reports ``[n, D]`` as support vectors, with the user's protected predicate's
    answer (``fns = (fn, protected)``; ``protected=None``: every report is protected)."""
    fn, protected = fns
    ys = jnp.asarray(fn(key, xs))
    revealed = jnp.full(xs.shape, -1, jnp.int32) if protected is None else revealed_of(protected(ys))
    return ys.astype(bool), revealed


def _dense(ys: Any) -> jax.Array:
    """Dense bits of a bit-vector report batch (a ``CompactBits`` batch is expanded)."""
    return to_dense(ys) if isinstance(ys, CompactBits) else jnp.asarray(ys)
