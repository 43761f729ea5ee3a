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


# Issue 53 item 2: result files that cannot lose data.

@pytest.fixture(scope="module")
def small():
    return ul.simulate(jax.random.key(3), ul.GRR(4, 1.0), p=np.full(4, 0.25), n=200, reps=2, methods=("emp", "emp+thr"))


def _assert_same(a, b):
    assert list(a.estimates) == list(b.estimates) and a.n == b.n
    for m in a.estimates:
        np.testing.assert_array_equal(np.asarray(a.estimates[m]), np.asarray(b.estimates[m]))
    np.testing.assert_array_equal(np.asarray(a.stats), np.asarray(b.stats))
    np.testing.assert_array_equal(np.asarray(a.target), np.asarray(b.target))


def test_names_are_taken_literally(small, tmp_path):
    other = small._replace(n=999)
    p1 = ul.save_result(tmp_path / "run_eps0.5", small)
    p2 = ul.save_result(tmp_path / "run_eps0.1", other)
    assert p1.endswith("run_eps0.5.npz") and p2.endswith("run_eps0.1.npz")
    assert ul.load_result(p1)[0].n == 200 and ul.load_result(p2)[0].n == 999


def test_no_silent_overwrite(small, tmp_path):
    path = ul.save_result(tmp_path / "run", small, metadata={"v": 1})
    before = open(path, "rb").read()
    with pytest.raises(FileExistsError, match="overwrite=True"):
        ul.save_result(tmp_path / "run", small, metadata={"v": 2})
    assert open(path, "rb").read() == before
    ul.save_result(tmp_path / "run.npz", small, metadata={"v": 2}, overwrite=True)
    assert ul.load_result(path)[1] == {"v": 2}
    with pytest.raises(TypeError, match="overwrite"):
        ul.save_result(tmp_path / "run", small, overwrite="yes")


def test_save_onto_a_directory_is_refused(small, tmp_path):
    (tmp_path / "out").mkdir()
    with pytest.raises(IsADirectoryError, match="directory"):
        ul.save_result(tmp_path / "out", small)
    with pytest.raises(IsADirectoryError, match="directory"):
        ul.save_result(str(tmp_path / "new") + "/", small)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_an_interrupted_save_leaves_the_old_file_and_no_temporary(small, tmp_path, monkeypatch):
    path = ul.save_result(tmp_path / "run", small, metadata={"v": 1})

    def broken(f, **arrays):
        f.write(b"PK\x03\x04 half a zip")
        raise OSError("disk full")

    monkeypatch.setattr(np, "savez_compressed", broken)
    with pytest.raises(OSError, match="disk full"):
        ul.save_result(tmp_path / "run", small, metadata={"v": 2}, overwrite=True)
    with pytest.raises(OSError, match="disk full"):
        ul.save_result(tmp_path / "fresh", small)
    monkeypatch.undo()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.npz"]
    assert ul.load_result(path)[1] == {"v": 1}


def test_metadata_types_round_trip_exactly(small, tmp_path):
    meta = {"eps": {1: 0.5, 2: 1.0}, "shape": (3, 4), "theta": float("nan"), "big": float("inf"), "ok": True,
            "none": None, "nested": [{"a": (1, [2.5, "x"])}, {(0, 1): "pair"}], "__tuple__": "a user key",
            "count": np.int64(7), "scale": np.float32(0.5)}
    back, got = ul.load_result(ul.save_result(tmp_path / "m", small, metadata=meta))
    _assert_same(small, back)
    assert list(got) == list(meta)
    assert got["eps"] == {1: 0.5, 2: 1.0} and all(type(k) is int for k in got["eps"])
    assert got["shape"] == (3, 4) and type(got["shape"]) is tuple
    assert np.isnan(got["theta"]) and got["big"] == float("inf") and got["ok"] is True and got["none"] is None
    assert got["nested"] == [{"a": (1, [2.5, "x"])}, {(0, 1): "pair"}] and got["__tuple__"] == "a user key"
    assert got["count"] == 7 and type(got["count"]) is int and got["scale"] == 0.5
    with pytest.raises(TypeError, match=r"metadata\['f'\]\[1\]"):
        ul.save_result(tmp_path / "x", small, metadata={"f": [1, object()]})


def _write(path, **arrays):
    with open(path, "wb") as f:
        np.savez(f, **arrays)
    return path


def _meta(**kw):
    doc = {"format": "uldp_jax.SimResult/2", "methods": ["emp"], "n": 10, "metadata": {}}
    doc.update(kw)
    return np.array(json.dumps({k: v for k, v in doc.items() if v is not None}))


GOOD = dict(estimates_0=np.zeros((2, 4), np.float32), stats=np.zeros((2, 4), np.int32), target=np.full(4, 0.25))


@pytest.mark.parametrize("arrays, field", [
    (dict(GOOD, __meta__=_meta(methods=None)), "methods"),
    (dict(GOOD, __meta__=_meta(n=None)), "'n'"),
    (dict(GOOD, __meta__=_meta(n="10")), "'n'"),
    (dict(GOOD, __meta__=_meta(metadata=None)), "metadata"),
    (dict(GOOD, __meta__=_meta(format="other/1")), "format"),
    (dict(GOOD, __meta__=np.array("{not json")), "__meta__"),
    (dict(GOOD, __meta__=np.array([1, 2])), "__meta__"),
    (dict(GOOD, estimates_1=np.zeros((2, 4), np.float32), __meta__=_meta()), "estimates_1"),
    (dict(GOOD, __meta__=_meta(methods=["emp", "emp+thr"])), "estimates_1"),
    (dict(GOOD, target=np.full(5, 0.2), __meta__=_meta()), "target"),
    (dict(GOOD, stats=np.zeros((3, 4), np.int32), __meta__=_meta()), "stats"),
    (dict(GOOD, estimates_0=np.array(["a", "b"]), __meta__=_meta()), "estimates_0"),
    (dict(GOOD, __meta__=_meta(metadata={"__tuple__": 5})), "metadata"),
])
def test_load_names_the_file_and_the_field(tmp_path, arrays, field):
    path = _write(tmp_path / "bad.npz", **arrays)
    with pytest.raises(ValueError, match="bad.npz") as e:
        ul.load_result(path)
    assert field in str(e.value) and not isinstance(e.value, json.JSONDecodeError)


def test_load_of_broken_files_names_the_file(small, tmp_path):
    path = ul.save_result(tmp_path / "run", small)
    data = open(path, "rb").read()
    cases = {"truncated.npz": data[: len(data) // 2], "text.npz": b"hello", "empty.npz": b"",
             "flipped.npz": data[:200] + bytes(b ^ 0xFF for b in data[200:400]) + data[400:]}
    for name, blob in cases.items():
        (tmp_path / name).write_bytes(blob)
        with pytest.raises(ValueError, match=name) as e:
            ul.load_result(tmp_path / name)
        assert type(e.value).__name__ == "FileFormatError", (name, e.value)
    np.save(tmp_path / "single.npy", np.zeros(3))
    with pytest.raises(ValueError, match="single.npy"):
        ul.load_result(tmp_path / "single.npy")
    with pytest.raises(FileNotFoundError, match="missing.npz"):
        ul.load_result(tmp_path / "missing.npz")
    with pytest.raises(IsADirectoryError):
        ul.load_result(tmp_path)


def test_version_1_files_still_load(small, tmp_path):
    meta = json.dumps({"format": "uldp_jax.SimResult/1", "methods": ["emp"], "n": 200, "metadata": {"eps": 1.0}})
    path = _write(tmp_path / "old.npz", estimates_0=np.asarray(small.estimates["emp"]), stats=np.asarray(small.stats),
                  target=np.asarray(small.target), __meta__=np.array(meta))
    back, got = ul.load_result(path)
    assert got == {"eps": 1.0} and back.n == 200
