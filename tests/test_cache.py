"""The library's guard against vm.max_map_count in long-lived processes (uldp_jax._cache.guard_map_limit)."""

import jax
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import _cache


def _fake_counts(monkeypatch, used, limit=65530):
    monkeypatch.setattr(_cache, "map_counts", lambda: (used, limit))
    cleared = []
    monkeypatch.setattr(jax, "clear_caches", lambda: cleared.append(True))
    monkeypatch.setitem(_cache._MAPS, "warned", False)
    return cleared


def test_frees_compiled_programs_past_half_the_limit(monkeypatch):
    cleared = _fake_counts(monkeypatch, 40_000)
    with pytest.warns(RuntimeWarning, match="vm.max_map_count=65530"):
        assert _cache.guard_map_limit(force=True)
    assert cleared == [True]


def test_leaves_programs_below_the_limit(monkeypatch):
    cleared = _fake_counts(monkeypatch, 1_000)
    assert not _cache.guard_map_limit(force=True)
    assert cleared == []


def test_reads_proc_only_after_a_compilation(monkeypatch):
    _cache.guard_map_limit(force=True)  # registers the listener, syncs the counter
    reads = []
    monkeypatch.setattr(_cache, "map_counts", lambda: reads.append(1) or (10, 65530))
    assert not _cache.guard_map_limit()
    assert reads == []  # nothing compiled since the last check: no /proc read
    jax.jit(lambda x: x * 3 + 1)(np.arange(7.0))  # a fresh program: one backend compile
    _cache.guard_map_limit()
    assert reads == [1]


def test_simulate_runs_the_guard(monkeypatch):
    cleared = _fake_counts(monkeypatch, 50_000)
    monkeypatch.setitem(_cache._MAPS, "checked", -1)
    with pytest.warns(RuntimeWarning, match="memory mappings"):
        ul.simulate(jax.random.key(0), ul.GRR(4, 1.0), p=np.ones(4) / 4, n=100, reps=1, progress=False)
    assert cleared


def test_map_counts_reads_this_process():
    counts = _cache.map_counts()
    if counts is None:  # not Linux: the guard is a no-op there
        return
    used, limit = counts
    assert 0 < used < limit
