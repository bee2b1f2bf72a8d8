"""MkDocs hooks of the difimpact site.

- ``api/*.md``: the placeholder ``{{ api: TOPIC }}`` becomes one ``::: difimpact.NAME`` block per public name of
  the ``difimpact`` namespace on that topic (``_TOPICS``), so that the reference follows the package (a renamed
  or added name appears without editing the pages).
- Docstrings use a few Sphinx roles (``:class:`X```); they are shown as plain code.
"""

import importlib
import re
import types

# The API reference by topic: each page ``api/TOPIC.md`` holds the placeholder ``{{ api: TOPIC }}``, which becomes
# one ``::: difimpact.NAME`` block per public name of that topic, grouped under headings. A name's topic is the
# first rule that matches: its name (the results and solutions of the entry points go on one page), then the
# private module that defines it. A public name no rule places goes to ``api/index.md`` under "Other", so that
# a new name is never missing from the reference.
_RESULT_NAME = re.compile(r"^(.*Solution|.*Results?|RESULTS|History|failures|ImpulsePath"
                          r"|FrictionalRegime|GaitBranch)$")
_TOPICS = (  # (topic, heading, module prefixes)
    ("models", "Built-in models", ("difimpact._models",)),
    ("models", "Planar trees: your own model", ("difimpact._tree",)),
    ("models", "Anthropometry", ("difimpact._anthropometry",)),
    ("models", "Drawing", ("difimpact._draw",)),
    ("impact", "Impulsive maps", ("difimpact._impact",)),
    ("contact", "Contacts and contact laws", ("difimpact._contact",)),
    ("compliant", "The compliant phase", ("difimpact._compliant",)),
    ("compliant", "Hybrid phases and events", ("difimpact._hybrid",)),
    ("gaits", "Periodic gaits", ("difimpact._gait",)),
    ("optimisation", "Objectives", ("difimpact._objectives",)),
    ("optimisation", "Sweeps", ("difimpact._sweep",)),
    ("optimisation", "Optimisation", ("difimpact._optimise", "difimpact._autodiff")),
    ("optimisation", "Worked optimisation problems", ("difimpact._problem", "difimpact.papers")),
    ("optimisation", "Nonlinear programs", ("difimpact._nlp",)),
    ("powered", "Powered gaits", ("difimpact._powered",)),
    ("powered", "The seven-link human walking", ("difimpact._human_gait",)),
    ("powered", "Multi-phase gaits: your own layout", ("difimpact._collocation",)),
    ("importers", "Importing and exporting models", ("difimpact._io",)),
    ("index", "Compilation", ("difimpact._cache",)),
)
_RESULT_HEADINGS = (  # results page: (heading, module prefixes)
    ("Impulsive maps", ("difimpact._impact",)),
    ("The compliant phase and hybrid phases", ("difimpact._compliant", "difimpact._hybrid")),
    ("Periodic gaits", ("difimpact._gait",)),
    ("Optimisation and nonlinear programs", ("difimpact._optimise", "difimpact._nlp", "difimpact._problem")),
    ("Powered gaits", ("difimpact._powered",)),
    ("The library's base enumeration", ("difimpact._results",)),
)
_PLACEHOLDER = re.compile(r"\{\{\s*api:\s*([a-z]+)\s*\}\}")


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


def topic_of(package, name: str) -> tuple[str, str]:
    """``(topic, heading)`` of a public name: the page of the API reference it goes on and the heading there."""
    module = _defining_module(package, name)
    if _RESULT_NAME.match(name):
        heading = next((h for h, prefixes in _RESULT_HEADINGS if module.startswith(prefixes)), "Other results")
        return "results", heading
    return next(((topic, h) for topic, h, prefixes in _TOPICS if module.startswith(prefixes)), ("index", "Other"))


def api_markdown(topic: str, package_name: str = "difimpact") -> str:
    """The ``::: difimpact.NAME`` blocks of one topic, under their headings (in the order of ``_TOPICS``)."""
    package = importlib.import_module(package_name)
    groups: dict[str, list[str]] = {}
    for name in public_names(package):
        page, heading = topic_of(package, name)
        if page == topic:
            groups.setdefault(heading, []).append(name)
    order = [h for t, h, _ in _TOPICS if t == topic] + [h for h, _ in _RESULT_HEADINGS] + ["Other results", "Other"]
    parts = []
    for heading in dict.fromkeys(order):
        if heading in groups:
            parts.append(f"## {heading}\n")
            parts += [f"::: {package_name}.{name}\n    options:\n      heading_level: 3\n" for name in groups[heading]]
    return "\n".join(parts)


def on_page_markdown(markdown, page, config, files):
    if page.file.src_uri.startswith("api/"):
        return _PLACEHOLDER.sub(lambda m: api_markdown(m.group(1)), markdown)
    return markdown


_ROLE = re.compile(r":(?:class|func|meth|data|attr|mod|exc|obj):(<code>)~?")


def on_page_content(html, page, config, files):
    return _ROLE.sub(r"\1", html)
