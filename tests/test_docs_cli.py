"""The CLI's texts (issue 51, item 7): each command says what it does in one line, the paper codes are defined,
no dates or measured times in the help, and an unknown experiment gets "did you mean ...?"."""

import re
import subprocess
import sys

import pytest

from uldp_jax import cli

DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b")


def _help(argv, capsys) -> str:
    with pytest.raises(SystemExit) as e:
        cli.main(argv)
    assert e.value.code == 0
    return capsys.readouterr().out


def test_help_defines_the_paper_codes_and_says_what_each_command_does(capsys):
    text = _help(["--help"], capsys)
    for code, author in (("001", "Murakami"), ("003", "He et al."), ("004", "Acharya")):
        assert f"{code} = {author}" in text.replace("\n", " ").replace("  ", " ")
    for command in ("list", "run", "demo"):
        assert re.search(rf"^\s+{command}\s+\S", text, re.M), command
    assert not DATE.search(text) and "load average" not in text


def test_subcommand_help_has_no_dates_or_timings(capsys):
    for argv in (["demo", "--help"], ["run", "--help"]):
        text = _help(argv, capsys)
        assert not DATE.search(text) and not re.search(r"\b\d+ s\b", text), text


def test_version(capsys):
    assert _help(["--version"], capsys).strip().startswith("uldp ")


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["run", "--help"]])
def test_help_and_version_start_without_jax(argv):
    # A fresh process, as the console script runs it: the package's root binds its public names only on first use.
    code = ("import sys; from uldp_jax import cli\ntry:\n    cli.main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
            "print('JAX LOADED' if 'jax' in sys.modules else 'no jax')")
    out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "no jax", out


def test_first_public_name_loads_the_package():
    code = ("import sys, uldp_jax as ul; before = 'jax' in sys.modules; r = ul.audit(ul.URR(8, [0, 3], 1.0)); "
            "from uldp_jax import *; print(before, r.ok, 'GRR' in ul.__all__, GRR is ul.GRR, 'simulate' in dir(ul))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "True", "True", "True", "True"], out


@pytest.mark.parametrize("name,suggestion", [("001-fig55", "'001-fig5'"), ("demo2", "'demo'"), ("003-fig", "003-fig")])
def test_unknown_experiment_suggests_the_closest(name, suggestion, capsys, tmp_path):
    assert cli.main(["run", name, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"unknown experiment {name!r}; did you mean" in err[0] and suggestion in err[0], err


def test_unknown_experiment_far_from_every_name(capsys, tmp_path):
    assert cli.main(["run", "zzzz", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "'zzzz'" in err and "did you mean" not in err and "uldp list" in err


def test_list_names_the_papers_and_each_experiment_on_one_line(capsys):
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Papers: 001 = Murakami & Kawamoto")
    line = next(ln for ln in out.splitlines() if ln.strip().startswith("001-fig5 "))
    assert "001 Fig 5" in line and "[full: paper size" in line
    assert not DATE.search(out)
