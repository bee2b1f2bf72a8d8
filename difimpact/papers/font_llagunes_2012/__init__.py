"""Font-Llagunes, Barjau, Pàmies-Vilà & Kövecses (2012), *Dynamic analysis of impact in swing-through crutch gait
using impulsive and continuous contact models*, Multibody Syst Dyn 28(3), 257–282: the crutch tip's impact, the
impulsive map with Coulomb friction beside the compliant Hunt–Crossley contact.

- :mod:`.crutch_tip`: the tip's materials and contact (§5, eqs. 35–38).
- :mod:`.impacts`: both models at the pre-impact states of §5, shared by the figures.
- :mod:`.fig3` (critical friction), :mod:`.figs4_12` (the grid of §5.1–5.3), :mod:`.figs13_17` (normal-impulse
  space, §5.4), :mod:`.table3` (stiffness and damping, §5.5, Figs. 18–21).
- :mod:`.optimisation`: :func:`crutch_peak_force`.
"""
