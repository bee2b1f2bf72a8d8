"""Experiments of `difimpact reproduce`: one per table or figure of the seed papers.

An experiment computes flat rows (the CSV), draws its figures and checks the paper's statements. It knows
nothing about files: :mod:`difimpact._experiments.report` writes ``DIR/NAME/NAME.csv``, the PNGs, the
experiment's ``result.json`` and ``report.md``, which :mod:`difimpact._cli` calls after each experiment.
"""

import dataclasses
from typing import Callable, Sequence

from .references import PAPERS, Reference

Row = dict[str, float | int | str]


@dataclasses.dataclass(frozen=True)
class Check:
    """A statement or number of the paper beside ours."""

    statement: str
    paper: str
    ours: str
    ok: bool


@dataclasses.dataclass
class Outcome:
    """What an experiment produced: rows, figures (name → matplotlib figure), checks, and optional
    extra markdown (e.g. a side-by-side table)."""

    rows: list[Row]
    figures: dict[str, object] = dataclasses.field(default_factory=dict)
    checks: list[Check] = dataclasses.field(default_factory=list)
    markdown: str = ""


@dataclasses.dataclass(frozen=True)
class Experiment:
    """A registered experiment. ``run(quick, progress)`` returns an :class:`Outcome`; ``progress`` wraps an
    iterable with a progress bar (``tqdm`` in the CLI). `reference` is the publication it reproduces, `target`
    the table or figure in it, `seed` the publication's number among the seed papers (empty for others)."""

    name: str
    seed: str
    target: str
    description: str
    run: Callable[[bool, Callable], Outcome]
    units: str = ""
    reference: Reference | None = None


REGISTRY: dict[str, Experiment] = {}


def experiment(name: str, seed: str, target: str, description: str, units: str = "",
               reference: Reference | None = None):
    """Decorator registering ``run(quick, progress) -> Outcome`` under ``name``; `reference` defaults to the
    seed paper ``PAPERS[seed]``."""

    def register(run):
        if name in REGISTRY:
            raise ValueError(f"experiment {name!r} registered twice")
        REGISTRY[name] = Experiment(name, seed, target, description, run, units,
                                    reference if reference is not None else PAPERS.get(seed))
        return run

    return register


def check_close(statement: str, paper: float, ours: float, rtol: float, unit: str = "") -> Check:
    """A numerical check: ``|ours − paper| ≤ rtol |paper|``, with the relative error shown."""
    err = abs(ours - paper) / abs(paper) if paper else abs(ours)
    return Check(statement, f"{paper:.6g} {unit}".strip(), f"{ours:.6g} {unit} (rel. err. {err:.2%})".strip(),
                 bool(err <= rtol))


def check_that(statement: str, paper: str, ours: str, ok) -> Check:
    return Check(statement, paper, ours, bool(ok))


def select(names: Sequence[str]) -> list[Experiment]:
    """Experiments by name, all when ``names`` is empty; unknown names raise ``ValueError``."""
    unknown = [n for n in names if n not in REGISTRY]
    if unknown:
        raise ValueError(f"unknown experiment(s) {unknown}; run `difimpact list` to see the "
                         f"{len(REGISTRY)} available: {sorted(REGISTRY)}")
    return [REGISTRY[n] for n in names] if names else list(REGISTRY.values())
