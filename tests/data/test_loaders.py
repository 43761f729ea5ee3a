"""``uldp_jax/data/_loaders.py``: the real-data loaders on small fabricated files in the real format (Foursquare,
Census, Drugs, Gowalla), and the errors they give on malformed ones."""

import numpy as np
import pytest

from uldp_jax import data


def _write_foursquare(folder):
    pois = [("v1", 40.701, -74.019, "Hospital"), ("v2", 40.799, -73.901, "Coffee Shop"),
            ("v3", 40.75, -73.96, "Home (private)"), ("v4", 41.5, -73.9, "Hospital"), ("v5", 40.72, -73.99, "Office")]
    (folder / "dataset_TIST2015_POIs.txt").write_text(
        "".join(f"{v}\t{la}\t{lo}\t{c}\tUS\n" for v, la, lo, c in pois))
    rows = [f"u{i}\tv1\tTue Apr 03 18:00:09 +0000 2012\t-240\n" for i in range(12)]
    rows += [f"u{i}\tv2\tTue Apr 03 18:00:09 +0000 2012\t-240\n" for i in range(5)]
    rows += ["u1\tv3\tx\t0\n", "u2\tv4\tx\t0\n", "u3\tv5\tx\t0\n", "u4\tunknown\tx\t0\n"]
    (folder / "dataset_TIST2015_Checkins.txt").write_text("".join(rows))


def test_load_foursquare(tmp_path):
    _write_foursquare(tmp_path)
    ds = data.load_foursquare(tmp_path)
    assert ds.d == 625 and ds.source == "real"
    assert ds.counts.sum() == 12 + 5 + 2           # v4 outside Manhattan, unknown venue dropped
    assert ds.sensitive == (0,)                    # v1: bottom-left cell, 12 distinct users >= 10
    assert ds.counts[0] == 12 and ds.counts[624] == 5
    assert sorted(np.bincount(ds.extra["checkin_tags"], minlength=3)) == [1, 1, 17]
    assert data.load_foursquare(tmp_path, min_users=20).sensitive == ()
    assert data.load_foursquare(tmp_path / "dataset_TIST2015_Checkins.txt").counts.sum() == 19


def test_load_foursquare_errors(tmp_path):
    with pytest.raises(data.DataError, match="does not exist"):
        data.load_foursquare(tmp_path / "missing")
    with pytest.raises(data.DataError, match="POIs"):
        (tmp_path / "dataset_TIST2015_Checkins.txt").write_text("a\tb\tc\td\n")
        data.load_foursquare(tmp_path)
    (tmp_path / "dataset_TIST2015_POIs.txt").write_text("v1\tnorth\twest\tHospital\tUS\n")
    with pytest.raises(data.DataError, match="not numbers"):
        data.load_foursquare(tmp_path)


def _write_census(path, rows, extra_cols=()):
    header = ["caseid", "dAge", "dAncstry1", "iDisabl1", "dIncome1", "iKorean", "iMarital", "iSex", "iSept80",
              "iMay75880", "iVietnam", "iFeb55"]
    lines = [",".join(header)]
    for i, (age, inc, mar, sex, dis, mil) in enumerate(rows):
        vals = {"caseid": 10000 + i, "dAge": age, "dAncstry1": 3, "iDisabl1": dis, "dIncome1": inc, "iMarital": mar,
                "iSex": sex, "iKorean": mil, "iSept80": mil, "iMay75880": 0, "iVietnam": 1, "iFeb55": 0}
        lines.append(",".join(str(vals[h]) for h in header))
    path.write_text("\n".join(lines) + "\n")


def test_load_census(tmp_path):
    f = tmp_path / "USCensus1990.data.txt"
    rows = [(3, 0, 2, 1, 1, 0), (3, 0, 2, 1, 1, 0), (0, 0, 4, 0, 0, 0), (5, 2, 0, 1, 2, 1)]
    _write_census(f, rows)
    ds = data.load_census(f)
    assert ds.d == 400 and ds.s == 76 and ds.counts.sum() == 4 and ds.n == 2
    assert ds.p[np.ravel_multi_index((3, 0, 2, 1), (8, 5, 5, 2))] == 0.5
    assert np.ravel_multi_index((3, 0, 2, 1), (8, 5, 5, 2)) in ds.sensitive
    ds9 = data.load_census(tmp_path, num_military=5)  # a directory works too
    assert ds9.d == 12800 and ds9.s == 2432
    assert data.load_census(f, disability=True).d == 1200


def test_load_census_errors(tmp_path):
    f = tmp_path / "c.txt"
    f.write_text("caseid,dAge\n1,2\n")
    with pytest.raises(data.DataError, match="header lacks"):
        data.load_census(f)
    _write_census(f, [(9, 0, 0, 0, 0, 0)])
    with pytest.raises(data.DataError, match="dAge"):
        data.load_census(f)


def test_load_drugs(tmp_path):
    head = "\tdrugName\tcondition\treview\trating\tdate\tusefulCount\n"
    body = ('206461\tValsartan\tLeft Ventricular Dysfunction\t"""It has no side effect,\ttabs"""\t9.0\t'
            '"May 20, 2012"\t27\n'
            '95260\tGuanfacine\tADHD\t"""My son is halfway through"""\t1.0\t"April 27, 2010"\t192\n')
    (tmp_path / "drugsComTrain_raw.tsv").write_text(head + body)
    (tmp_path / "drugsComTest_raw.tsv").write_text(head + body.replace("9.0", "2.0"))
    ds = data.load_drugs(tmp_path)
    np.testing.assert_array_equal(ds.counts, [2, 1, 0, 0, 0, 0, 0, 0, 1, 0])
    assert ds.sensitive == (0, 1, 2) and ds.n == 4
    (tmp_path / "bad.tsv").write_text("a\tb\n1\t2\n")
    with pytest.raises(data.DataError, match="rating"):
        data.load_drugs(tmp_path / "bad.tsv")


def test_load_gowalla(tmp_path):
    f = tmp_path / "loc-gowalla_totalCheckins.txt"
    f.write_text("0\t2010-10-19T23:55:27Z\t30.2359091167\t-97.7951395833\t22847\n"
                 "0\t2010-10-18T22:17:43Z\t30.2691029532\t-97.7493953705\t420315\n"
                 "1\t2010-10-17T23:42:03Z\t51.5\t-0.12\t316637\n")
    ds = data.load_gowalla(f)
    assert ds.d == 43750 and ds.counts.sum() == 2 and ds.n == 2
    r, c = int((30.2359 - 25) / 0.2), int((-97.795 + 130) / 0.2)
    assert ds.counts[r * 350 + c] >= 1
    f.write_text("garbage line\n")
    with pytest.raises(data.DataError, match="Gowalla"):
        data.load_gowalla(f)
