"""MkDocs hooks of the difimpact site.

- ``api.md``: the placeholder ``{{ api }}`` becomes one ``::: difimpact.NAME`` block per public name of the
  ``difimpact`` namespace, grouped by the private module that defines it, so that the reference follows the
  package (a renamed or added name appears without editing the page).
- Docstrings use a few Sphinx roles (``:class:`X```); they are shown as plain code.
"""

import importlib
import re
import types

_SECTIONS = (  # (module prefix, section title), first match wins; the rest goes under "Other"
    ("difimpact._models", "Models"),
    ("difimpact._tree", "Planar trees"),
    ("difimpact._io", "Importing and exporting models"),
    ("difimpact._anthropometry", "Anthropometry"),
    ("difimpact._impact", "Impulsive maps"),
    ("difimpact._contact", "Contact laws"),
    ("difimpact._compliant", "Compliant phase"),
    ("difimpact._hybrid", "Hybrid phases and events"),
    ("difimpact._gait", "Periodic gaits"),
    ("difimpact._objectives", "Objectives"),
    ("difimpact._sweep", "Sweeps"),
    ("difimpact._optimise", "Optimisation"),
    ("difimpact._examples", "Worked optimisation problems"),
    ("difimpact._problems", "Worked optimisation problems"),
    ("difimpact._io", "Importing and exporting models"),
    ("difimpact._draw", "Drawing"),
)


def public_names(package) -> list[str]:
    """Public names of ``package``: ``__all__`` if it has one, otherwise every name without a leading
    underscore that is not a module."""
    names = getattr(package, "__all__", None)
    if names is None:
        names = [n for n in vars(package) if not n.startswith("_")
                 and not isinstance(getattr(package, n), types.ModuleType)]
    return sorted(names, key=str.lower)


def _defining_module(package, name: str) -> str:
    obj = getattr(package, name)
    module = getattr(obj, "__module__", None)
    if isinstance(module, str) and module.startswith(package.__name__ + "."):
        return module
    for mod_name, mod in sorted(vars(package).items()):  # constants: find the private module holding them
        if isinstance(mod, types.ModuleType) and mod_name.startswith("_"):
            for sub_name in dir(mod):
                sub = getattr(mod, sub_name)
                if isinstance(sub, types.ModuleType) and getattr(sub, name, None) is obj:
                    return sub.__name__
            if getattr(mod, name, None) is obj:
                return mod.__name__
    return ""


def api_markdown(package_name: str = "difimpact") -> str:
    package = importlib.import_module(package_name)
    groups: dict[str, list[str]] = {}
    for name in public_names(package):
        module = _defining_module(package, name)
        title = next((t for prefix, t in _SECTIONS if module.startswith(prefix)), "Other")
        groups.setdefault(title, []).append(name)
    order = list(dict.fromkeys(t for _, t in _SECTIONS)) + ["Other"]
    parts = []
    for title in order:
        if title in groups:
            parts.append(f"## {title}\n")
            parts += [f"::: {package_name}.{name}\n" for name in groups[title]]
    return "\n".join(parts)


def on_page_markdown(markdown, page, config, files):
    if page.file.src_uri == "api.md":
        return markdown.replace("{{ api }}", api_markdown())
    return markdown


_ROLE = re.compile(r":(?:class|func|meth|data|attr|mod|exc|obj):(<code>)~?")


def on_page_content(html, page, config, files):
    return _ROLE.sub(r"\1", html)
