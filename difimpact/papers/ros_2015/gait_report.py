"""What the seven-link human's predicted and tracked gaits share in the report: the comparison with Winter's
measured cycle (RMS, fraction within ±1 SD, the vertical force's two peaks), the figure of joint angles and ground
forces beside the measured mean ± 1 SD, the stick-figure sequence and the heel strike, and Ros et al.'s
statements evaluated around the gait's own heel strike."""

import functools

import matplotlib.pyplot as plt
import numpy as np

from difimpact import draw_model
from difimpact._human_gait import tracking as tr

from ..plotting import panel_grid
from . import statements as ros_statements
from .heel_strikes import paper_human
from .paper import OMEGA0_REF

JOINTS = ("hip", "knee", "ankle")
STICK = ("MH_R", "CAL_R", "A_R", "MH_R", "A_R", "K_R", "H_R", "LJC", "H_R", "K_L", "A_L", "MH_L", "CAL_L", "A_L")


@functools.cache
def reference() -> tr.MeasuredGait:
    """Winter's normal-cadence cycle, mean ± SD (:func:`~difimpact._human_gait.tracking.winter_normal`)."""
    return tr.winter_normal()


def peaks(p, fy) -> tuple[float, float, float]:
    """The vertical force's first peak, mid-stance trough and second peak [body weights] over the stance (the
    cycle's first 60 %): the largest value before and after the smallest one between 10 and 50 %."""
    mid = (p >= 10.0) & (p <= 50.0)
    i = np.flatnonzero(mid)[np.argmin(fy[mid])]
    stance = p <= 60.0
    return float(np.max(fy[:i + 1])), float(fy[i]), float(np.max(fy[i:][stance[i:]]))


def measures(gait) -> dict:
    """A gait against Winter's cycle (:func:`~difimpact._human_gait.tracking.agreement`): ``rms_*`` [deg; body
    weights], ``within_*`` [fraction of the cycle], and the vertical force's two peaks beside the measured ones."""
    ref = reference()
    agree = tr.agreement(gait, ref)
    p, y = tr.cycle(gait)
    mean = np.asarray(ref.at(p)[0])
    row = {f"rms_{j}": agree[j]["rms"] for j in JOINTS}
    row.update({f"within_{j}": agree[j]["within"] for j in JOINTS})
    row.update({"rms_Fx": agree["Fx"]["rms"], "rms_Fy": agree["Fy"]["rms"], "within_Fx": agree["Fx"]["within"],
                "within_Fy": agree["Fy"]["within"]})
    for key, fy in (("model", y[:, 4]), ("measured", mean[:, 4])):
        row.update(dict(zip((f"Fy_peak1_{key}", f"Fy_trough_{key}", f"Fy_peak2_{key}"), peaks(p, fy))))
    return row


def two_peaks(row) -> bool:
    """The vertical force has the two peaks of walking: a mid-stance trough 0.05 body weights below both."""
    return row["Fy_trough_model"] < min(row["Fy_peak1_model"], row["Fy_peak2_model"]) - 0.05


def versus_measured(gait, label: str):
    """Joint angles and ground forces over the cycle beside the measured mean ± 1 SD."""
    ref = reference()
    p, y = tr.cycle(gait)
    mean, sd = (np.asarray(a) for a in ref.at(p))
    scale = np.array([180.0 / np.pi] * 3 + [1.0, 1.0])
    names = ("hip (thigh vs torso) [°, clockwise]", "knee flexion [°]", "ankle [°, clockwise]",
             "F_x on the right foot [body weights]", "F_y on the right foot [body weights]")
    panels = []
    for j, name in enumerate(names):
        m, s = mean[:, j] * scale[j], sd[:, j] * scale[j]
        panels.append((name, [(p, y[:, j] * scale[j], label, {"color": "C0"}),
                              (p, m, "measured mean (Winter)", {"color": "k", "ls": "--"}),
                              (p, m + s, "measured ± 1 SD", {"color": "0.5", "ls": ":"}),
                              (p, m - s, None, {"color": "0.5", "ls": ":"})]))
    return panel_grid(panels, f"The seven-link human's {label} beside Winter's normal cadence", "% of the gait cycle "
                      "(right heel strike to right heel strike)", ncols=3,
                      note="Second half of the cycle: the step's left leg (a symmetric gait).")


def sticks_and_strike(gait, human, q_minus, impulses, title: str):
    """Left: the step as a stick-figure sequence (right heel strike → left heel strike); right: the model at the
    gait's own heel strike `q_minus` (legs exchanged: the right leg leads) with `impulses` ``{point: (x, y)}``
    [N s], those of the leading heel and the trailing metatarsal heads."""
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(12.0, 4.6), layout="constrained",
                                  gridspec_kw={"width_ratios": (2.2, 1.0)})
    tree = human.tree()
    t = np.asarray(gait.t)
    for k, i in enumerate(np.linspace(0, t.size - 1, 9).astype(int)):
        pts = np.array([np.asarray(tree.point_position(gait.q[i], n)) for n in STICK])
        ax.plot(pts[:, 0], pts[:, 1], "-", color=plt.cm.viridis(k / 8), lw=1.2, label=f"{t[i]:.2f} s")
    ax.axhline(0.0, color="0.4", lw=0.8)
    ax.set_aspect("equal")
    ax.set_title("stick figures, right heel strike → left heel strike (time after the strike)")
    ax.legend(fontsize=7, ncols=3)
    draw_model(human, q_minus, ax=ax2, contacts=("CAL_R", "MH_L"), labels=False, title=title,
               arrows=impulses)
    return fig


def statements(q_minus, qd_minus, label: str, quick: bool) -> tuple[list[dict], str, list]:
    """Ros et al.'s statements on the heel strike (push-off, torso, ankle blocking; :mod:`.ros_statements`) around
    the gait's own heel strike ``(q⁻, q̇⁻)`` (right leg leading) beside the paper's posture: CSV rows of kind
    ``statement``, the markdown table and the gait's checks."""
    human = paper_human()
    ours = ros_statements.statements_at(q_minus, qd_minus, label, quick)
    default = ros_statements.statements_at(*human.heel_strike_state(OMEGA0_REF), "default posture", quick)
    rows = [{"kind": "statement", "statement": c.statement, "holds": bool(c.ok), "value": c.ours,
             "holds_default_posture": bool(d.ok)} for c, d in zip(ours, default)]
    held = sum(r["holds"] for r in rows)
    text = (f"**Ros et al.'s heel-strike statements around the {label}'s own heel strike** ({held} of {len(rows)} "
            f"hold; {sum(r['holds_default_posture'] for r in rows)} at the paper's posture with eq. 3's velocities):"
            "\n\n" + ros_statements.table({"default posture": default, label: ours}))
    return rows, text, ours
