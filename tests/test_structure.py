"""The shape of the package, read from its source with ``ast`` (nothing is imported): the import graph of
``difimpact/`` (module-level and function-level imports) has no cycle, the models import neither the impact maps
nor the gaits, no module imports a private (``_``-prefixed) name from another subpackage, no function is
longer than 80 lines nor any module longer than 350, and the layers drawn in ``docs/design.md`` are this graph."""

import ast
import pathlib
import warnings

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "difimpact"
DESIGN = PACKAGE.parent / "docs" / "design.md"
# Imported from every layer, so not drawn in the layers of docs/design.md.
KERNELS = ("_check", "_custom_types", "_linalg", "_results", "_validation")
MAX_FUNCTION, MAX_MODULE = 80, 350
# Over the limits, each to be split (and removed from here); a new offender fails.
KNOWN_LONG: set[str] = set()


def _modules() -> dict[str, pathlib.Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _base(name: str, path: pathlib.Path, node: ast.ImportFrom) -> str:
    """The module that ``node`` (in module `name` at `path`) imports from, as a dotted name."""
    if not node.level:
        return node.module or ""
    package = (name if path.name == "__init__.py" else name.rpartition(".")[0]).split(".")
    return ".".join(package[: len(package) - node.level + 1] + ([node.module] if node.module else []))


def _imported(name: str, path: pathlib.Path, tree: ast.Module) -> set[str]:
    """The modules of the package that `name` imports anywhere in its source (``from . import x`` names the
    submodule ``x``; ``from .x import y`` the module ``x``, or its submodule ``y``)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = _base(name, path, node)
            subs = {f"{base}.{a.name}" for a in node.names} & MODULES.keys()
            found |= subs if len(subs) == len(node.names) else subs | {base}
    return {m for m in found if m in MODULES and m != name}


def _subpackage(module: str) -> str:
    """The subpackage of `module`: ``difimpact._gait`` for ``difimpact._gait.stride``; ``difimpact`` for the
    top-level modules (``difimpact._validation``), the package's shared helpers."""
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 2 or MODULES.get(module, PACKAGE).name == "__init__.py" else parts[0]


def _private_imports(name: str, path: pathlib.Path, tree: ast.Module) -> list[str]:
    """``importer: name from module`` for each private name that `name` imports from a subpackage not its own."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = _base(name, path, node)
            owner = _subpackage(base)
            if base.startswith("difimpact") and owner != "difimpact" and owner != _subpackage(name):
                found += [f"{name}: {a.name} from {base}" for a in node.names
                          if a.name.startswith("_") and not a.name.startswith("__") and f"{base}.{a.name}" not in MODULES]
    return found


def _parse(path: pathlib.Path) -> ast.Module:
    with warnings.catch_warnings():  # a docstring's invalid escape is another test's business
        warnings.simplefilter("ignore")
        return ast.parse(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def trees() -> dict[str, ast.Module]:
    return {name: _parse(path) for name, path in MODULES.items()}


@pytest.fixture(scope="module")
def graph(trees) -> dict[str, set[str]]:
    return {name: _imported(name, MODULES[name], tree) for name, tree in trees.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each a cycle of imports."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while not component or component[-1] != v:
                component.append(stack.pop())
                on_stack.discard(component[-1])
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_graph_is_read():
    """The reader sees the arrows it must judge (so that an empty graph cannot pass)."""
    tree = _parse(MODULES["difimpact._gait.heel_strike"])
    arrows = _imported("difimpact._gait.heel_strike", MODULES["difimpact._gait.heel_strike"], tree)
    assert {"difimpact._impact.ground", "difimpact._models.walker", "difimpact._models.simplest_walker"} <= arrows
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycle(graph):
    assert _cycles(graph) == []


def test_models_import_no_impact_map_and_no_gait(graph):
    """Models describe bodies and points; impact maps and gaits are functions of a model, never the reverse."""
    up = [(a, b) for a, targets in graph.items() if a.startswith("difimpact._models")
          for b in targets if b.startswith(("difimpact._impact", "difimpact._gait"))]
    assert up == []


def test_no_private_name_from_another_subpackage(trees):
    """A subpackage's ``_``-prefixed names are its own: another subpackage uses its public names (the hybrid
    engine's ``EVENT_SHIFT``, not a private constant of ``_hybrid.engine``). The package's top-level helper modules
    (``difimpact._validation``…) are shared."""
    assert _private_imports("difimpact._gait.x", PACKAGE / "_gait" / "x.py",
                            ast.parse("from .._hybrid.engine import _ARM\nfrom .stride import _STRIKE")) == [
        "difimpact._gait.x: _ARM from difimpact._hybrid.engine"]
    found = [f for name, tree in trees.items() for f in _private_imports(name, MODULES[name], tree)]
    assert found == []


def test_sizes(trees):
    """No function over 80 lines (docstring included), no module over 350, but the known ones, which shrink."""
    long = set()
    for name, tree in trees.items():
        if len(MODULES[name].read_text(encoding="utf-8").splitlines()) > MAX_MODULE:
            long.add(name)
        long |= {f"{name}:{node.name}" for node in ast.walk(tree)
                 if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and node.end_lineno - node.lineno + 1 > MAX_FUNCTION}
    assert long <= KNOWN_LONG, f"over {MAX_FUNCTION} lines a function or {MAX_MODULE} a module: {long - KNOWN_LONG}"


def _unit(module: str) -> str:
    """The unit of the layer drawing: a subpackage or top-level module (``_gait``), ``difimpact`` for the root."""
    return module.split(".")[1] if "." in module else module


def layers(graph: dict[str, set[str]]) -> str:
    """The layers of ``docs/design.md`` from the module graph: each unit with the units it imports (kernels
    left out), from the top, a unit's layer one above the highest it imports (kernels are layer 0)."""
    arrows: dict[str, set[str]] = {}
    for a, targets in graph.items():
        arrows.setdefault(_unit(a), set())
        arrows[_unit(a)] |= {_unit(b) for b in targets} - {_unit(a)}
    depth: dict[str, int] = {}

    def layer(u):
        if u not in depth:
            depth[u] = 0 if u in KERNELS else 1 + max((layer(v) for v in arrows[u]), default=0)
        return depth[u]

    lines = []
    for u in sorted(arrows, key=lambda u: (-layer(u), u)):
        if u not in KERNELS:
            targets = " ".join(sorted(arrows[u] - set(KERNELS))) or "(kernels only)"
            lines.append(f"{layer(u):>2}  {u:<15}→ {targets}")
    return "\n".join(lines + [f" 0  {'  '.join(KERNELS)}"])


def test_design_notes_draw_the_import_graph(graph):
    """``docs/design.md`` draws the layers from the import graph (the block after its marker line)."""
    text = DESIGN.read_text(encoding="utf-8")
    marker = "<!-- layers: the output of tests/test_structure.py:layers -->"
    assert marker in text
    drawn = text.split(marker, 1)[1].split("```text\n", 1)[1].split("```", 1)[0].rstrip("\n")
    assert drawn == layers(graph), f"redraw the layers of docs/design.md as:\n{layers(graph)}"

