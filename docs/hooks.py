"""mkdocs hooks: pages generated from the package and the repository at build time.

* ``<!-- uldp:mechanisms -->`` (mechanisms.md): one row per mechanism class exported by ``uldp_jax``, with the
  guarantee ``ul.audit`` reads off the exact channel of a small instance, and the docstring's references. The
  examples are the registry's (``mechanisms/core/_registry.py``); a mechanism exported without one fails the build.
* ``<!-- uldp:reproductions -->`` (reproductions.md): every committed experiment folder with its PNGs and its
  summary's claim lines (the notes stay in the repository).
* ``<!-- uldp:include PATH -->``: the text of a repository file (e.g. experiments/benchmarks/README.md).
* ``<!-- uldp:api MODULE -->`` (the API pages): one ``::: MODULE.NAME`` entry per public function and class the
  module exports (its ``__all__``, else its public names defined in uldp_jax), so a new export is documented
  without editing the page.
"""

from __future__ import annotations

import glob
import importlib.util
import inspect
import os
import re

from mkdocs.structure.files import File

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXPERIMENTS = os.path.join(ROOT, "experiments")


def _convert():
    """docs/griffe_rst_math.py's ``convert``: the table's summaries are docstring text too (reST math -> MathJax)."""
    spec = importlib.util.spec_from_file_location("griffe_rst_math", os.path.join(ROOT, "docs", "griffe_rst_math.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.convert


def _examples(ul):
    """A small instance of every mechanism: the example each library constructor registers (``ul.mechanisms.examples()``)."""
    return {name: make(1.0) for name, make in ul.mechanisms.examples().items()}


def _references(obj) -> str:
    doc = inspect.getdoc(obj) or ""
    m = re.search(r"^References:\s*\n((?:[ \t]+.*\n?)+)", doc, re.M)
    text = " ".join(ln.strip() for ln in m.group(1).splitlines()) if m else ""
    return text.replace("|", "/") or "see the summary"


def _static_path(obj) -> str:
    """Where mkdocstrings' static collector finds a registered constructor: its family package, the module path up
    to the first private part (``uldp_jax.mechanisms.rr.GRR``, ``uldp_jax.pum.PUM``). ``uldp_jax`` binds the
    registered constructors when it is imported (``mechanisms/core/_registry.py``), which static analysis does not
    follow; the page keeps the ``#uldp_jax.NAME`` anchors."""
    parts = obj.__module__.split(".")
    public = parts[:next((i for i, p in enumerate(parts) if p.startswith("_")), len(parts))]
    return ".".join([*public, obj.__name__])


def _mechanism_table() -> str:
    import uldp_jax as ul

    ex, convert = _examples(ul), _convert()
    names = [n for n in ul.__all__ if n != "Mechanism" and (
        (inspect.isclass(getattr(ul, n)) and issubclass(getattr(ul, n), ul.Mechanism))
        or isinstance(ex.get(n), ul.Mechanism) and callable(getattr(ul, n)))]
    missing = [n for n in names if n not in ex]
    if missing:
        raise RuntimeError(f"docs/hooks.py has no example instance for {missing}: register the constructor "
                           "with its example in its family's __init__ (mechanisms/core/_registry.py).")
    rows = ["| constructor | summary | guarantee (audited on the example) | example | references |",
            "|---|---|---|---|---|"]
    for n in names:
        obj, m = getattr(ul, n), ex[n]
        rep = ul.audit(m)
        summary = convert((inspect.getdoc(obj) or "").split("\n\n")[0]).replace("\n", " ").replace("|", "/")
        verdict = f"{rep.kind}, eps = {float(rep.eps):.3g}, {'ok' if rep.ok else 'VIOLATED'}" + (
            ", tight" if rep.tight else "")
        rows.append(f"| [`{n}`](#uldp_jax.{n}) | {summary} | {verdict} | `{m!r}` | {_references(obj)} |")
    blocks = "\n\n".join(f'<a id="uldp_jax.{n}"></a>\n\n::: {_static_path(getattr(ul, n))}' for n in names)
    return "\n".join(rows) + "\n\n## Reference\n\n" + blocks + "\n"


def _experiment_folders() -> list[str]:
    return sorted(os.path.basename(os.path.dirname(p)) for p in glob.glob(os.path.join(EXPERIMENTS, "*", "NOTES.md")))


def _demote(md: str) -> str:
    """NOTES headings two levels down; code-like paths left as they are."""
    return re.sub(r"^(#{1,4}) ", lambda m: "#" * (len(m.group(1)) + 2) + " ", md, flags=re.M)


def _claims(summary: str) -> str:
    """The claim lines of a committed ``summary.md`` (its bullets: each a paper's claim and what the run shows)."""
    return "\n".join(ln for ln in summary.splitlines() if ln.startswith("- "))


def _gallery() -> str:
    """Each committed experiment: its title, plots and claim lines; the development notes stay in the repository
    (each experiment folder's NOTES.md), linked, not copied."""
    out = []
    for name in _experiment_folders():
        folder = os.path.join(EXPERIMENTS, name)
        with open(os.path.join(folder, "NOTES.md"), encoding="utf-8") as fh:
            title = fh.readline().lstrip("# ").strip()
        out.append(f"## {name}\n\n{title}\n")
        for png in sorted(glob.glob(os.path.join(folder, "*.png"))):
            out.append(f"![{name}: {os.path.basename(png)}](reproductions/{name}/{os.path.basename(png)})\n")
        summary = os.path.join(folder, "summary.md")
        if os.path.exists(summary):
            with open(summary, encoding="utf-8") as fh:
                claims = _claims(fh.read())
            if claims:
                out.append("The paper's claims and what this run shows (`summary.md`):\n\n" + claims + "\n")
        out.append(f"Configuration, sizes and notes: `experiments/{name}/` in the repository (`NOTES.md`, "
                   "`run_config.json`, `results.csv`).\n")
    return "\n".join(out)


def _api_entries(module_name: str) -> str:
    import importlib

    mod = importlib.import_module(module_name)
    names = getattr(mod, "__all__", None) or sorted(n for n in dir(mod) if not n.startswith("_"))
    keep = [n for n in names if not n.startswith("_") and (inspect.isfunction(getattr(mod, n, None))
            or inspect.isclass(getattr(mod, n, None)))
            and getattr(getattr(mod, n), "__module__", "").startswith("uldp_jax")]
    return "\n\n".join(f"::: {module_name}.{n}" for n in keep) + "\n"


def on_files(files, config):
    for name in _experiment_folders():
        for png in sorted(glob.glob(os.path.join(EXPERIMENTS, name, "*.png"))):
            files.append(File.generated(config, f"reproductions/{name}/{os.path.basename(png)}", abs_src_path=png))
    return files


def on_page_markdown(markdown, page, config, files):
    if "<!-- uldp:mechanisms -->" in markdown:
        markdown = markdown.replace("<!-- uldp:mechanisms -->", _mechanism_table())
    if "<!-- uldp:reproductions -->" in markdown:
        markdown = markdown.replace("<!-- uldp:reproductions -->", _gallery())
    for m in re.finditer(r"<!-- uldp:api (\S+) -->", markdown):
        markdown = markdown.replace(m.group(0), _api_entries(m.group(1)))
    for m in re.finditer(r"<!-- uldp:include (\S+) -->", markdown):
        with open(os.path.join(ROOT, m.group(1)), encoding="utf-8") as fh:
            markdown = markdown.replace(m.group(0), _demote(fh.read()))
    return markdown
