"""The sizing policy: every size budget and rounding rule of the package, read through ``sizing()``'s record.

A leaf module (jax only) below estimation and the engine. ``sizing()`` returns a ``Sizing``: the per-device sizes
(per-user chunks, repetition batches, counts-path chunks, EM column chunks, report batches) and the fixed budgets
(report bytes ``perturb`` returns and ``simulate`` holds, EM row chunks, host slices, ...).
Code reads ``sizing().<field>``; tests and users override a field through ``SIZING_OVERRIDE`` (a dict of fields).
Results never depend on the per-device sizes; the fixed budgets that set an order of float accumulations
(``row_chunk_entries``, ``packed_chunk_bytes``) are the same on every backend for that reason.
""" 

from __future__ import annotations

import os
from typing import Any, NamedTuple

import jax

DEFAULT_CHUNK_BYTES = 2**20
DEFAULT_COUNTS_REP_CHUNK = 1024  # repetitions vmapped at once on the counts path (O(d) memory each)
DEFAULT_EM_COL_ENTRIES = 2**16  # gathered entries per column chunk of the EM column pass on CPU
DEFAULT_REPORT_BATCH_ENTRIES = 2**23  # report entries drawn at once by simulate's report path on CPU


def pow2_floor(x: int) -> int:
    return 1 << (max(int(x), 1).bit_length() - 1)


def chunk_for(full: int, n: int | None) -> int:
    """Rows per chunk of an EM pass over ``n`` reports whose budget gives ``full`` rows (a power of two): ``full``,
    or for fewer reports one chunk of the power of two at or above ``n`` (at least 8). A few hundred reports padded
    to a whole chunk of ~10^4-10^5 rows made every EM pass read the padding (the packed and support-list passes
    both use this rule)."""
    return full if n is None else min(full, max(8, 1 << (max(int(n), 1) - 1).bit_length()))


def rep_bucket(x: int) -> int:
    """The bucket rule for repetition counts per call (``rep_ids``): the smallest size ``>= x`` of the form ``2^k`` or
    ``3 * 2^k`` (at most 1.5x, two sizes per octave: few compiled shapes)."""
    x = max(int(x), 1)
    p = 1 << (x - 1).bit_length()  # next power of two
    return 3 * p // 4 if p >= 4 and 3 * p // 4 >= x else p


def report_bucket(k: int) -> int:
    """The bucket rule for report counts and widths of the report-based EM solvers: the smallest size ``>= k`` of
    the form ``m 2^j`` with ``m`` in 4..7 (at most 25% padding)."""
    if k <= 8:
        return max(int(k), 1)
    j = max(int(k).bit_length() - 3, 0)
    return -(-int(k) // 2**j) * 2**j


def chunked_map(fn: Any, xs: Any, batch: int | None) -> Any:
    """``jax.lax.map(fn, xs, batch_size=batch)``, but a plain ``scan`` where ``batch <= 1``.

    ``lax.map`` with any ``batch_size`` (1 included) runs ``vmap(fn)`` inside the scan. A batched EM pass over
    support lists (gathers and scatters with a batch axis) compiled to a much slower program on XLA CPU
    (experiments/benchmarks/README.md (k)).
    """
    return jax.lax.map(fn, xs, batch_size=batch if batch is not None and batch > 1 else None)


class Sizing(NamedTuple):
    """The sizing policy's answer: per-user chunk budget and repetitions vmapped at once (results never depend on it).

    Attributes:
      chunk_bytes: estimated bytes of per-chunk intermediates on the per-user path.
      rep_batch: repetitions vmapped together on the per-user path.
      counts_rep_chunk: repetitions vmapped together on the counts path.
      em_col_entries: gathered entries per column chunk of the EM column pass (``estimation/_em_passes.py``).
      report_batch_entries: report entries (users x report width) drawn at once by ``simulate``'s report path
        (``engine/_reports_device.py``).
      The remaining fields are fixed budgets, commented where they are declared.
    """

    chunk_bytes: int
    rep_batch: int
    counts_rep_chunk: int
    em_col_entries: int = 2**16
    report_batch_entries: int = 2**23
    # Fixed budgets (the same on every device): refusals, EM chunks, host slices.
    perturb_report_bytes: int = 2**29  # largest reports ``ul.perturb`` returns in one call (before intermediates)
    held_report_bytes: int = 2**31  # report bytes ``simulate``'s report path holds per repetition batch
    vector_bytes: int = 2**30  # largest float64[d] vector simulate keeps (target, estimates): refused above
    counts_memory_bytes: int = 2**30  # the counts path's temporaries per call: repetition chunks are cut to fit
    counts_bytes_per_draw: int = 32  # float64 temporaries per draw of a count sampler (multinomial splitting)
    binomial_words: int = 8  # one exact binomial in random words: 4 words + its BTRS/inversion arithmetic
    rep_len_floor: int = 64  # per-user rep_ids length floor (padding reps cost nothing there; ``_plan.rep_length``)
    likelihood_cells: int = 2**26  # n x d cells of a dense per-report likelihood EM reads every iteration, at most
    row_chunk_entries: int = 2**20  # entries of the EM row passes' per-chunk temporaries (fixed: sets the sum order)
    packed_chunk_bytes: int = 2**18  # report bytes per chunk of the packed EM passes (fixed: sets the sum order)
    block_rows: int = 65535  # rows per block of support lists: uint16 local row indices, plus the zero slot
    column_segment: int = 256  # entries per column segment of the column layout
    column_chunk: int = 256  # column segments per step of the column layout's second pass
    auto_columns_entries: int = 2**22  # layout="auto" builds the column layout from this many padded entries on
    host_rows: int = 4096  # rows per slice of host-side packing loops (bounds their int64 temporaries)
    dot_min_bytes: int = 8  # packed rows of at least this many bytes are unpacked and read by products (README (k))
    # The working memory of one ``ul.aggregate`` / ``ul.estimate`` / EM call (``uldp_jax/_memory.py``), sized from
    # static shapes and refused above ``call_memory_bytes`` before anything is allocated. The counts below are
    # upper bounds of what the calls hold at once, beyond their inputs.
    call_memory_bytes: int = 2**31  # per call; ``sizing`` sets it from the machine's or device's memory
    stat_vectors: int = 8  # float[num_stats] vectors an estimate from statistics holds (debias, threshold, ...)
    em_vectors: int = 16  # float[d] vectors of an EM / SQUAREM pass (iterates, extrapolation, channel products)
    dense_em_entry_bytes: int = 8  # bytes per dense report bit EM's checks, packing and passes hold


def physical_memory_bytes() -> int:
    """The machine's physical memory (0 where the OS does not say)."""
    try:
        return int(os.sysconf("SC_PHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, OSError, ValueError):  # not POSIX, or the name is unknown
        return 0


SIZING_OVERRIDE: dict = {}  # e.g. {"chunk_bytes": 2**24}: fields of ``Sizing`` that replace the policy's values


def sizing(device: Any = None) -> Sizing:
    """The default sizes for ``device`` (default: the first visible device), overridden by ``SIZING_OVERRIDE``.

    CPU: ~1 MiB chunks (they stay in L2; larger chunks ran slower, experiments/benchmarks/README.md (k)) and
    sequential repetitions. GPU/TPU: 1/64 of the device memory (``device.memory_stats()["bytes_limit"]``, 16 GiB
    assumed when unknown) per chunk, up to 2**30 bytes, i.e. tens of millions of elements a step, and 8
    repetitions vmapped while that fits in 1/8 of the memory. Results are bit-identical for every choice
    (threefry keys; chunks and repetitions are exact int32 sums of ``fold_in``-keyed blocks). The EM column
    pass gathers ``em_col_entries`` entries per chunk: 2**16 on CPU (cache-sized, as before), 1/1024 of the
    per-user chunk bytes elsewhere; it only splits a map, so EM results are bit-identical across it.
    ``simulate``'s report path draws ``report_batch_entries`` report entries at once: 2**23 on CPU (its int32
    temporaries were most of the peak memory of bench_em's RAPPOR simulate; no slower), 2**25
    elsewhere; its blocks are keyed by their index, so the reports are bit-identical across it. The EM row
    chunk (``row_chunk_entries``, 2**20 entries) stays fixed on every backend: it sets the order
    of the float accumulations across chunks, and a different order moves EM estimates in float32 passes (tests/estimation/test_em_sizing.py), i.e. results would depend on the
    device. ``call_memory_bytes`` (the working memory one ``ul.aggregate`` / ``ul.estimate`` / EM call may need,
    refused above it before anything is allocated) is, on CPU, half the machine's physical memory and at least
    2 GiB (GRR's "emp" up to d = 2**24 fits; a Colab CPU runtime's 12 GiB gives 6 GiB), and 1/4 of the device
    memory elsewhere; raise it through ``SIZING_OVERRIDE["call_memory_bytes"]``.
    """
    device = jax.devices()[0] if device is None else device
    if device.platform == "cpu":
        out = Sizing(DEFAULT_CHUNK_BYTES, 1, DEFAULT_COUNTS_REP_CHUNK, DEFAULT_EM_COL_ENTRIES,
                     DEFAULT_REPORT_BATCH_ENTRIES, call_memory_bytes=max(2**31, physical_memory_bytes() // 2))
    else:
        try:
            limit = int((device.memory_stats() or {}).get("bytes_limit", 0))
        except Exception:  # noqa: BLE001 - memory_stats is optional on some backends
            limit = 0
        limit = limit or 16 * 2**30
        chunk = int(min(2**30, max(2**24, pow2_floor(limit // 64))))
        rep_batch = int(max(1, min(8, limit // 8 // chunk)))
        em_col = chunk // 1024  # gathered entries per column chunk: 2**14 .. 2**20 (1/65536 of the memory)
        out = Sizing(chunk, rep_batch, 8 * DEFAULT_COUNTS_REP_CHUNK, em_col, 4 * DEFAULT_REPORT_BATCH_ENTRIES,
                     call_memory_bytes=limit // 4)
    return out._replace(**SIZING_OVERRIDE)
