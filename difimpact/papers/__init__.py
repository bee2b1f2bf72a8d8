"""The papers difimpact reproduces, one folder per paper, one module per table or figure:

- :mod:`.font_llagunes_2012`: Font-Llagunes, Barjau, Pàmies-Vilà & Kövecses (2012), *Dynamic analysis of impact in
  swing-through crutch gait using impulsive and continuous contact models*, Multibody Syst Dyn 28.
- :mod:`.font_llagunes_2010`: Font-Llagunes, Kövecses, Pàmies-Vilà & Barjau (2010), *Comparison of impulsive and
  compliant contact models for impact analysis in biomechanical multibody systems*.
- :mod:`.ros_2015`: Ros, Font-Llagunes, Plaza & Kövecses (2015), *Dynamic considerations of heel-strike impact in
  human gait*, Multibody Syst Dyn.
- :mod:`.font_kovecses_2008`: Font & Kövecses (2008), *Effects of mass distribution and configuration on the
  energetic losses at impacts of bipedal walking systems*, IMECE2008-66684.
- :mod:`.gait_classics`: McGeer (1990), Garcia et al. (1998), Goswami et al. (1998), Kuo (2002), Kelly (2017).

Each experiment (:class:`.experiment.Experiment`) computes the rows, figures and checks of one table or figure;
:mod:`.registry` lists them in the order ``difimpact reproduce`` runs them and :mod:`.report` writes their files.
A paper's worked optimisation problems are in its ``optimisation`` module (re-exported as
``difimpact.compass_foot_radius`` …). The papers use the library through its public names only; the library
never imports them, and importing this package imports no experiment (nor matplotlib).

The papers' constants:

- :data:`KELLY_GUESS`: Kelly's (2017) post-impact guess, the default start of :func:`~difimpact.kelly_gait`.
- :data:`DUMAS_2007_MALE`, :data:`DUMAS_2007_FEMALE` (Dumas et al. 2007) and :data:`WINTER_2009`
  (Winter 2009): the anthropometric tables of :func:`~difimpact.scale_segments` and
  :class:`~difimpact.SevenLinkHuman` (also ``difimpact.DUMAS_2007_MALE`` …, which the library uses).
"""

from difimpact import DUMAS_2007_FEMALE, DUMAS_2007_MALE, WINTER_2009
from difimpact._powered.walkers import KELLY_GUESS

__all__ = ["DUMAS_2007_FEMALE", "DUMAS_2007_MALE", "KELLY_GUESS", "WINTER_2009"]
