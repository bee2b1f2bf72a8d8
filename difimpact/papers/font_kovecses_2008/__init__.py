"""Font & Kövecses (2008), *Effects of mass distribution and configuration on the energetic losses at impacts of
bipedal walking systems*, IMECE2008-66684: the straight-legged biped with torso.

- :mod:`.impacts`: the heel strikes of the figures; :mod:`.figs2_4` (step length), :mod:`.figs5_7` (torso).
- :mod:`.powered_gait`: §4.2 (ξ_I against μ_T) in powered gaits.
- :mod:`.optimisation`: :func:`biped_torso`.
"""
