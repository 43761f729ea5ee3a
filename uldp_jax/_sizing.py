"""The sizing policy: chunk, repetition-batch and EM-pass sizes per device (results never depend on them).

A leaf module (jax only) below estimation and the engine: the engine (``uldp_jax.engine``) sizes its per-user
chunks, repetition batches and counts-path chunks from ``sizing()``, and the EM passes
(``estimation/_em_passes.py``) size their column chunks from it.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax

DEFAULT_CHUNK_BYTES = 2**20
DEFAULT_COUNTS_REP_CHUNK = 1024  # repetitions vmapped at once on the counts path (O(d) memory each)
DEFAULT_EM_COL_ENTRIES = 2**16  # gathered entries per column chunk of the EM column pass on CPU
DEFAULT_REPORT_BATCH_ENTRIES = 2**23  # report entries drawn at once by simulate's report path on CPU


def pow2_floor(x: int) -> int:
    return 1 << (max(int(x), 1).bit_length() - 1)


def chunked_map(fn: Any, xs: Any, batch: int | None) -> Any:
    """``jax.lax.map(fn, xs, batch_size=batch)``, but a plain ``scan`` where ``batch <= 1``.

    ``lax.map`` with any ``batch_size`` (1 included) runs ``vmap(fn)`` inside the scan. A batched EM pass over
    support lists (gathers and scatters with a batch axis) compiled to a program 9x slower on XLA CPU: one
    001 census repetition of RAPPOR at eps = ln d took 152 s under ``batch_size=1`` and 17 s unbatched.
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
        (``simulate/_reports_device.py``).
    """

    chunk_bytes: int
    rep_batch: int
    counts_rep_chunk: int
    em_col_entries: int = 2**16
    report_batch_entries: int = 2**23


SIZING_OVERRIDE: dict = {}  # e.g. {"chunk_bytes": 2**24}: fields of ``Sizing`` that replace the policy's values


def sizing(device: Any = None) -> Sizing:
    """The default sizes for ``device`` (default: the first visible device), overridden by ``SIZING_OVERRIDE``.

    CPU: ~1 MiB chunks (they stay in L2; 128 MiB ran GRR 1.5-2x and OUE/OLH/SS 2-5x slower at d = 625) and
    sequential repetitions. GPU/TPU: 1/64 of the device memory (``device.memory_stats()["bytes_limit"]``, 16 GiB
    assumed when unknown) per chunk, up to 2**30 bytes, i.e. tens of millions of elements a step, and 8
    repetitions vmapped while that fits in 1/8 of the memory. Results are bit-identical for every choice
    (threefry keys; chunks and repetitions are exact int32 sums of ``fold_in``-keyed blocks). The EM column
    pass gathers ``em_col_entries`` entries per chunk: 2**16 on CPU (cache-sized, as before), 1/1024 of the
    per-user chunk bytes elsewhere; it only splits a map, so EM results are bit-identical across it.
    ``simulate``'s report path draws ``report_batch_entries`` report entries at once: 2**23 on CPU (its int32
    temporaries, ~0.6 GB at 2**25, were most of the peak memory of bench_em's RAPPOR simulate; no slower), 2**25
    elsewhere; its blocks are keyed by their index, so the reports are bit-identical across it. The EM row
    chunk (``estimation._support.CHUNK_ENTRIES``, 2**20 entries) stays fixed on every backend: it sets the order
    of the float accumulations across chunks, and a different order moved EM estimates by up to 6e-5 (RAPPOR,
    d = 40, n = 6000, float32 passes; tests/estimation/test_em_sizing.py), i.e. results would depend on the
    device.
    """
    device = jax.devices()[0] if device is None else device
    if device.platform == "cpu":
        out = Sizing(DEFAULT_CHUNK_BYTES, 1, DEFAULT_COUNTS_REP_CHUNK, DEFAULT_EM_COL_ENTRIES,
                     DEFAULT_REPORT_BATCH_ENTRIES)
    else:
        try:
            limit = int((device.memory_stats() or {}).get("bytes_limit", 0))
        except Exception:  # noqa: BLE001 - memory_stats is optional on some backends
            limit = 0
        limit = limit or 16 * 2**30
        chunk = int(min(2**30, max(2**24, pow2_floor(limit // 64))))
        rep_batch = int(max(1, min(8, limit // 8 // chunk)))
        em_col = chunk // 1024  # gathered entries per column chunk: 2**14 .. 2**20 (1/65536 of the memory)
        out = Sizing(chunk, rep_batch, 8 * DEFAULT_COUNTS_REP_CHUNK, em_col, 4 * DEFAULT_REPORT_BATCH_ENTRIES)
    return out._replace(**SIZING_OVERRIDE)
