"""Documents cite only documents that exist; docs/errata.md names functions and tests that exist."""

import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SKIP_DIRS = {".git", ".venv", "venv", "site", "build", "dist", "__pycache__", ".pytest_cache", "results"}
TEXT_EXT = (".md", ".py", ".ipynb", ".yml", ".toml", ".txt", ".json")
# A document reference: an optional folder path, a name ending in .md, an optional #anchor.
MD_REF = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]+\.md)(#[\w-]+)?")


def _files(ext=TEXT_EXT):
    for dirpath, dirnames, filenames in os.walk(ROOT):
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS and not d.endswith(".egg-info")]
        for f in filenames:
            if f.endswith(ext):
                yield os.path.join(dirpath, f)


def _anchors(path):
    """GitHub/mkdocs heading slugs: lower case, punctuation dropped, spaces to hyphens."""
    with open(path, encoding="utf-8") as fh:
        heads = [ln.lstrip("#").strip() for ln in fh if ln.startswith("#")]
    return {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in heads}


def _resolve(ref, citing):
    """The file ``ref`` names, relative to the citing file's folder or any folder above it, or docs/."""
    bases, d = [os.path.join(ROOT, "docs")], os.path.dirname(os.path.abspath(citing))
    while d.startswith(ROOT):
        bases.append(d)
        d = os.path.dirname(d)
    for base in bases:
        cand = os.path.normpath(os.path.join(base, ref))
        if os.path.isfile(cand):
            return cand
    return None


def test_no_reference_to_a_missing_document():
    md_names = {os.path.basename(p) for p in _files((".md",))}
    bad = []
    for path in _files():
        if os.path.abspath(path) == os.path.abspath(__file__):
            continue
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        for m in MD_REF.finditer(text):
            ref, anchor = m.group(1), m.group(2)
            target = _resolve(ref, path)
            # A bare name (summary.md, NOTES.md) names a kind of file the runs write: it must exist somewhere.
            if target is None and ("/" in ref or ref not in md_names):
                bad.append(f"{os.path.relpath(path, ROOT)}: {ref}")
            elif target is not None and anchor and anchor[1:] not in _anchors(target):
                bad.append(f"{os.path.relpath(path, ROOT)}: {ref}{anchor} (no such section)")
    assert not bad, "references to documents that are not in the repository:\n" + "\n".join(sorted(set(bad)))


def test_errata_names_existing_code_and_tests():
    path = os.path.join(ROOT, "docs", "errata.md")
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    missing = []
    for ref in set(re.findall(r"`((?:uldp_jax|tests|experiments)/[\w/.-]+)", text)):
        if not os.path.exists(os.path.join(ROOT, ref.rstrip("/"))):
            missing.append(ref)
    # "tests/x.py::name" sets the file for the "::other" references that follow it.
    current = None
    for m in re.finditer(r"`(tests/[\w/.-]+\.py)?::(\w+)`", text):
        current = m.group(1) or current
        with open(os.path.join(ROOT, current), encoding="utf-8") as fh:
            if not re.search(rf"^def {m.group(2)}\(", fh.read(), re.M):
                missing.append(f"{current}::{m.group(2)}")
    # Every function the page names in code font after "Implemented by" exists somewhere in the package.
    src = "\n".join(open(p, encoding="utf-8").read() for p in _files((".py",)) if "/uldp_jax/" in p)
    for block in re.findall(r"Implemented by:?(.*?)(?:\n- |\n\n|$)", text, re.S):
        for code in re.findall(r"`([^`]+)`", block):
            m = re.match(r"(?:ul\.)?([A-Za-z_]\w*)(?:\(|\.\w+$|$)", code)
            if "/" in code or code.endswith(".py") or m is None:
                continue
            name = m.group(1)
            if not re.search(rf"\b(def|class) {name}\b|\b{name} = ", src):
                missing.append(name)
    assert not missing, f"docs/errata.md names things that do not exist: {sorted(set(missing))}"
