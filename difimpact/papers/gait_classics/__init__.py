"""The classic gaits the library's gait tools are checked against, one module per paper:
:mod:`.mcgeer_1990` (the rimless wheel's closed form), :mod:`.garcia_1998` (the simplest walker),
:mod:`.goswami_1998` (the compass gait's period doubling), :mod:`.kuo_2002` (push-off against a stance-leg
torque) and :mod:`.kelly_2017` (the five-link biped's optimal gait)."""
