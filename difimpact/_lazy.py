"""Public names imported on first use: ``import difimpact`` loads the models, the impact maps and the contact laws,
and leaves the parts that need diffrax or optax (the compliant phase, the gaits, the optimisation) until a name of
theirs is first read (PEP 562's module ``__getattr__``), so that a first impact is not kept waiting by libraries it
does not use.

The names are written as ordinary imports inside ``if TYPE_CHECKING:`` blocks of the package's ``__init__.py``,
where editors, type checkers and the API docs read them; :func:`table` reads the same statements from the file's
syntax tree, so that each name is written once."""

import ast
import importlib
import pathlib
import pkgutil


def _type_checking(node: ast.stmt) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def table(init_file: str) -> dict[str, tuple[str, str]]:
    """``{public name: (relative module, attribute)}`` of the relative imports inside the ``if TYPE_CHECKING:``
    blocks at the top level of `init_file`. ``O(lines)``, once per process."""
    tree = ast.parse(pathlib.Path(init_file).read_text(encoding="utf-8"))
    names: dict[str, tuple[str, str]] = {}
    for block in filter(_type_checking, tree.body):
        for node in block.body:
            if isinstance(node, ast.ImportFrom) and node.level:
                module = "." * node.level + (node.module or "")
                names.update({a.asname or a.name: (module, a.name) for a in node.names})
    return names


def load(package: str, namespace: dict, lazy: dict[str, tuple[str, str]], name: str):
    """The value of the lazy `name`, imported and kept in the package's `namespace` (later reads are plain)."""
    module, attribute = lazy[name]
    value = getattr(importlib.import_module(module, package), attribute)
    namespace[name] = value
    return value


def submodules(path) -> frozenset[str]:
    """The names of the modules and subpackages in the package folder(s) `path` (its ``__path__``)."""
    return frozenset(m.name for m in pkgutil.iter_modules(list(path)))
