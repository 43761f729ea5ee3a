"""The package's import structure and dispatch rules, read from the source with ``ast`` (issue 14, items 2-3).

* imports between modules and between layers (subpackages and top-level modules) form no cycle;
* mechanisms import only the protocol, leaf formula modules and RNG helpers (never theory, estimation, the
  engine, privacy audits);
* no function-level import of a ``uldp_jax`` module and no ``importlib`` (the usual ways to hide a cycle);
* no class-name dispatch (``type(x).__name__`` compared with strings) and no ``isinstance`` against a concrete
  mechanism class outside that class's own module: generic code asks the mechanism (``ul.Mechanism``'s members);
* no capability probe of a mechanism (``hasattr(mech, "...")``, ``getattr(mech, "...", default)``) outside
  ``uldp_jax/mechanisms/``: a capability is a protocol member with a default (e.g. ``likelihood()`` -> None).

``ALLOWED`` lists what other open work still has to remove, one commented entry each; it must only shrink.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

import uldp_jax as ul

PKG = pathlib.Path(ul.__file__).parent
ROOT = "uldp_jax"
PUBLIC = f"{ROOT}._public"  # the root's public names, bound on first use (uldp_jax/__init__.py)

# Known violations in files that other work on issue 14 is rewriting (the engine, the EM core, collaborative
# sampling, the murakami driver). Each entry: (rule, module, detail). Empty this list as they land.
ALLOWED = {
    # cli and the experiment runner import lazily for start-up time; lazy imports at the top layer hide no cycle.
    ("local-import", "uldp_jax.cli", "uldp_jax.data"),
    ("local-import", "uldp_jax.cli", "uldp_jax.experiments"),
    ("local-import", "uldp_jax.cli", "uldp_jax.mechanisms"),  # `uldp list` reads the mechanism registry
    ("local-import", "uldp_jax.cli", "uldp_jax.experiments._runner"),
    ("local-import", "uldp_jax.experiments._runner", "uldp_jax"),
    # the root binds its public names on first use (PEP 562), so `uldp --help` starts without JAX
    ("local-import", "uldp_jax", "uldp_jax._public"),
}


def _module_name(path: pathlib.Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(PKG.rglob("*.py"))}
TREES = {name: ast.parse(path.read_text(), str(path)) for name, path in MODULES.items()}


def _is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def _resolve(module: str, node: ast.ImportFrom | ast.Import) -> list[str]:
    """The uldp_jax modules an import statement in ``module`` loads (a name that is a submodule counts as it)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == ROOT]
    base = node.module or ""
    if node.level:
        pkg = module if _is_package(module) else module.rsplit(".", 1)[0]
        for _ in range(node.level - 1):
            pkg = pkg.rsplit(".", 1)[0]
        base = f"{pkg}.{base}" if base else pkg
    if base.split(".")[0] != ROOT:
        return []
    out = []
    for a in node.names:
        sub = f"{base}.{a.name}"
        out.append(sub if sub in MODULES else base)
    return out


def _top_level_imports(tree: ast.Module):
    """Import statements executed at import time (module body, including ``if``/``try`` blocks, not functions)."""
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, (ast.If, ast.Try, ast.With)):
            for field in ("body", "orelse", "finalbody", "handlers"):
                for child in getattr(node, field, []):
                    stack.extend(child.body if isinstance(child, ast.ExceptHandler) else [child])
        elif isinstance(node, ast.ClassDef):
            stack.extend(node.body)


def _edges() -> dict[str, set[str]]:
    graph = {m: set() for m in MODULES}
    for m, tree in TREES.items():
        for node in _top_level_imports(tree):
            graph[m].update(t for t in _resolve(m, node) if t in MODULES and t != m)
    return graph


GRAPH = _edges()


def _layer(module: str) -> str:
    """``uldp_jax.mechanisms.rr._grr`` -> ``mechanisms``; ``uldp_jax._api`` -> ``_api``; the root -> ``uldp_jax``.

    ``uldp_jax._public`` is the root too: it holds the names the root binds on first use.
    """
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and module != PUBLIC else ROOT


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _allowed(rule: str, module: str, detail: str) -> bool:
    return (rule, module, detail) in ALLOWED or (rule, module, "*") in ALLOWED


def _runtime_graph() -> dict[str, set[str]]:
    """Module graph as Python runs it: importing ``a.b.c`` first runs the packages ``a.b`` and ``a``.

    Edges into the root package are left out (only the top layer may import it; see
    ``test_only_the_top_layer_imports_the_root``), and so are the allow-listed layer edges.
    """
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for m, targets in GRAPH.items():
        for t in targets:
            if _allowed("layer", m, t):
                continue
            parts = t.split(".")
            for k in range(2, len(parts) + 1):
                target = ".".join(parts[:k])
                if target in MODULES and target != m and not m.startswith(target + "."):
                    graph[m].add(target)
    return graph


def test_no_module_import_cycles():
    assert _cycles(_runtime_graph()) == []


def test_only_the_top_layer_imports_the_root():
    bad = [m for m, ts in GRAPH.items() if ROOT in ts and _layer(m) not in ("experiments", "cli", ROOT)]
    assert bad == []


def test_no_layer_import_cycles():
    layers: dict[str, set[str]] = {}
    for m, targets in GRAPH.items():
        if _layer(m) == ROOT:
            continue
        for t in targets:
            if _layer(t) != ROOT and _layer(t) != _layer(m) and not _allowed("layer", m, t):
                layers.setdefault(_layer(m), set()).add(_layer(t))
    assert _cycles(layers) == [], layers


# What a mechanism module may import: the protocol and validation, leaf formula modules, RNG/hash helpers.
MECHANISM_DEPS = {"uldp_jax._validate", "uldp_jax.mechanisms"}


def test_mechanisms_import_only_the_core():
    bad = []
    for m, targets in GRAPH.items():
        if not m.startswith("uldp_jax.mechanisms"):
            continue
        for t in targets:
            ok = t in MECHANISM_DEPS or t.startswith("uldp_jax.mechanisms.")
            if not ok and not _allowed("layer", m, t):
                bad.append((m, t))
    assert bad == []


def _mechanism_homes() -> set[str]:
    """The modules that define the package's public mechanisms (``uldp_jax.pum._mechanism`` among them)."""
    public = [getattr(ul, n) for n in ul.__all__]
    return {c.__module__ for c in public if isinstance(c, type) and issubclass(c, ul.Mechanism) and c is not ul.Mechanism}


def test_every_mechanism_class_imports_only_the_core():
    """A module that defines a public library mechanism, wherever it sits (PUM's lives with its drivers in ``pum/``),
    imports only ``mechanisms/`` and validation: never theory, estimation, the engine or the audits."""
    homes = _mechanism_homes()
    assert "uldp_jax.pum._mechanism" in homes
    bad = [(m, t) for m in sorted(homes) for t in GRAPH[m]
           if not (t in MECHANISM_DEPS or t.startswith("uldp_jax.mechanisms."))]
    assert bad == []


MECH = f"{ROOT}.mechanisms"
CORE = f"{MECH}.core"


def _family(module: str) -> str | None:
    """``uldp_jax.mechanisms.rr._grr`` -> ``rr``; ``uldp_jax.mechanisms`` (the package) -> None."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == "mechanisms" else None


def _sibling_private_imports(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """A mechanism module importing another family's private module, or core importing a family."""
    bad = []
    for m, targets in graph.items():
        fam = _family(m)
        if fam is None:
            continue
        for t in targets:
            tfam = _family(t)
            if tfam is None or tfam == fam:
                continue
            private = any(part.startswith("_") for part in t.split(".")[3:])
            if fam == "core" or (tfam != "core" and private):
                bad.append((m, t))
    return bad


def test_mechanism_families_import_only_core_and_other_families_packages():
    """Families share through ``mechanisms/core`` or a family's package (``from uldp_jax.mechanisms import transform``),
    never through another family's private module; core imports no family."""
    assert _sibling_private_imports(GRAPH) == []


def test_every_mechanism_module_sits_in_core_or_a_family():
    flat = [m for m in MODULES if m.startswith(MECH + ".") and len(m.split(".")) == 3 and not _is_package(m)]
    assert flat == []
    assert _is_package(CORE)


def _reexport_only(tree: ast.Module) -> bool:
    """A module whose body is a docstring and imports only (a pass-through)."""
    body = [n for n in tree.body if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))]
    body = [n for n in body if not (isinstance(n, ast.ImportFrom) and n.module == "__future__")]
    return bool(body) and all(isinstance(n, (ast.Import, ast.ImportFrom)) for n in body)


def test_no_reexport_only_modules():
    """Only a package's ``__init__`` may be a list of imports; a private module that only re-exports another is a
    pass-through: import the real module instead."""
    bad = [m for m, tree in TREES.items() if not _is_package(m) and _reexport_only(tree)]
    assert bad == []


def test_required_members_are_declared_on_the_base():
    """Every member ``Mechanism.__init_subclass__`` requires is declared on the base (a field annotation or an
    attribute), so the base class reads as the protocol."""
    from_base = set(ul.Mechanism.__annotations__) | set(vars(ul.Mechanism))
    from uldp_jax.mechanisms.core._protocol import REQUIRED
    assert [name for name in REQUIRED if name not in from_base] == []


def _local_imports(tree: ast.Module):
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            for node in ast.walk(fn):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    yield node


def test_no_function_level_imports_of_the_package():
    bad = []
    for m, tree in TREES.items():
        for node in _local_imports(tree):
            for t in _resolve(m, node):
                if not _allowed("local-import", m, t):
                    bad.append((m, node.lineno, t))
    assert bad == []


def test_no_importlib():
    bad = []
    for m, tree in TREES.items():
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            if any(n.split(".")[0] == "importlib" for n in names):
                detail = "uldp_jax.simulate"  # the one known use; any other would need its own entry
                if not _allowed("importlib", m, detail):
                    bad.append((m, node.lineno))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "__import__":
                if not _allowed("importlib", m, "__import__"):
                    bad.append((m, node.lineno))
    assert bad == []


def _is_type_name(node: ast.AST) -> bool:
    """``type(x).__name__`` or ``x.__class__.__name__``."""
    if not (isinstance(node, ast.Attribute) and node.attr == "__name__"):
        return False
    v = node.value
    if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "type":
        return True
    return isinstance(v, ast.Attribute) and v.attr == "__class__"


def _is_str_or_names(node: ast.AST, str_names: set[str]) -> bool:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return True
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_is_str_or_names(e, str_names) for e in node.elts)
    return isinstance(node, ast.Name) and node.id in str_names


def _string_constants(tree: ast.Module) -> set[str]:
    """Module-level names bound to strings or collections of strings (``_HR_NAMES = ("HR", ...)``)."""
    out = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and _is_str_or_names(node.value, set()):
            out.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return out


def _name_dispatch(tree: ast.Module) -> list[int]:
    consts = _string_constants(tree)
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_is_type_name(s) for s in sides) and any(_is_str_or_names(s, consts) for s in sides):
                lines.append(node.lineno)
        elif isinstance(node, ast.Subscript) and _is_type_name(node.slice):  # TABLE[type(m).__name__]
            lines.append(node.lineno)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
                and node.args and _is_type_name(node.args[0]):  # TABLE.get(type(m).__name__)
            lines.append(node.lineno)
    return lines


def test_no_class_name_dispatch():
    bad = [(m, line) for m, tree in TREES.items() for line in _name_dispatch(tree)
           if not _allowed("name-dispatch", m, "*")]
    assert bad == []


def _concrete_mechanisms() -> dict[str, str]:
    """Class name -> defining module of every concrete mechanism class of the library."""
    out, todo = {}, [ul.Mechanism]
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            todo.append(sub)
            if sub.__module__.startswith(ROOT + "."):
                out[sub.__name__] = sub.__module__
    return out


def _isinstance_targets(node: ast.Call) -> list[str]:
    if not (isinstance(node.func, ast.Name) and node.func.id in ("isinstance", "issubclass") and len(node.args) == 2):
        return []
    arg = node.args[1]
    elts = arg.elts if isinstance(arg, ast.Tuple) else [arg]
    out = []
    for e in elts:
        if isinstance(e, ast.Name):
            out.append(e.id)
        elif isinstance(e, ast.Attribute):
            out.append(e.attr)
    return out


# A class's own entry points outside its module: ``ul.pum_estimate``/``ul.pum_simulate`` take a PUM only and say
# so with a TypeError (an argument check, not dispatch).
OWN_API = {"PUM": ("uldp_jax.pum._estimate", "uldp_jax.pum._simulate")}  # PUM itself: uldp_jax.pum._mechanism


def test_no_isinstance_against_concrete_mechanisms():
    concrete = _concrete_mechanisms()
    assert {"GRR", "URAP", "USS", "HR", "PUM", "PUMUser", "GLUTF"} <= set(concrete)
    bad = []
    for m, tree in TREES.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                for name in _isinstance_targets(node):
                    if name in concrete and concrete[name] != m and m not in OWN_API.get(name, ()) \
                            and not _allowed("isinstance", m, name):
                        bad.append((m, node.lineno, name))
    assert bad == []


MECH_NAMES = {"mech", "m", "mechanism", "base", "cmn", "pilot_mech"}  # how generic code names a mechanism


def _capability_probes(tree: ast.Module) -> list[tuple[int, str]]:
    """``hasattr(<mech>, "x")`` and ``getattr(<mech>, "x", default)`` calls: (line, attribute)."""
    out = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("hasattr", "getattr")
                and len(node.args) >= 2 and isinstance(node.args[0], ast.Name) and node.args[0].id in MECH_NAMES
                and isinstance(node.args[1], ast.Constant)
                and (node.func.id == "hasattr" or len(node.args) == 3)):
            out.append((node.lineno, node.args[1].value))
    return out


def test_no_capability_probes_outside_mechanisms():
    homes = _mechanism_homes()  # a mechanism's own module may ask its inputs (PUM checks its base)
    bad = [(m, line, attr) for m, tree in TREES.items() if not m.startswith(f"{ROOT}.mechanisms") and m not in homes
           for line, attr in _capability_probes(tree) if not _allowed("probe", m, attr)]
    assert bad == []


@pytest.mark.parametrize("rule", ["importlib", "local-import", "name-dispatch", "isinstance", "layer", "probe"])
def test_allow_list_entries_name_real_modules(rule):
    for r, m, _ in ALLOWED:
        if r == rule:
            assert m in MODULES, m


def _violations() -> set[tuple[str, str, str]]:
    """Every (rule, module, detail) the checks find, allowed or not."""
    found = set()
    for m, tree in TREES.items():
        for node in _local_imports(tree):
            found.update(("local-import", m, t) for t in _resolve(m, node))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                if any(n.split(".")[0] == "importlib" for n in names):
                    found.add(("importlib", m, "uldp_jax.simulate"))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "__import__":
                found.add(("importlib", m, "__import__"))
        if _name_dispatch(tree):
            found.add(("name-dispatch", m, "*"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                found.update(("isinstance", m, name) for name in _isinstance_targets(node))
        found.update(("probe", m, attr) for _, attr in _capability_probes(tree))
    for m, targets in GRAPH.items():
        found.update(("layer", m, t) for t in targets)
    return found


def test_allow_list_is_minimal():
    """Every allowed entry still matches a violation: delete entries as their fixes land."""
    found = _violations()
    stale = sorted(e for e in ALLOWED if e not in found)
    assert stale == []


def test_the_checks_catch_what_they_forbid():
    src = ast.parse(
        "import importlib\n"
        "NAMES = ('GRR', 'UE')\n"
        "def f(m):\n"
        "    from uldp_jax import theory\n"
        "    if type(m).__name__ in NAMES or type(m).__name__ == 'URR':\n"
        "        return isinstance(m, ul.GRR)\n"
        "    return hasattr(mech, 'channel_matvec') or getattr(m, 'z_rule', 'max')\n")
    assert _capability_probes(src) == [(7, "channel_matvec"), (7, "z_rule")]
    assert _name_dispatch(src) == [5, 5]
    assert [n for n in _local_imports(src)]
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
    assert _reexport_only(ast.parse('"""doc"""\nfrom __future__ import annotations\nfrom a.b import *  # noqa\n'))
    assert not _reexport_only(ast.parse("from a import b\n\ndef f():\n    return b\n"))
    graph = {f"{MECH}.subset._uss": {f"{MECH}.transform._glutf", f"{MECH}.transform", f"{CORE}._base"},
             f"{CORE}._base": {f"{MECH}.rr"}, f"{MECH}.rr._urr": {f"{MECH}.rr._grr"}}
    assert sorted(_sibling_private_imports(graph)) == [(f"{CORE}._base", f"{MECH}.rr"),
                                                       (f"{MECH}.subset._uss", f"{MECH}.transform._glutf")]


# ---- the public line between subpackages (issue 47) -----------------------------------------------------------------

# Import edges into another subpackage's private modules: what that subpackage should export instead. A module of a
# subpackage ``S`` (``uldp_jax.S``'s package and every module below it) importing a module with an underscore part
# below another subpackage; the top-level private modules (``_validate``, ``_sizing``, ...) are shared
# infrastructure and not counted. This list may only shrink (issue 47's target: at most 20 edges).
PRIVATE_IMPORTS = {  # target private module -> the modules of other subpackages that import it (may only shrink)
    'checks._draws': ['_check'],  # + issues 50/53 (ul.audit_sampler, uldp_jax/checks/): to public names next
    'checks._estimator': ['_check'],  # + issues 50/53 (ul.audit_sampler, uldp_jax/checks/): to public names next
    'checks._leak': ['_check'],  # + issues 50/53 (ul.audit_sampler, uldp_jax/checks/): to public names next
    'checks._likelihood': ['_check'],  # + issues 50/53 (ul.audit_sampler, uldp_jax/checks/): to public names next
    'checks._report': ['_check'],  # + issues 50/53 (ul.audit_sampler, uldp_jax/checks/): to public names next
    'checks._sample': ['_check'],  # + issues 50/53 (ul.audit_sampler, uldp_jax/checks/): to public names next
    'engine._counts_path': ['uldp_jax'],
    'engine._engine': ['experiments._murakami_timing', 'studies._run'],
    'engine._kernels': ['pum._simulate', 'tuning._collab'],
    'engine._plan': ['pum._simulate', 'tuning._collab'],
    'engine._reports': ['pum._simulate'],
    'estimation._empirical': ['checks._estimator'],  # + issues 50/53 (ul.audit_sampler, uldp_jax/checks/): to public names next
    'estimation._packed': ['engine._reports', 'engine._reports_device'],
    'estimation._registry': ['pum._estimate', 'studies._methods'],
    'estimation._support': ['engine._reports', 'engine._reports_device'],
    'estimation._support_device': ['engine._reports_device'],
    'mechanisms.core._base': ['_check', 'privacy._audit', 'privacy._channel', 'privacy._hypothesis', 'pum._mechanism', 'studies._spec', 'testing', 'theory._exact', 'theory._families', 'theory._grid', 'theory._mse', 'tuning._optimize', 'tuning._tune'],  # + issues 50/53 (ul.audit_sampler, uldp_jax/checks/): to public names next
    'mechanisms.core._compact': ['checks._draws', 'engine._reports', 'engine._reports_device', 'estimation._em_reports', 'estimation._packed', 'estimation._support', 'estimation._support_device', 'uldp_jax'],  # + issues 50/53 (ul.audit_sampler, uldp_jax/checks/): to public names next
    'mechanisms.core._counts': ['engine._counts_path'],
    'mechanisms.core._delegate': ['pum._mechanism'],
    'mechanisms.core._estimation': ['checks._estimator', 'testing', 'theory._exact'],  # + issues 50/53 (ul.audit_sampler, uldp_jax/checks/): to public names next
    'mechanisms.core._family': ['theory._families', 'tuning._optimize', 'tuning._tune'],
    'mechanisms.core._grid_check': ['_check', 'privacy._audit', 'privacy._channel', 'pum._audit', 'studies._spec', 'theory._grid', 'theory._mse', 'tuning._tune'],  # + issues 50/53 (ul.audit_sampler, uldp_jax/checks/): to public names next
    'mechanisms.core._likelihood': ['checks._likelihood'],  # + issues 50/53 (ul.audit_sampler, uldp_jax/checks/): to public names next
    'mechanisms.core._nmse': ['theory', 'theory._mse'],
    'mechanisms.core._optima': ['theory', 'tuning._recommend'],
    'mechanisms.core._pure_uldp': ['theory'],
    'mechanisms.core._pytree': ['pum._mechanism', 'testing'],
    'mechanisms.core._records': ['checks._estimator', 'checks._leak', 'checks._likelihood', 'checks._sample', 'privacy._audit', 'privacy._channel', 'pum._mechanism', 'testing', 'theory._exact'],  # + issues 50/53 (ul.audit_sampler, uldp_jax/checks/): to public names next
    'mechanisms.core._registry': ['pum', 'uldp_jax'],
    'mechanisms.core._report_space': ['checks._estimator', 'checks._likelihood', 'privacy._channel', 'pum._mechanism', 'theory._exact', 'tuning._recommend'],  # + issues 50/53 (ul.audit_sampler, uldp_jax/checks/): to public names next
    'mechanisms.core._reports': ['checks._estimator', 'checks._likelihood', 'checks._sample', 'engine._layout', 'estimation._em', 'privacy._audit', 'privacy._channel', 'theory._grid'],  # + issues 50/53 (ul.audit_sampler, uldp_jax/checks/): to public names next
    'mechanisms.core._spec': ['privacy._audit', 'pum._estimate', 'pum._mechanism', 'theory._families'],  # + issues 50/53 (ul.audit_sampler, uldp_jax/checks/): to public names next
    'mechanisms.hadamard._forms': ['theory'],
    'mechanisms.hadamard._general_forms': ['experiments._hr_general'],
    'mechanisms.hadamard._matrices': ['privacy'],
    'mechanisms.subset._pgr': ['theory'],
    'mechanisms.subset._ubd_weights': ['theory'],
    'mechanisms.transform._nonpure_uldp': ['theory'],
    'mechanisms.wheel._wheel': ['tuning._recommend'],
    'privacy._audit': ['_check', 'pum._audit'],
    'privacy._channel': ['_check', 'checks._estimator', 'checks._likelihood', 'testing', 'theory._exact'],  # + issues 50/53 (ul.audit_sampler, uldp_jax/checks/): to public names next
    'privacy._empirical_eps': ['_audit_sampler', 'checks._leak'],  # + issues 50/53 (ul.audit_sampler, uldp_jax/checks/): to public names next
    'privacy._sampler_report': ['_audit_sampler', 'uldp_jax'],  # + issues 50/53 (ul.audit_sampler, uldp_jax/checks/): to public names next
    'pum._mechanism': ['data._pum_scenario'],
    'studies._population': ['experiments._murakami_study'],
    'theory._exact': ['tuning._recommend'],
    'theory._families': ['tuning._collab', 'tuning._optimize', 'tuning._tune'],
    'theory._mse': ['tuning._optimize', 'tuning._recommend', 'tuning._tune'],
}


def _subpackage(module: str) -> str | None:
    """``uldp_jax.estimation._em`` -> ``estimation``; a top-level module (``uldp_jax._api``, the root) -> None."""
    parts = module.split(".")
    top = ".".join(parts[:2])
    return parts[1] if len(parts) >= 2 and top in MODULES and _is_package(top) else None


def _private_imports(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    """``(importer, target)`` edges into another subpackage's private modules."""
    out = set()
    for m, targets in graph.items():
        for t in targets:
            private = any(part.startswith("_") for part in t.split(".")[2:])
            if private and _subpackage(t) is not None and _subpackage(m) != _subpackage(t):
                out.add((m, t))
    return out


def _short(module: str) -> str:
    return ROOT if _layer(module) == ROOT else module[len(ROOT) + 1:]


def test_no_new_private_cross_package_imports():
    found = {(_short(m), _short(t)) for m, t in _private_imports(GRAPH)}
    allowed = {(m, t) for t, ms in PRIVATE_IMPORTS.items() for m in ms}
    assert sorted(found - allowed) == [], "import the subpackage's public names instead"
    assert sorted(allowed - found) == [], "an allowed edge is gone: delete it from PRIVATE_IMPORTS"


# Size budgets and rounding rules have one owner, ``uldp_jax/_sizing.py``: a module-level upper-case number whose name
# says it is a size (bytes, rows, entries, chunk, block, ...) anywhere else is refused. The entries below predate the
# rule and move to _sizing as issue 47's sizing step lands; this list may only shrink.
SIZE_WORDS = ("BYTES", "ROWS", "ENTRIES", "CHUNK", "BLOCK", "BATCH", "SIZE", "WORDS", "CELLS", "SEGMENT", "COLUMNS",
              "LEN", "HASHES", "ITEMS", "MEMORY", "STEP")
SIZE_CONSTANTS = {
        "_validate": {"D_MAX"},
    "data._grid": {"GOWALLA_STEP"},
    "engine._plan": {"DEFAULT_BLOCK_SIZE"},  # simulate's block_size default: it fixes the key layout
    "mechanisms.core._binomial": {"INVERSION_STEPS"},
    "mechanisms.core._compact": {"AGG_ENTRIES", "CHUNK", "COMPACT_MIN_D", "LATE_BLOCK", "USER_BLOCK"},
    "mechanisms.core._hashing": {"MAX_CHANNEL_HASHES", "MAX_EXPLICIT_HASHES"},
    "mechanisms.core._pytree": {"_REPR_ITEMS"},
    "mechanisms.core._reports": {"MAX_CHANNEL_ENTRIES"},
    "mechanisms.hadamard._hadamard": {"MAX_HADAMARD_SIZE"},
    "mechanisms.hadamard._matrices": {"MAX_MATRIX_ENTRIES"},
    "mechanisms.rr._urr": {"TABLE_MAX_D"},
    "mechanisms.subset._ksubset": {"ONEHOT_MAX_WORDS"},
    "mechanisms.subset._ss": {"MAX_SS_CHANNEL_D"},
    "mechanisms.subset._pgr": {"CHUNK_POINTS"},  # issue 49: to _sizing with the sizing step (PGR, sketches, PI-RAPPOR)
    "mechanisms.hashing._sketch_forms": {"ROW_CHUNK_ENTRIES"},
    "mechanisms.unary._pi_rappor": {"CHUNK_ENTRIES"},
    "mechanisms.subset._ubd_weights": {"MAX_STEPS"},  # an iteration cap of uBD's weight solver (issue 49)
    "privacy._channel": {"MAX_GRID_ENTRIES"},
    # issues 50/53 (ul.audit_sampler, ul.check's leak/debias rows): to _sizing with the sizing step
    "_audit_draws": {"BATCH_REPORTS", "COUNT_CALL_CHUNKS", "COUNT_CHUNK", "HOST_BATCH", "MAX_CELLS"},
    "checks._estimator": {"AFFINE_COLUMNS"},
    "checks._leak": {"PAIR_CELLS"},
    "privacy._clopper_pearson": {"_STEPS"},
    "tuning._optimize": {"DEFAULT_STEPS"},
    "tuning._recommend": {"MAX_D"},
    "tuning._tune": {"AUDIT_MAX_ENTRIES"},
}


def _is_number(node: ast.AST) -> bool:
    """A numeric literal or arithmetic on them (``2**29``, ``-1.5``)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
    if isinstance(node, ast.BinOp):
        return _is_number(node.left) and _is_number(node.right)
    return isinstance(node, ast.UnaryOp) and _is_number(node.operand)


def _size_constants(tree: ast.Module) -> set[str]:
    """Module-level upper-case names bound to numbers that name a size (``SIZE_WORDS``, or ``..._D``: a domain)."""
    out = set()
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if (
            isinstance(node, ast.AnnAssign) and node.value is not None) else []
        for t in targets:
            name = t.id if isinstance(t, ast.Name) else ""
            bare = name.strip("_")
            if len(bare) > 1 and bare.isupper() and _is_number(node.value) and (
                    any(w in bare for w in SIZE_WORDS) or bare.endswith("_D") or bare.startswith("D_")):
                out.add(name)
    return out


def test_size_constants_live_in_sizing():
    found = {_short(m): names for m, tree in TREES.items() if m != f"{ROOT}._sizing"
             for names in [_size_constants(tree)] if names}
    new = {m: sorted(ns - SIZE_CONSTANTS.get(m, set())) for m, ns in found.items() if ns - SIZE_CONSTANTS.get(m, set())}
    assert new == {}, "size budgets and rounding rules belong in uldp_jax/_sizing.py"
    gone = {m: sorted(ns - found.get(m, set())) for m, ns in SIZE_CONSTANTS.items() if ns - found.get(m, set())}
    assert gone == {}, "a size constant moved: delete it from SIZE_CONSTANTS"


def test_the_public_line_checks_catch_what_they_forbid():
    tree = ast.parse("MAX_ROW_BYTES = 2**20\nCG_TOL = 1e-6\nNAMES = ('a',)\n_WIDE_D: int = 64\n")
    assert _size_constants(tree) == {"MAX_ROW_BYTES", "_WIDE_D"}
    graph = {f"{ROOT}.theory._mse": {f"{CORE}._base", f"{ROOT}._validate", f"{ROOT}.theory._exact", CORE},
             f"{ROOT}.estimation": {f"{ROOT}.estimation._em"}}
    assert _private_imports(graph) == {(f"{ROOT}.theory._mse", f"{CORE}._base")}
