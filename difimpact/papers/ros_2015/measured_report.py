"""The figures and the report table of the measured heel strikes (:mod:`.measured_heel_strikes`): ξ per blocking case
beside the paper's and the default posture's, Ros et al. 2015's kinematic assumptions (eq. 3) against the data, and the
markdown of the subjects, the frame sensitivity and the postures."""

import matplotlib.pyplot as plt
import numpy as np

from . import measured_data as gait_data
from .measured_data import PRE_IMPACT
from .paper import PAPER_AT_REF_PCT


def figure_xi(rows, cases):
    fig, ax = plt.subplots(figsize=(8.5, 4.6))
    x = np.arange(len(cases))
    for i, case in enumerate(cases):
        if case in PAPER_AT_REF_PCT:
            ax.fill_between([i - 0.4, i + 0.4], PAPER_AT_REF_PCT[case] - 0.5, PAPER_AT_REF_PCT[case] + 0.5,
                            color="0.8", label="Ros et al. 2015, ω0 = −1 rad/s (§4.3)" if i == 1 else None)
    default = [100 * next(r["xi"] for r in rows if r["trial"] == "default" and r["blocked"] == c) for c in cases]
    ax.plot(x, default, "ks", label="library default posture, ω0 = −1 rad/s")
    groups = sorted({(r["model"], r["trial"]) for r in rows if r["trial"] != "default"})
    for k, (model, trial) in enumerate(groups):
        for frame, marker in zip(PRE_IMPACT, ("x", "o")):
            ys = [100 * np.array([r["xi"] for r in rows if (r["model"], r["trial"], r["blocked"], r["rel_frame"])
                                  == (model, trial, c, frame)]) for c in cases]
            for i, y in enumerate(ys):
                ax.plot(np.full(y.size, i + 0.08 * (k - len(groups) / 2)), y, marker, color=f"C{k}", mfc="none",
                        label=f"{trial}, {model}, frame {frame}" if i == 0 else None)
    ax.set_xticks(x, [("nothing" if c == "none" else c) + " blocked" for c in cases])
    ax.set_ylabel("energy index ξ [%]")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    ax.set_title("Heel strikes measured in the lab through Ros et al. 2015's impact map")
    fig.tight_layout()
    return fig


def figure_assumptions(trials):
    columns = (("d_knee_flex_trail", "trailing knee flexion rate [°/s]"),
               ("heel_vx_lead_rel_ground_mps", "leading heel v_x [m/s]"),
               ("mth_vx_trail_rel_ground_mps", "trailing MH v_x [m/s]"))
    fig, axes = plt.subplots(1, 3, figsize=(14, 4.0))
    for ax, (column, label) in zip(axes, columns):
        for k, trial in enumerate(trials):
            for j, event in enumerate(dict.fromkeys(fr.event for fr in gait_data.frames(trial))):
                frames = [fr for fr in gait_data.frames(trial) if fr.event == event]
                ax.plot([fr.rel_frame for fr in frames], [fr.values[column] for fr in frames], "-o", ms=3,
                        color=f"C{k}", alpha=1 - 0.25 * j, label=f"{trial} {event}")
        ax.axhline(0.0, color="k", ls="--", lw=0.8)
        ax.axvline(0.0, color="0.5", lw=0.8)
        ax.set_xlabel("frame relative to the 20 N crossing")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7)
    fig.suptitle("Ros et al. 2015's assumptions (eq. 3: each dashed line is zero) against the data")
    fig.tight_layout()
    return fig


def markdown(rows, trials, cases, knee) -> str:
    subjects = gait_data.subjects()
    lines = ["**Data** (`difimpact/data/gait/PROVENANCE.md`): heel strikes taken where the leading foot's vertical "
             "force first crosses 20 N; the pre-impact state is read 1 and 2 frames before that frame. Licences: "
             "the OpenSim models repository (treadmill trial, model) has no licence file (the model's credits "
             "say CC BY 3.0); opensim-core (overground) and BioMAC-Sim-Toolbox (Winter's curves) are Apache-2.0.",
             "", "| trial | subject | mass [kg] | stature [m] | how |", "|---|---|---|---|---|"]
    lines += [f"| {t} | {subjects[t].label} | {subjects[t].mass:g} | {subjects[t].stature:g} | {subjects[t].how} |"
              for t in trials]
    lines += ["", "ξ [%] by pre-impact frame (−2 / −1) — the sensitivity to that choice:", "",
              "| trial | event | model | " + " | ".join(cases) + " |", "|---|---|---|" + "---|" * len(cases)]
    keys = dict.fromkeys((r["trial"], r["event"], r["model"]) for r in rows if r["trial"] != "default")
    for trial, event, model in keys:
        cells = []
        for c in cases:
            by = {r["rel_frame"]: 100 * r["xi"] for r in rows
                  if (r["trial"], r["event"], r["model"], r["blocked"]) == (trial, event, model, c)}
            cells.append(" / ".join(f"{by[f]:.1f}" if np.isfinite(by[f]) else "no impact" for f in PRE_IMPACT))
        lines.append(f"| {trial} | {event} | {model} | " + " | ".join(cells) + " |")
    gap = {m: np.array([r["trail_ankle_gap"] for r in rows if r["model"] == m and r["trial"] != "default"])
           for m in dict.fromkeys(r["model"] for r in rows)}
    lines += ["", "The postures keep the measured angles except the trailing ankle, solved so that the model's MH "
              "touches the ground: " + "; ".join(f"{m} {np.nanmin(g):+.1f} … {np.nanmax(g):+.1f}°" for m, g in
                                                   gap.items() if np.isfinite(g).any())
              + " of dorsiflexion against the measured (the seven-link foot's landmarks are Dumas's, not the "
              "subject's). The model's heel moves with the heel marker (column `cal_vx_model` beside "
              "`heel_vx_lead`), which the state was not built from. The treadmill trial's "
              "torso (tilt + lumbar, about 16° forward) carries the model and marker artefact noted in the provenance."]
    if knee:
        lines.append(f"The OpenSim model's knees translate with the knee angle (splines); they are held at the "
                     f"trial's mean angles (R {np.degrees(knee['R']):.1f}°, L {np.degrees(knee['L']):.1f}°), its "
                     "lumbar joint blocked in every case, and its contact points are the heel and toe markers on the "
                     "sole line.")
    return "\n".join(lines)
