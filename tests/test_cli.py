"""The ``uldp`` CLI: user mistakes give one-line errors and exit 2; list works; demo --quick writes outputs."""

import json
import os
import subprocess
import sys

import pytest

from uldp_jax import cli
from uldp_jax._version import __version__ as ul_version


def _run(args, tmp_path):
    env = dict(os.environ, MPLBACKEND="Agg", JAX_PLATFORMS="cpu")
    return subprocess.run([sys.executable, "-m", "uldp_jax.cli", *args], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=300)


def _one_line(code, err, word):
    assert code != 0
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    assert word in lines[0]


def _one_line_error(proc, word):
    _one_line(proc.returncode, proc.stderr, word)


def test_unknown_experiment(tmp_path):
    _one_line_error(_run(["run", "no-such-figure"], tmp_path), "no-such-figure")


def _one_line_error_in_process(argv, word, capsys):
    """What ``_one_line_error`` checks, through ``cli.main`` in this process: the data errors below need no fresh
    interpreter of their own (test_unknown_experiment checks the real entry point's one-line error)."""
    code = cli.main(argv)
    assert code == 2
    _one_line(code, capsys.readouterr().err, word)


def test_missing_data_path(tmp_path, capsys):
    _one_line_error_in_process(["run", "001-fig5", "--quick", "--out", str(tmp_path), "--data",
                                str(tmp_path / "nope.txt")], "does not exist", capsys)


def test_wrong_format_data(tmp_path, capsys):
    bad = tmp_path / "USCensus1990.data.txt"
    bad.write_text("hello,world\n1,2\n")
    # 001-fig5 --quick only uses foursquare, so naming census is itself a user error; both are one-liners.
    _one_line_error_in_process(["run", "001-fig5", "--quick", "--out", str(tmp_path), "--data", f"census={bad}"],
                               "census", capsys)


def test_wrong_format_data_first_dataset(tmp_path, capsys):
    bad = tmp_path / "checkins.txt"
    bad.write_text("not a checkin file\n")
    _one_line_error_in_process(["run", "001-fig5", "--quick", "--out", str(tmp_path), "--data", str(bad)],
                               "Foursquare", capsys)


@pytest.mark.parametrize("reps", ["0", "-3", "two"])
def test_bad_reps(tmp_path, reps):
    _one_line_error(_run(["run", "001-fig5", "--quick", "--reps", reps], tmp_path), "reps")


def test_no_command_and_list(capsys):
    assert cli.main([]) == 2
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    assert "001-fig5" in out and "demo" in out and "foursquare" in out


def test_in_process_errors(capsys, tmp_path):
    assert cli.main(["run", "nope", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "nope" in err[0]


def test_demo_quick_writes_csv_and_png(tmp_path, capsys):
    assert cli.main(["demo", "--quick", "--no-progress", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "uRR" in out and "no privacy" in out
    folder = tmp_path / "demo"
    assert (folder / "results.csv").exists() and (folder / "demo_eps_vs_tv.png").exists()
    assert not (folder / "results.csv").read_text().startswith("#")  # plain CSV; the configuration is beside it
    meta = json.loads((folder / "run_config.json").read_text())
    assert meta["versions"]["uldp_jax"] == ul_version and meta["config"]["eps"]
    assert meta["cores"] >= 1 and len(meta["load_average"]) == 2  # a run time is read with the machine's load
    assert f"s on {meta['cores']} cores, load average " in out


def test_version(capsys):
    import uldp_jax as ul

    with pytest.raises(SystemExit) as e:
        cli.main(["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out.strip() == f"uldp {ul.__version__}"


@pytest.mark.slow
def test_without_matplotlib_results_are_written_and_one_line_note(tmp_path):
    # A fake 'matplotlib' package that fails to import, first on the path: as if the [plot] extra were absent.
    fake = tmp_path / "fake"
    (fake / "matplotlib").mkdir(parents=True)
    (fake / "matplotlib" / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'matplotlib'\", name='matplotlib')\n")
    env = dict(os.environ, JAX_PLATFORMS="cpu",
               PYTHONPATH=os.pathsep.join([str(fake)] + [p for p in sys.path if p]))
    env.pop("MPLBACKEND", None)
    proc = subprocess.run([sys.executable, "-m", "uldp_jax.cli", "demo", "--quick", "--no-progress", "--out",
                           str(tmp_path / "out")], capture_output=True, text=True, cwd=tmp_path, env=env,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    notes = [ln for ln in proc.stderr.splitlines() if "matplotlib" in ln]
    assert len(notes) == 1 and "pip install 'uldp_jax[plot]'" in notes[0]
    folder = tmp_path / "out" / "demo"
    assert (folder / "results.csv").exists() and (folder / "summary.md").exists()
    assert not list(folder.glob("*.png"))
    # the numbers are there: a header plus data rows
    rows = [ln for ln in (folder / "results.csv").read_text().splitlines() if not ln.startswith("#")]
    assert len(rows) > 2


@pytest.mark.parametrize("argv,match", [
    (["--set", "eps=0,1"], "eps: expected values > 0"),
    (["--set", "reps=0"], "reps: expected an integer >= 1"),
    (["--set", "nope=1"], "no config key 'nope'"),
    (["--set", "eps"], "expected KEY=VALUE"),
    (["--set", "eps=a,b"], "eps: expected number, got 'a'"),
    (["--set", "n=100,200"], "n: expected one value, got 2"),
    (["--set", "datasets=mars"], "unknown dataset 'mars'"),
    (["--set", "n=2.5"], "n: expected int"),
    (["--set", "report_reps=-1"], "report_reps: expected a value >= 0"),
])
def test_set_is_validated_before_any_work(argv, match, capsys, tmp_path):
    assert cli.main(["demo", "--quick", "--out", str(tmp_path)] + argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("uldp: error: --set") and match in err[0], err
    assert not (tmp_path / "demo").exists()


def test_set_overrides_reach_the_run_and_its_record(tmp_path, capsys):
    argv = ["demo", "--quick", "--no-progress", "--out", str(tmp_path), "--set", "eps=0.5,4", "--set", "n=3e3",
            "--set", "mechanisms=uRR"]
    assert cli.main(argv) == 0
    meta = json.loads((tmp_path / "demo" / "run_config.json").read_text())
    assert meta["config"]["eps"] == [0.5, 4.0] and meta["config"]["n"] == 3000
    assert meta["config"]["mechanisms"] == ["uRR"] and meta["mode"] == "quick"
    import pandas as pd

    df = pd.read_csv(tmp_path / "demo" / "results.csv")
    assert {0.5, 4.0} <= set(df["eps"]) and set(df["mechanism"]) == {"uRR", "no privacy"}  # (+ eps = ln d)


def test_set_metric_takes_a_list_for_the_001_runners():
    """``--set metric=tv,l2sq`` (001 Figs 5-7 with their MSE twins from one run) parses to a list; one name stays
    a one-element list."""
    from uldp_jax import experiments
    from uldp_jax.experiments._runner import parse_set

    exp = experiments.get_experiment("001-fig5")
    assert parse_set(exp, ["metric=tv,l2sq"]) == {"metric": ["tv", "l2sq"]}
    assert parse_set(exp, ["metric=l2sq"]) == {"metric": ["l2sq"]}


# Issue 53 item 6: every bad --set value is one line naming the key and the value, before any work.
@pytest.mark.parametrize("name,argv,match", [
    ("hr-general", ["--set", "eps=150"], "eps: expected a value in [1e-06, 100], got 150"),
    ("hr-general", ["--set", "eps=1e-9"], "eps: expected a value in [1e-06, 100], got 1e-09"),
    ("hr-general", ["--set", "n=0"], "n: expected an integer >= 1, got 0"),
    ("hr-general", ["--set", "d=1"], "d: expected an integer in [2, "),
    ("hr-general", ["--set", "d=3000000000"], "got 3000000000"),
    ("hr-general", ["--set", "distributions=uniform,bogus"], "distributions: expected 'uniform' or 'zipf:<s>'"),
    ("hr-general", ["--set", "distributions=zipf:x"], "got 'zipf:x'"),
    ("hr-general", ["--set", "reps=1"], "reps: expected an integer >= 2"),
    ("001-fig5", ["--set", "metric=bogus"], "metric: expected one of tv, l2sq, got 'bogus'"),
    ("001-fig5", ["--set", "sample=bogus"], "sample: expected one of iid, fixed, population, got 'bogus'"),
    ("001-fig5", ["--set", "path=bogus"], "path: expected one of auto, per_user, counts, got 'bogus'"),
    ("001-fig5", ["--set", "mechanisms=RR,bogus"], "mechanisms: expected one of RR, RAPPOR, uRR, uRAP, got 'bogus'"),
    ("001-fig5", ["--set", "methods=bogus"], "methods: expected one of"),
    ("001-fig5", ["--set", "eps=0.5,150"], "got 150"),
    ("001-fig5", ["--set", "n=3000000000"], "n: expected at most"),
])
def test_every_bad_set_value_is_one_line(name, argv, match, capsys, tmp_path):
    assert cli.main(["run", name, "--quick", "--out", str(tmp_path)] + argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("uldp: error: --set") and match in err[0], err
    assert not (tmp_path / name).exists()


def test_registered_configs_pass_their_own_checks():
    from uldp_jax.experiments import _runner

    for name in _runner.experiment_names():
        exp = _runner.get_experiment(name)
        for cfg in (exp.full, exp.quick):
            for key, value in cfg.items():
                _runner._check_choice(exp, key, list(value) if isinstance(value, tuple) else value)


def test_n_limit_is_int32_and_the_population_budget(monkeypatch):
    from uldp_jax import _sizing
    from uldp_jax.experiments import _runner

    monkeypatch.setitem(_sizing.SIZING_OVERRIDE, "call_memory_bytes", 8 * 10**6)
    assert _runner.cli_n_max() == 10**6
    monkeypatch.setitem(_sizing.SIZING_OVERRIDE, "call_memory_bytes", 2**40)
    assert _runner.cli_n_max() == 2**31 - 1


def test_a_huge_d_is_refused_before_allocating(tmp_path):
    code = ("import resource, subprocess, sys\n"
            "p = subprocess.run([sys.executable, '-m', 'uldp_jax.cli', 'run', 'hr-general', '--quick', '--out', "
            f"{str(tmp_path)!r}, '--set', 'd=3000000000'], capture_output=True, text=True)\n"
            "print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, repr(p.stderr))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300).stdout.split(" ", 2)
    rc, peak_kib = int(out[0]), int(out[1])
    assert rc == 2 and "--set d" in out[2] and "Traceback" not in out[2]
    assert peak_kib < 2**20, f"peak RSS {peak_kib} KiB before refusing"


def test_cli_out_an_existing_file_is_a_usage_error(tmp_path, capsys):
    target = tmp_path / "a_file"
    target.write_text("x")
    assert cli.main(["run", "demo", "--quick", "--out", str(target)]) == 2
    assert "existing file" in capsys.readouterr().err


@pytest.mark.parametrize("argv,word", [(["run", "nope"], "nope"), (["run", "001-fig5", "--reps", "0"], "reps"),
                                       (["run", "001-fig5", "--reps", "x"], "reps"), (["bogus"], "bogus")])
def test_cli(argv, word, capsys):
    try:
        code = cli.main(argv)
    except SystemExit as e:
        code = e.code
    assert code == 2
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert len(err) == 1 and word in err[0]
