"""What ``difimpact list`` shows of each experiment, written to ``catalogue.json`` beside this module so that the
command lists the experiments without importing them (and JAX). After editing an experiment's registration
(name, target, description, paper), write it again::

    python -m difimpact.papers.catalogue

Until then ``difimpact list`` still shows the registry as it is, by importing it (the file records a hash of
the sources it was written from). The command (:mod:`_difimpact_cli`) reads this module from its file, without
importing the package: at its top it imports the standard library only.
"""

import hashlib
import json
import pathlib

PATH = pathlib.Path(__file__).with_name("catalogue.json")


def fingerprint(folder: pathlib.Path = PATH.parent) -> str:
    """A hash of the papers' source files (every ``*.py`` under `folder`, by their paths in it): the catalogue is
    that of the registry they define while it matches."""
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*.py")):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def stored(path: pathlib.Path = PATH) -> list[dict] | None:
    """The experiments of ``catalogue.json`` when it was written from the present sources, else ``None``."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data["experiments"] if data.get("fingerprint") == fingerprint(path.parent) else None


def entries() -> list[dict]:
    """The registered experiments in order: name, paper (author–year), paper_full, target, description."""
    from difimpact.papers.registry import REGISTRY  # absolute: the command loads this module from its file

    return [{"name": e.name, "paper": e.reference.short() if e.reference else "",
             "paper_full": str(e.reference) if e.reference else "", "target": e.target, "description": e.description}
            for e in REGISTRY.values()]


def write(path: pathlib.Path = PATH) -> None:
    """Write the catalogue of the registry, with the hash of the sources it comes from."""
    data = {"fingerprint": fingerprint(path.parent), "experiments": entries()}
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":  # pragma: no cover
    write()
    print(f"wrote {PATH}")
