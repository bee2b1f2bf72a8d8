"""Font-Llagunes, Kövecses, Pàmies-Vilà & Barjau (2010), *Comparison of impulsive and compliant contact models for
impact analysis in biomechanical multibody systems*: the compass walker with circular feet and the crutch walker,
impulsive beside compliant.

- :mod:`.impacts`: the models, both contact models and the comparison helpers shared by the figures;
  :mod:`.compass` and :mod:`.crutch` the rows of each model's figures.
- :mod:`.fig2` (step length), :mod:`.fig3` (foot radius), :mod:`.fig4` (leg angle), :mod:`.fig5` (hip angle);
  :mod:`.round_feet`: round feet in a passive gait.
- :mod:`.optimisation`: :func:`compass_foot_radius`.
"""
