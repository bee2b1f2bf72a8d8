"""What ``difimpact list`` shows of each experiment, written to ``catalogue.json`` beside this module so that the
command lists the experiments without importing them (and JAX). After editing an experiment's registration
(name, target, description, paper), write it again::

    python -m difimpact._experiments.catalogue

Until then ``difimpact list`` still shows the registry as it is, by importing it (the file records a hash of
the sources it was written from).
"""

import json
import pathlib

from . import REGISTRY

PATH = pathlib.Path(__file__).with_name("catalogue.json")


def entries() -> list[dict]:
    """The registered experiments in order: name, paper (author–year), paper_full, target, description."""
    return [{"name": e.name, "paper": e.reference.short() if e.reference else "",
             "paper_full": str(e.reference) if e.reference else "", "target": e.target, "description": e.description}
            for e in REGISTRY.values()]


def write(path: pathlib.Path = PATH) -> None:
    """Write the catalogue of the registry, with the hash of the sources it comes from."""
    from _difimpact_cli import fingerprint

    data = {"fingerprint": fingerprint(pathlib.Path(__file__).parent), "experiments": entries()}
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":  # pragma: no cover
    write()
    print(f"wrote {PATH}")
