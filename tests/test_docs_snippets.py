"""One copy of every example (issue 51, item 4): README's code blocks are the snippet files the docs include
(``--8<-- "docs/snippets/NAME.py"``), and every snippet runs and prints labelled results."""

import pathlib
import re
import runpy

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
SNIPPETS = ROOT / "docs" / "snippets"
README = ROOT / "README.md"
INCLUDE = re.compile(r'--8<-- "([^"]+)"')


def _readme_block(heading: str) -> str:
    text = README.read_text()
    section = text[text.index(heading):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


@pytest.mark.parametrize("heading, snippet", [("## A first example", "first_example.py"),
                                              ("## At scale", "at_scale.py")])
def test_readme_blocks_are_the_snippet_files(heading, snippet):
    assert _readme_block(heading) == (SNIPPETS / snippet).read_text()


def test_every_snippet_is_included_and_every_include_exists():
    docs = {p: p.read_text() for p in (ROOT / "docs").rglob("*.md")}
    included = {m for text in docs.values() for m in INCLUDE.findall(text)}
    assert included, "the docs include no snippet"
    for path in included:
        assert (ROOT / path).is_file(), f"docs include {path}, which does not exist"
    assert {f"docs/snippets/{p.name}" for p in SNIPPETS.glob("*.py")} <= included, "a snippet no page includes"


def test_readme_stays_short():
    lines = README.read_text().splitlines()
    assert len(lines) <= 150, f"README has {len(lines)} lines (at most 150: issue 51)"


@pytest.mark.slow  # 15.6 s on the loaded 2-core machine (compiling audit, perturb and two estimators)
def test_first_example_prints_labelled_results(capsys):
    runpy.run_path(str(SNIPPETS / "first_example.py"), run_name="__main__")
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("audit: uldp, eps = 1.000, holds = True, tight = True"), out
    assert out[1].startswith("p_hat (emp+thr):") and out[2].startswith("TV distance (l1 / 2) to p: emp ")
    tv_thr = float(out[2].rsplit(" ", 1)[1])
    assert 0 < tv_thr < 0.05  # 100,000 users of 8 items at eps = 1: a few thousandths


@pytest.mark.slow
def test_at_scale_prints_one_labelled_line_per_eps(capsys):
    runpy.run_path(str(SNIPPETS / "at_scale.py"), run_name="__main__")
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 4 and all("TV (l1 / 2), mean of 100 repetitions of 10^6 users" in ln for ln in out), out
    tvs = [float(ln.rsplit(" ", 1)[1]) for ln in out]
    assert tvs == sorted(tvs, reverse=True)  # error falls as eps grows (0.5, 1, 2, 4)
