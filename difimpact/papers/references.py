"""The publications the experiments reproduce: each experiment carries a :class:`Reference`, shown by
``difimpact list`` and in ``report.md``."""

import dataclasses


@dataclasses.dataclass(frozen=True)
class Reference:
    """A publication: `authors` as ``"J. M. Font-Llagunes"`` (surname last), `venue` the journal or proceedings
    with volume and pages."""

    authors: tuple[str, ...]
    title: str
    venue: str
    year: int
    doi: str = ""

    def short(self) -> str:
        """``Surname YEAR``, ``Surname & Surname YEAR`` or ``Surname et al. YEAR``."""
        surnames = [a.split()[-1] for a in self.authors]
        names = (" & ".join(surnames) if len(surnames) <= 2 else f"{surnames[0]} et al.")
        return f"{names} {self.year}"

    def __str__(self) -> str:
        authors = ", ".join(self.authors[:-1]) + (" & " if len(self.authors) > 1 else "") + self.authors[-1]
        doi = f", doi:{self.doi}" if self.doi else ""
        return f"{authors} ({self.year}). {self.title}. {self.venue}{doi}."


PAPERS: dict[str, Reference] = {  # the seed papers, by the seed number the experiments use
    "000": Reference(("J. M. Font-Llagunes", "A. Barjau", "R. Pàmies-Vilà", "J. Kövecses"),
                     "Dynamic analysis of impact in swing-through crutch gait using impulsive and continuous contact "
                     "models", "Multibody System Dynamics 28(3), 257–282", 2012, "10.1007/s11044-011-9300-9"),
    "001": Reference(("J. M. Font-Llagunes", "J. Kövecses", "R. Pàmies-Vilà", "A. Barjau"),
                     "Comparison of impulsive and compliant contact models for impact analysis in biomechanical "
                     "multibody systems", "1st Joint International Conference on Multibody System Dynamics, "
                     "Lappeenranta", 2010),
    "002": Reference(("J. Ros", "J. M. Font-Llagunes", "A. Plaza", "J. Kövecses"),
                     "Dynamic considerations of heel-strike impact in human gait", "Multibody System Dynamics",
                     2015, "10.1007/s11044-015-9460-0"),
    "003": Reference(("J. M. Font", "J. Kövecses"),
                     "Effects of mass distribution and configuration on the energetic losses at impacts of bipedal "
                     "walking systems", "ASME International Mechanical Engineering Congress and Exposition, paper "
                     "IMECE2008-66684", 2008),
}
