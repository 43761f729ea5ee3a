"""``uldp_jax/experiments/_glutf_text.py``: 003's in-text values (§6's p and z*) and Table 1's MSE orders, computed
with the library. Deterministic (no sampling)."""

import pytest

from uldp_jax.experiments import _datasets, _glutf_text


def test_section6_values_match_003_text():
    """003 §6: uRAP p = .562/.924 and uUE p = .500/.518 on Census at eps = 0.5/5; on Normal at eps = 0.5 z* of
    uSS = .197 (003: .20), uUE = .0028, published-z uLH = .18 (the corrected uLH's z* equals uUE's)."""
    rows, notes = _glutf_text.section6_values(_datasets.resolve(["census1200", "normal"], None, None))
    got = {(r["mechanism"], r["quantity"], r["eps"]): r["value"] for r in rows}
    assert got[("uRAP", "p", 0.5)] == pytest.approx(0.562, abs=5e-4)
    assert got[("uRAP", "p", 5.0)] == pytest.approx(0.924, abs=5e-4)
    assert got[("uUE", "p", 0.5)] == pytest.approx(0.500, abs=5e-4)
    assert got[("uUE", "p", 5.0)] == pytest.approx(0.518, abs=1e-3)
    assert got[("uSS", "z*", 0.5)] == pytest.approx(0.197, abs=1e-3)
    assert got[("uUE", "z*", 0.5)] == pytest.approx(0.0028, abs=1e-4)
    assert got[("uLH (published z)", "z*", 0.5)] == pytest.approx(0.18, abs=0.005)
    assert got[("uLH", "z*", 0.5)] == pytest.approx(got[("uUE", "z*", 0.5)], rel=1e-4)  # float32 leaves
    assert len(notes) == 1 and "0.5622" in notes[0]


def test_table1_orders_from_the_library():
    """003 Table 1: n MSE ~ s^2 for uRR and ~ s for the others at small eps (slope of log n MSE in log s)."""
    rows, _ = _glutf_text.table1_orders(512, [16, 32, 64], [0.3], [2.0])
    slope = {(r["mechanism"], r["regime"]): r["slope_in_s"] for r in rows}
    assert slope[("uRR", "high")] == pytest.approx(2.0, abs=0.1)
    for m in ("uRAP", "uSS", "uUE", "uLH"):
        assert slope[(m, "high")] == pytest.approx(1.0, abs=0.1)
        assert slope[(m, "medium")] == pytest.approx(1.0, abs=0.15)
    assert all(r["ratio_max"] / r["ratio_min"] < 2.5 for r in rows)  # bounded ratio to the stated order
