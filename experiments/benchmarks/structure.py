"""Structure figures of issue 47 (no imports of the package, ``ast`` only): run from the repository root,
``python experiments/benchmarks/structure.py``.

* files and lines of ``uldp_jax/estimation`` and ``uldp_jax/engine`` (``wc -l`` of their ``.py`` files);
* the most parameters of any function there (positional, keyword-only and ``*args``/``**kw`` each count one);
* module-level constants of the package: module-level assignments to an UPPER_CASE name (``_X`` included), all of
  them and those bound to a number;
* import edges into another subpackage's private modules (the rule of ``tests/test_layering.py``
  ``PRIVATE_IMPORTS``: importer outside subpackage ``S``, target a module of ``S`` with an underscore part; the
  top-level private modules are not counted).
"""

import ast
import pathlib

PKG = pathlib.Path("uldp_jax")


def _modules():
    out = {}
    for p in sorted(PKG.rglob("*.py")):
        parts = list(p.with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = p
    return out


def _params(fn):
    a = fn.args
    return len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs) + bool(a.vararg) + bool(a.kwarg)


def _edges(mods):
    def resolve(m, node):
        if isinstance(node, ast.Import):
            return [a.name for a in node.names if a.name.startswith("uldp_jax")]
        base = node.module or ""
        if node.level:
            pkg = m if mods[m].name == "__init__.py" else m.rsplit(".", 1)[0]
            for _ in range(node.level - 1):
                pkg = pkg.rsplit(".", 1)[0]
            base = f"{pkg}.{base}" if base else pkg
        if not base.startswith("uldp_jax"):
            return []
        return [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]

    def sub(x):
        parts = x.split(".")
        top = ".".join(parts[:2])
        return parts[1] if len(parts) >= 2 and top in mods and mods[top].name == "__init__.py" else None

    edges = set()
    for m, p in mods.items():
        stack = list(ast.parse(p.read_text()).body)
        while stack:
            node = stack.pop()
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for t in resolve(m, node):
                    private = any(q.startswith("_") for q in t.split(".")[2:])
                    if t in mods and t != m and private and sub(t) and sub(m) != sub(t):
                        edges.add((m, t))
            elif isinstance(node, (ast.If, ast.Try, ast.ClassDef)):
                stack.extend(getattr(node, "body", []) + getattr(node, "orelse", []))
    return edges


def _is_number(node):
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
    if isinstance(node, ast.BinOp):
        return _is_number(node.left) and _is_number(node.right)
    return isinstance(node, ast.UnaryOp) and _is_number(node.operand)


def main():
    mods = _modules()
    for sub in ("estimation", "engine"):
        files = sorted((PKG / sub).glob("*.py"))
        lines = sum(len(f.read_text().splitlines()) for f in files)
        fns = [(f.name, n.name, _params(n)) for f in files for n in ast.walk(ast.parse(f.read_text()))
               if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        over = sorted((x for x in fns if x[2] > 8), key=lambda x: -x[2])
        print(f"{sub}/: {len(files)} files, {lines} lines; max parameters {max(x[2] for x in fns)}; "
              f"{len(over)} functions with > 8: {over[:6]}")
    consts, numeric = 0, 0
    for p in mods.values():
        for node in ast.parse(p.read_text()).body:
            targets = node.targets if isinstance(node, ast.Assign) else (
                [node.target] if isinstance(node, ast.AnnAssign) and node.value is not None else [])
            for t in targets:
                if isinstance(t, ast.Name) and t.id.strip("_").isupper() and len(t.id.strip("_")) > 1:
                    consts += 1
                    numeric += _is_number(node.value)
    print(f"module-level UPPER_CASE constants: {consts} ({numeric} bound to numbers)")
    edges = _edges(mods)
    print(f"private cross-subpackage import edges: {len(edges)} into {len({t for _, t in edges})} modules")


if __name__ == "__main__":
    main()
