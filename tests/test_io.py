"""ul.save_result / ul.load_result: a SimResult round-trips through one .npz (no pickle) with its metadata."""

import json

import jax
import numpy as np
import pytest

import uldp_jax as ul


def test_round_trip_keeps_values_dtypes_and_metadata(tmp_path):
    mech = ul.URR(6, [0, 2], 1.0)
    res = ul.simulate(jax.random.key(0), mech, p=np.ones(6) / 6, n=500, reps=3, methods=("emp", "emp+thr"))
    path = ul.save_result(tmp_path / "run", res, metadata={"mechanism": repr(mech), "eps": 1.0})
    assert path.endswith("run.npz")
    back, meta = ul.load_result(path)
    assert meta == {"mechanism": repr(mech), "eps": 1.0}
    assert list(back.estimates) == ["emp", "emp+thr"] and back.n == res.n == 500
    for m in res.estimates:
        np.testing.assert_array_equal(back.estimates[m], np.asarray(res.estimates[m]))
        assert back.estimates[m].dtype == np.asarray(res.estimates[m]).dtype
    np.testing.assert_array_equal(back.stats, np.asarray(res.stats))
    np.testing.assert_array_equal(back.target, res.target)
    with np.load(path) as z:  # plain numpy, allow_pickle=False by default
        assert json.loads(str(z["__meta__"]))["methods"] == ["emp", "emp+thr"]


def test_batched_grid_round_trips(tmp_path):
    grid = jax.vmap(lambda e: ul.GRR(5, e))(np.array([0.5, 2.0]))
    res = ul.simulate(jax.random.key(1), grid, p=np.ones(5) / 5, n=300, reps=2)
    back, meta = ul.load_result(ul.save_result(tmp_path / "grid.npz", res))
    assert meta == {} and back.estimates["emp"].shape == (2, 2, 5)
    np.testing.assert_array_equal(back.estimates["emp"], np.asarray(res.estimates["emp"]))


def test_bad_input(tmp_path):
    res = ul.simulate(jax.random.key(0), ul.GRR(3, 1.0), p=np.ones(3) / 3, n=100, reps=1)
    with pytest.raises(TypeError, match="result"):
        ul.save_result(tmp_path / "x", {"emp": 1})
    with pytest.raises(TypeError, match="metadata"):
        ul.save_result(tmp_path / "x", res, metadata=[1])
    with pytest.raises(TypeError, match="JSON"):
        ul.save_result(tmp_path / "x", res, metadata={"f": object()})
    np.savez(tmp_path / "other.npz", a=np.zeros(2))
    with pytest.raises(ValueError, match="save_result"):
        ul.load_result(tmp_path / "other.npz")
