"""``StudyResult.save`` / ``ul.StudyResult.load`` cannot lose data (issue 53 item 2): literal names, no silent
overwrite, atomic writes, every field checked on load (the message names the file and the field), exact round
trips with the configuration's types kept."""

import json
import math

import numpy as np
import pytest

import uldp_jax as ul

D = 4


def _rows():
    """Rows shaped as ``ul.study`` writes them (a real study's round trip: tests/studies/test_result.py)."""
    rows = []
    for mech, eps in (("GRR", 0.5), ("GRR", 2.0), ("OUE", None)):
        for method in ("emp", "emp+thr"):
            rows.append({"mechanism": mech, "eps": eps, "n": 200, "sample": "iid", "method": method, "metric": "mse",
                         "mean": 0.01 * (1 + len(rows)) / 3, "se": 0.001, "theory": 0.011 if method == "emp" else math.nan,
                         "z": -0.7 if method == "emp" else math.nan, "reps": 3, "compile_s": 0.5, "run_s": 0.1})
    return rows


@pytest.fixture(scope="module")
def res():
    values = np.random.default_rng(0).random((6, 3))
    config = {"mechanisms": ["GRR", "OUE"], "grids": {"eps": [0.5, 2.0]}, "params": {"GRR": ["eps"], "OUE": []},
              "n": [200], "reps": 3, "methods": ["emp", "emp+thr"], "metrics": {"mse": "mse"}, "sample": "iid",
              "d": D, "key_data": [0, 0], "simulate_options": {}, "p": [0.25] * 4}
    timing = {"wall_s": 1.5, "compile_s": 1.0, "compile_requests": 4, "cache_hits": 0}
    return ul.StudyResult(_rows(), values, config, timing)


def _same(a, b):
    assert a.columns == b.columns and len(a) == len(b)
    for x, y in zip(a.rows(), b.rows()):
        assert list(x) == list(y)
        for k in x:
            assert type(x[k]) is type(y[k]) and (x[k] == y[k] or (math.isnan(x[k]) and math.isnan(y[k]))), k
    assert a.values.dtype == b.values.dtype and np.array_equal(a.values, b.values)
    assert a.config == b.config and a.timing == b.timing
    assert (a.version, a.jax_version) == (b.version, b.jax_version)


def _other(res, scale):
    return ul.StudyResult(res.rows(), res.values * scale, res.config, res.timing)


def test_names_are_taken_literally(res, tmp_path):
    res.save(tmp_path / "study_eps0.5")
    _other(res, 2.0).save(tmp_path / "study_eps0.1")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["study_eps0.1.json", "study_eps0.1.npz",
                                                          "study_eps0.5.json", "study_eps0.5.npz"]
    _same(res, ul.StudyResult.load(tmp_path / "study_eps0.5"))
    np.testing.assert_array_equal(ul.StudyResult.load(str(tmp_path / "study_eps0.1")).values, res.values * 2.0)
    _same(res, ul.StudyResult.load(tmp_path / "study_eps0.5.json"))  # either member names the pair
    _same(res, ul.StudyResult.load(tmp_path / "study_eps0.5.npz"))


def test_no_silent_overwrite(res, tmp_path):
    res.save(tmp_path / "s")
    for name in ("s", "s.json", "s.npz"):
        with pytest.raises(FileExistsError, match="overwrite=True"):
            _other(res, 3.0).save(tmp_path / name)
    _same(res, ul.StudyResult.load(tmp_path / "s"))
    (tmp_path / "t.npz").write_bytes(b"someone else's file")  # one member of the pair exists: nothing is written
    with pytest.raises(FileExistsError, match="t.npz"):
        res.save(tmp_path / "t")
    assert not (tmp_path / "t.json").exists() and (tmp_path / "t.npz").read_bytes() == b"someone else's file"
    _other(res, 3.0).save(tmp_path / "s", overwrite=True)
    np.testing.assert_array_equal(ul.StudyResult.load(tmp_path / "s").values, res.values * 3.0)
    with pytest.raises(TypeError, match="overwrite"):
        res.save(tmp_path / "u", overwrite=1)


def test_save_onto_a_directory_is_refused(res, tmp_path):
    (tmp_path / "out").mkdir()
    with pytest.raises(IsADirectoryError, match="directory"):
        res.save(tmp_path / "out")
    (tmp_path / "x.json").mkdir()
    with pytest.raises(IsADirectoryError, match="x.json"):
        res.save(tmp_path / "x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "x.json"]


def test_an_interrupted_save_keeps_the_old_pair_and_leaves_no_temporary(res, tmp_path, monkeypatch):
    res.save(tmp_path / "s")

    def broken(f, **arrays):
        f.write(b"PK\x03\x04 half")
        raise OSError("disk full")

    monkeypatch.setattr(np, "savez", broken)
    with pytest.raises(OSError, match="disk full"):
        _other(res, 2.0).save(tmp_path / "s", overwrite=True)
    with pytest.raises(OSError, match="disk full"):
        res.save(tmp_path / "fresh")
    monkeypatch.undo()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.json", "s.npz"]
    _same(res, ul.StudyResult.load(tmp_path / "s"))


def test_round_trip_keeps_types_and_non_finite_values(res, tmp_path):
    rows = res.rows()
    rows[0]["mean"], rows[1]["z"] = math.inf, -math.inf
    config = dict(res.config, extra={1: (0.5, float("nan")), "k": [np.int64(2)]})
    r = ul.StudyResult(rows, res.values, config, res.timing)
    r.save(tmp_path / "s")
    back = ul.StudyResult.load(tmp_path / "s")
    assert back.rows()[0]["mean"] == math.inf and back.rows()[1]["z"] == -math.inf
    extra = back.config["extra"]
    assert list(extra) == [1, "k"] and type(extra[1]) is tuple and math.isnan(extra[1][1]) and extra["k"] == [2]
    back.config["extra"] = r.config["extra"] = None
    _same(r, back)


def _doc(path):
    return json.loads((path.parent / (path.name + ".json")).read_text())


def _put(path, doc):
    (path.parent / (path.name + ".json")).write_text(json.dumps(doc))


def _edit_rows(edit):
    def go(doc):
        edit(doc["rows"])
        return doc
    return go


@pytest.mark.parametrize("edit, field", [
    (_edit_rows(lambda rows: rows[1].pop("mean")), "'mean'"),
    (_edit_rows(lambda rows: rows[0].update(mean="0.01")), "'mean'"),
    (_edit_rows(lambda rows: rows[0].update(se=[1.0])), "'se'"),
    (_edit_rows(lambda rows: rows[2].update(n="200")), "'n'"),
    (_edit_rows(lambda rows: rows[0].update(method=3)), "'method'"),
    (_edit_rows(lambda rows: rows[0].update(eps="0.5")), "'eps'"),
    (_edit_rows(lambda rows: rows[0].update(reps=5)), "reps"),
    (_edit_rows(lambda rows: rows.pop()), "rows"),
    (_edit_rows(lambda rows: rows.__setitem__(0, [1, 2])), "rows[0]"),
    (lambda doc: {k: v for k, v in doc.items() if k != "config"}, "'config'"),
    (lambda doc: dict(doc, config=[1]), "'config'"),
    (lambda doc: dict(doc, timing="fast"), "'timing'"),
    (lambda doc: dict(doc, columns=doc["columns"][1:]), "mechanism"),
    (lambda doc: dict(doc, values_sha256="0" * 64), "values_sha256"),
    (lambda doc: dict(doc, format="uldp_jax.StudyResult/9"), "format"),
    (lambda doc: dict(doc, uldp_jax_version=1), "uldp_jax_version"),
])
def test_load_names_the_file_and_the_field_of_a_bad_json(res, tmp_path, edit, field):
    res.save(tmp_path / "s")
    _put(tmp_path / "s", edit(_doc(tmp_path / "s")))
    with pytest.raises(ValueError, match=r"s\.json") as e:
        ul.StudyResult.load(tmp_path / "s")
    assert field in str(e.value), str(e.value)


@pytest.mark.parametrize("values, field", [
    (lambda v: v[:, :2], "values"),          # wrong shape (another reps)
    (lambda v: v[:-1], "values"),             # fewer values than rows
    (lambda v: np.concatenate([v, v]), "values"),  # more values than rows (fewer rows than values)
    (lambda v: v.astype(np.float32), "values"),
    (lambda v: v.ravel(), "values"),
    (lambda v: v + 1.0, "values_sha256"),     # a pair that does not belong together
])
def test_load_names_the_file_and_the_field_of_bad_values(res, tmp_path, values, field):
    res.save(tmp_path / "s")
    with open(tmp_path / "s.npz", "wb") as f:
        np.savez(f, values=values(res.values))
    with pytest.raises(ValueError, match=r"s\.npz") as e:
        ul.StudyResult.load(tmp_path / "s")
    assert field in str(e.value), str(e.value)


def test_broken_files_are_clear_errors(res, tmp_path):
    res.save(tmp_path / "s")
    text, blob = (tmp_path / "s.json").read_text(), (tmp_path / "s.npz").read_bytes()
    cases = [("s.json", text[: len(text) // 2]), ("s.json", ""), ("s.json", "[1, 2]"), ("s.npz", blob[: len(blob) // 2]),
             ("s.npz", b"not a zip"), ("s.npz", b"")]
    for name, content in cases:
        res.save(tmp_path / "s", overwrite=True)
        target = tmp_path / name
        target.write_text(content) if isinstance(content, str) else target.write_bytes(content)
        with pytest.raises(ValueError, match=name.replace(".", r"\.")) as e:
            ul.StudyResult.load(tmp_path / "s")
        assert type(e.value).__name__ == "FileFormatError", (name, content[:20], e.value)
    res.save(tmp_path / "s", overwrite=True)
    with open(tmp_path / "s.npz", "wb") as f:
        np.savez(f, values=res.values, stolen=np.zeros(2))  # an extra array is not dropped silently
    with pytest.raises(ValueError, match="stolen"):
        ul.StudyResult.load(tmp_path / "s")
    (tmp_path / "s.npz").unlink()
    with pytest.raises(FileNotFoundError, match=r"s\.npz"):
        ul.StudyResult.load(tmp_path / "s")
    with pytest.raises(FileNotFoundError, match=r"none\.json"):
        ul.StudyResult.load(tmp_path / "none")


def test_version_1_files_still_load(res, tmp_path):
    res.save(tmp_path / "s")
    doc = _doc(tmp_path / "s")
    doc["format"] = "uldp_jax.StudyResult/1"
    del doc["values_sha256"], doc["values_shape"]
    _put(tmp_path / "s", doc)
    _same(res, ul.StudyResult.load(tmp_path / "s"))
