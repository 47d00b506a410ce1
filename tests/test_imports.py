"""The import graph of ``privsample``: no cycle, and lower layers never import higher ones.

Every ``import`` statement of every module under ``privsample/`` is read with ``ast``, at any depth (imports
inside functions count: they are cycles all the same, only deferred). ``from privsample.x import y`` is an
import of the module ``privsample.x.y`` when there is one (a ``.py`` file, a package, or a C extension), else
of ``privsample.x``; relative imports are resolved the same way. Importing ``privsample.x.y`` also runs the
``__init__`` of ``privsample.x``; that implicit import is not an edge (a package may assemble its modules).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "privsample"

# Lowest first: a module may import modules of its own layer or of a lower one, never of a higher one. Each
# entry names a module or package (with everything under it); the package ``privsample`` itself (its
# ``__init__``, the public API) is its own layer.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    (
        "foundations",
        (
            "privsample._version",
            "privsample.errors",
            "privsample.checks",
            "privsample.io",
            "privsample.datasets",
            "privsample.progress",
        ),
    ),
    ("privacy", ("privsample.privacy",)),
    ("data", ("privsample.data",)),
    ("marginals", ("privsample.marginals",)),
    ("mechanisms", ("privsample.synth", "privsample.cube", "privsample.samplers", "privsample.mbde")),
    ("evaluation", ("privsample.evaluation",)),
    ("public API", ("privsample", "privsample.api")),
    ("cli", ("privsample.cli",)),
]

# Known exceptions (exact edges); the tests fail when one no longer occurs, so that it is deleted here then.
PENDING_CYCLES: set[frozenset[str]] = set()
PENDING_LAYER_EDGES: set[tuple[str, str]] = set()


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_module(name: str) -> bool:
    """``name`` is a module or package of the source tree (C extensions by their ``.c`` source or build)."""
    path = ROOT.parent.joinpath(*name.split("."))
    if path.with_suffix(".py").is_file() or (path / "__init__.py").is_file():
        return True
    return path.parent.is_dir() and any(p.suffix in (".c", ".so", ".pyd") for p in path.parent.glob(path.name + ".*"))


def imports_of(path: Path) -> set[str]:
    """The privsample modules that the file at ``path`` imports, anywhere in it."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "privsample")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            if source.split(".")[0] != "privsample":
                continue
            for alias in node.names:
                found.add(f"{source}.{alias.name}" if is_module(f"{source}.{alias.name}") else source)
    found.discard(name)
    return found


def import_graph() -> dict[str, set[str]]:
    return {module_name(p): imports_of(p) for p in sorted(ROOT.rglob("*.py"))}


def find_cycles(graph: dict[str, set[str]]) -> list[tuple[frozenset[str], list[str]]]:
    """The strongly connected components of more than one module (Tarjan), each with one cycle through it."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                components.append(comp)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [(frozenset(comp), _cycle_through(graph, comp)) for comp in components]


def _cycle_through(graph: dict[str, set[str]], comp: set[str]) -> list[str]:
    """One cycle inside the strongly connected ``comp``: a shortest path from its first module back to it."""
    start = min(comp)
    parent: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v] & comp):
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(parent[path[-1]])
                    return [*reversed(path), start]
                if w not in parent:
                    parent[w] = v
                    nxt.append(w)
        frontier = nxt
    raise AssertionError(f"not a cycle: {sorted(comp)}")


def layer_of(module: str) -> int | None:
    """Index in LAYERS of the most specific entry naming ``module`` or a package holding it."""
    best, depth = None, -1
    for i, (_, names) in enumerate(LAYERS):
        for n in names:
            matches = module == n if n == "privsample" else (module == n or module.startswith(n + "."))
            if matches and n.count(".") > depth:
                best, depth = i, n.count(".")
    return best


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph()


def test_the_graph_sees_imports_at_any_depth(graph):
    """The checker itself: an import inside a function is an edge, a name imported from a package is not
    a module, a C extension is."""
    assert "privsample.synth.partition" in graph["privsample.synth.numpy_md"]  # inside functions
    assert "privsample.privacy" in graph["privsample.api.cube"]  # ``from privsample.privacy import Accountant``
    assert "privsample.synth.splitpath" in graph["privsample.synth.partition"]
    assert "privsample.synth" not in graph["privsample.synth.partition"]


def test_no_import_cycle(graph):
    cycles = [(comp, c) for comp, c in find_cycles(graph) if comp not in PENDING_CYCLES]
    assert not cycles, "import cycles:\n" + "\n".join(
        " -> ".join(c) + ("" if len(comp) == len(c) - 1 else f" (all tied together: {', '.join(sorted(comp))})")
        for comp, c in cycles
    )


def test_pending_cycles_still_exist(graph):
    """An allowance that no longer matches a cycle is removed from PENDING_CYCLES."""
    cycles = {comp for comp, _ in find_cycles(graph)}
    assert PENDING_CYCLES <= cycles, f"no longer cycles, remove them: {PENDING_CYCLES - cycles}"


def test_every_module_has_a_layer(graph):
    missing = sorted(m for m in graph if layer_of(m) is None)
    assert not missing, f"modules in no layer of LAYERS: {missing}"


def test_lower_layers_never_import_higher_ones(graph):
    bad = []
    for module, deps in sorted(graph.items()):
        for dep in sorted(deps):
            mine, theirs = layer_of(module), layer_of(dep)
            if theirs is not None and mine is not None and theirs > mine and (module, dep) not in PENDING_LAYER_EDGES:
                bad.append(f"{module} ({LAYERS[mine][0]}) imports {dep} ({LAYERS[theirs][0]})")
    assert not bad, "imports of a higher layer:\n" + "\n".join(bad)


def test_pending_layer_edges_still_exist(graph):
    """An allowance that no longer matches an import is removed from PENDING_LAYER_EDGES."""
    gone = sorted(e for e in PENDING_LAYER_EDGES if e[1] not in graph.get(e[0], set()))
    assert not gone, f"these imports are gone, remove them from PENDING_LAYER_EDGES: {gone}"


# No module imports another module's underscored names. ``from privsample.x import _name`` (at any depth,
# relative or absolute), and ``x._name`` where ``x`` was bound by ``import privsample.x`` / ``import ... as x`` /
# ``from privsample import x``, are read; the name looked at is the one in the other module, not the local one.
# Allowed, by design:
# - a private *module* imported from inside its own package, as ``privsample._version`` is by the package; a
#   private module imported from outside its package is not allowed;
# - ``from privsample.x import name as _name`` / ``import privsample.x as _x``: aliasing a public name to a
#   private local one keeps the other module's private names private (``from x import _name as _alias`` does not);
# - dunder names (``__version__``, ``__all__``) are not private.
# Known exceptions (importing module, defining module, name), each to be removed with the import; the test fails
# when one no longer occurs.
PENDING_PRIVATE_IMPORTS: set[tuple[str, str, str]] = set()


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_module_allowed(importer: str, module: str) -> bool:
    """Importing ``module`` is allowed unless a private component of it lies outside the importer's packages."""
    parts = module.split(".")
    for i, part in enumerate(parts):
        if is_private(part):
            package = ".".join(parts[:i])
            if not (importer == package or importer.startswith(package + ".")):
                return False
    return True


def private_imports(source: str, name: str, is_package: bool) -> list[tuple[str, str, int]]:
    """The other modules' private names (or private modules) imported by the module ``name`` whose text is
    ``source``: (defining module, name, line)."""
    package = name if is_package else name.rpartition(".")[0]
    tree = ast.parse(source)
    found: list[tuple[str, str, int]] = []
    bound: dict[str, str] = {}  # local name -> privsample module it was bound to by an import

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] != "privsample":
                    continue
                if not private_module_allowed(name, alias.name):
                    found.append((alias.name.rpartition(".")[0], alias.name.rpartition(".")[2], node.lineno))
                if alias.asname:
                    bound[alias.asname] = alias.name
                else:
                    bound["privsample"] = "privsample"
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if module.split(".")[0] != "privsample":
                continue
            for alias in node.names:
                full = f"{module}.{alias.name}"
                if is_module(full):
                    bound[alias.asname or alias.name] = full
                    if not private_module_allowed(name, full):
                        found.append((module, alias.name, node.lineno))
                elif is_private(alias.name) and module != name:
                    found.append((module, alias.name, node.lineno))

    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        chain = [node.attr]
        value = node.value
        while isinstance(value, ast.Attribute):
            chain.append(value.attr)
            value = value.value
        if not isinstance(value, ast.Name) or value.id not in bound:
            continue
        module = bound[value.id]
        for attr in reversed(chain):  # descend through submodules; the first non-module attribute is the name
            if is_module(f"{module}.{attr}"):
                module = f"{module}.{attr}"
                continue
            if is_private(attr) and module != name:
                found.append((module, attr, node.lineno))
            break
    return sorted(set(found), key=lambda f: (f[2], f[0], f[1]))


def all_private_imports() -> dict[tuple[str, str, str], list[int]]:
    found: dict[tuple[str, str, str], list[int]] = {}
    for path in sorted(ROOT.rglob("*.py")):
        name = module_name(path)
        for module, attr, line in private_imports(path.read_text(encoding="utf-8"), name, path.name == "__init__.py"):
            found.setdefault((name, module, attr), []).append(line)
    return found


def test_the_private_import_check_itself():
    """Multi-line and nested imports, relative imports, attribute use through a module alias; the allowed forms."""
    source = """
from privsample.cube.qp import (
    exact_box,
    _helper,
)
from privsample import __version__
from privsample.data.encoding import value_text as _value_text
from privsample.synth import _splitpath
import privsample.cube.walsh as walsh
from privsample.cube import lp

def f():
    from .qp import _Inner
    from . import _graphcells
    return walsh._table, lp.solve, privsample.cube.qp._rate

import privsample.cube.qp
"""
    found = {(m, a) for m, a, _ in private_imports(source, "privsample.cube.x", is_package=False)}
    assert found == {
        ("privsample.cube.qp", "_helper"),
        ("privsample.cube.qp", "_Inner"),
        ("privsample.cube.walsh", "_table"),
        ("privsample.cube.qp", "_rate"),
        ("privsample.synth", "_splitpath"),  # a private name of another package
        ("privsample.cube", "_graphcells"),  # not a module of privsample.cube: a private name of its __init__
    }
    # a private module imported from inside its own package
    assert private_imports("from . import _version\n", "privsample.progress", False) == []
    assert private_imports("from privsample import _version\n", "privsample.cli.app", False) == []
    assert private_imports("def _f():\n    pass\n\nx = _f\n", "privsample.cube.qp", False) == []


def test_no_module_imports_another_modules_private_names():
    found = all_private_imports()
    bad = [
        f"{importer} (line {', '.join(map(str, lines))}) uses {attr} of {module}"
        for (importer, module, attr), lines in sorted(found.items())
        if (importer, module, attr) not in PENDING_PRIVATE_IMPORTS
    ]
    assert not bad, "imports of another module's private names:\n" + "\n".join(bad)


def test_pending_private_imports_still_exist():
    """An allowance that no longer matches an import is removed from PENDING_PRIVATE_IMPORTS."""
    gone = sorted(PENDING_PRIVATE_IMPORTS - set(all_private_imports()))
    assert not gone, f"these imports are gone, remove them from PENDING_PRIVATE_IMPORTS: {gone}"
