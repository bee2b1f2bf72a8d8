"""What an experiment of ``difimpact reproduce`` is: one table or figure of a paper, computed as flat rows (the
CSV), figures and the paper's statements beside ours (:class:`Check`).

An experiment knows nothing about files: :mod:`difimpact.papers.report` writes ``DIR/NAME/NAME.csv``, the PNGs,
the experiment's ``result.json`` and ``report.md``, which :mod:`difimpact._cli` calls after each experiment. The
experiments the command runs, and their order, are :data:`difimpact.papers.registry.EXPERIMENTS`.
"""

import dataclasses
from typing import Callable

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

    def __call__(self, quick: bool, progress: Callable) -> Outcome:
        return self.run(quick, progress)


def experiment(name: str, seed: str, target: str, description: str, units: str = "",
               reference: Reference | None = None) -> Callable[[Callable], Experiment]:
    """Decorator making ``run(quick, progress) -> Outcome`` the :class:`Experiment` `name`; `reference` defaults
    to the paper ``PAPERS[seed]``. The experiment still runs when called as the function was."""

    def make(run) -> Experiment:
        return Experiment(name, seed, target, description, run, units,
                          reference if reference is not None else PAPERS.get(seed))

    return make


def check_close(statement: str, paper: float, ours: float, rtol: float, unit: str = "") -> Check:
    """A numerical check: ``|ours − paper| ≤ rtol |paper|``, with the relative error shown."""
    err = abs(ours - paper) / abs(paper) if paper else abs(ours)
    return Check(statement, f"{paper:.6g} {unit}".strip(), f"{ours:.6g} {unit} (rel. err. {err:.2%})".strip(),
                 bool(err <= rtol))


def check_that(statement: str, paper: str, ours: str, ok) -> Check:
    return Check(statement, paper, ours, bool(ok))
