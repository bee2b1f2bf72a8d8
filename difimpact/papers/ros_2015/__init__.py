"""Ros, Font-Llagunes, Plaza & Kövecses (2015), *Dynamic considerations of heel-strike impact in human gait*,
Multibody Syst Dyn: the seven-link human's heel strike, its energy index ξ and partial joint blocking.

- :mod:`.paper`: the paper's cases, ranges and values; :mod:`.heel_strikes`: the heel strikes of the figures.
- :mod:`.fig3` (push-off), :mod:`.fig6` (torso angle), :mod:`.fig8` (partial ankle blocking);
  :mod:`.measured_heel_strikes` (§4.3, eq. 3, from the lab's trials: :mod:`.measured_data`,
  :mod:`.measured_states`, :mod:`.measured_report`); :mod:`.statements` (the statements at any pre-impact state).
- :mod:`.predicted_gait` and :mod:`.tracked_gait`: §4's blocking cases at the heel strike of an optimal gait
  (:mod:`.gait_report`).
- :mod:`.optimisation`: :func:`ankle_blocking`.
"""
