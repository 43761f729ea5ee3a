"""Packaging promises: LICENSE shipped, py.typed, core progress dependency, lean extras, CI follows README."""

import os
import re
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _read(*parts):
    with open(os.path.join(ROOT, *parts), encoding="utf-8") as fh:
        return fh.read()


PROJECT = tomllib.loads(_read("pyproject.toml"))


def test_license_file_is_apache_and_declared():
    text = _read("LICENSE")
    assert "Apache License" in text and "Version 2.0, January 2004" in text and "END OF TERMS AND CONDITIONS" in text
    proj = PROJECT["project"]
    assert proj["license"] == "Apache-2.0" and proj["license-files"] == ["LICENSE"]
    assert proj["authors"] and any(c.startswith("Typing :: Typed") for c in proj["classifiers"])


def test_py_typed_is_package_data():
    assert os.path.isfile(os.path.join(ROOT, "uldp_jax", "py.typed"))
    assert "py.typed" in PROJECT["tool"]["setuptools"]["package-data"]["uldp_jax"]


def test_extras():
    proj = PROJECT["project"]
    names = lambda reqs: {re.split(r"[<>=\[ ;]", r, maxsplit=1)[0].lower() for r in reqs}  # noqa: E731
    assert "tqdm" in names(proj["dependencies"])  # progress without the plot extra
    extras = proj["optional-dependencies"]
    assert names(extras["plot"]) == {"matplotlib"}  # the demo's install pulls in no test tools
    assert {"pytest", "pandas", "nbclient", "ipykernel"} <= names(extras["test"])
    assert {"mkdocs", "mkdocstrings"} <= names(extras["docs"])


def test_ci_runs_readme_commands():
    readme, ci = _read("README.md"), _read(".ci", "run")
    setup = readme[readme.index("## Set-up"):readme.index("## Documentation")]
    commands = [ln.strip() for ln in re.search(r"```bash\n(.*?)```", setup, re.S).group(1).splitlines()
                if ln.strip() and not ln.strip().startswith("#")]
    assert commands[0].endswith('pip install -e ".[plot]" && uldp demo')
    assert commands[1] == 'pip install -e ".[test]" && python -m pytest'
    assert 'pip install -e ".[plot]" && uldp demo' in ci and commands[1] in ci
    assert "mkdocs build --strict" in ci and "CHANGELOG.md" in os.listdir(ROOT)
