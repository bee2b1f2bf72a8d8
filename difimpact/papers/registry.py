"""The experiments of ``difimpact reproduce``, in the order the command runs and lists them: the four papers
difimpact is built from, each table and figure in the paper's order, then the gait classics from the simplest
model to the seven-link human. The order is this tuple's, whatever order the modules are imported in."""

from collections.abc import Sequence

from .experiment import Experiment
from .font_kovecses_2008 import figs2_4, figs5_7, powered_gait
from .font_llagunes_2010 import fig2, fig4, fig5, round_feet
from .font_llagunes_2010 import fig3 as fig3_2010
from .font_llagunes_2012 import fig3 as fig3_2012
from .font_llagunes_2012 import figs4_12, figs13_17, table3
from .gait_classics import garcia_1998, goswami_1998, kelly_2017, kuo_2002, mcgeer_1990
from .ros_2015 import fig3 as fig3_2015
from .ros_2015 import fig6, fig8, measured_heel_strikes, predicted_gait, tracked_gait

EXPERIMENTS: tuple[Experiment, ...] = (
    # Font-Llagunes, Barjau, Pàmies-Vilà & Kövecses 2012: the crutch tip's impact
    fig3_2012.crutch_critical_friction,
    figs4_12.crutch_grid,
    figs13_17.crutch_impulse_space,
    table3.crutch_table3,
    # Font-Llagunes, Kövecses, Pàmies-Vilà & Barjau 2010: impulsive beside compliant
    fig2.compass_step_length,
    fig3_2010.compass_foot_radius,
    fig4.crutch_leg_angle,
    fig5.crutch_hip_angle,
    # Ros, Font-Llagunes, Plaza & Kövecses 2015: heel strike of the seven-link human
    fig3_2015.heelstrike_pushoff,
    measured_heel_strikes.heelstrike_measured,
    fig6.heelstrike_torso,
    fig8.heelstrike_ankle_blocking,
    # Font & Kövecses 2008: mass distribution and configuration of a biped with torso
    figs2_4.biped_step_length,
    figs5_7.biped_torso,
    # gaits, the simplest models first
    mcgeer_1990.rimless_wheel,
    garcia_1998.simplest_walker,
    goswami_1998.compass,
    round_feet.round_feet,
    kuo_2002.kuo_pushoff,
    kelly_2017.five_link,
    powered_gait.biped_torso_powered,
    predicted_gait.gait_human_predicted,
    tracked_gait.gait_human_tracking,
)

REGISTRY: dict[str, Experiment] = {e.name: e for e in EXPERIMENTS}
if len(REGISTRY) != len(EXPERIMENTS):  # pragma: no cover - a name given twice
    raise ValueError(f"experiment names registered twice: {[e.name for e in EXPERIMENTS]}")


def select(names: Sequence[str]) -> list[Experiment]:
    """Experiments by name, all when ``names`` is empty; unknown names raise ``ValueError``."""
    unknown = [n for n in names if n not in REGISTRY]
    if unknown:
        raise ValueError(f"unknown experiment(s) {unknown}; run `difimpact list` to see the {len(REGISTRY)} available: "
                         f"{sorted(REGISTRY)}")
    return [REGISTRY[n] for n in names] if names else list(REGISTRY.values())
