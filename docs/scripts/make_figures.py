"""Draw the figures of the docs pages into ``docs/images/`` (committed; rerun after a model or a map changes):

    python docs/scripts/make_figures.py

- ``model-*.png``: each built-in model's stick figure at its reference pre-impact state (``di.draw_model``), with
  its named points, contact points and generalised coordinates q1 … qn, for [Models and conventions](../conventions.md);
- ``impulse-space-path.png``: the crutch tip's impact integrated in the normal impulse (Font-Llagunes et al.
  2012, §3), for the impulsive page;
- ``compliant-force-velocity.png``: the contact forces and the tip's velocities during the compliant phase of
  the same impact, for the compliant page.
"""

import math
import pathlib

import jax

jax.config.update("jax_enable_x64", True)
import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import difimpact as di  # noqa: E402

OUT = pathlib.Path(__file__).resolve().parents[1] / "images"
SAVE = dict(dpi=110, bbox_inches="tight", metadata={"Software": None})


def models() -> None:
    cases = {
        "crutch-walker": (di.CrutchWalker(), lambda m: m.pre_impact_state(q3=math.radians(12), q5dot=-0.2)[0], ("P", "Q"),
                          "CrutchWalker at q3 = 12°, q4 = 10°, q5 = 150° (crutch tip Q on the ground)"),
        "compass-gait": (di.CompassGait(R=0.25), lambda m: m.pre_impact_state(math.radians(15))[0], (),
                         "CompassGait, R = 0.25 m, at heel strike, q3 = 15°"),
        "biped-with-torso": (di.BipedWithTorso(), lambda m: m.pre_impact_state(math.radians(30))[0], (),
                             "BipedWithTorso at heel strike, q4 = 30°, torso upright"),
        "seven-link-human": (di.SevenLinkHuman(), lambda m: m.heel_strike_state()[0], ("CAL_R", "MH_L"),
                             "SevenLinkHuman at heel strike (75 kg, 1.77 m)"),
    }
    for name, (model, state, contacts, title) in cases.items():
        fig, ax = plt.subplots(figsize=(5.5, 4.5))
        di.draw_model(model, state(model), ax=ax, contacts=contacts, title=title, coordinates=True)
        fig.savefig(OUT / f"model-{name}.png", **SAVE)
        plt.close(fig)


def impulse_space() -> None:
    walker = di.CrutchWalker()
    q, qdot = walker.pre_impact_state(q3=math.radians(12), q5dot=-0.2)
    hit = di.frictional_impact(walker, q, qdot, "Q", friction=di.Coulomb(0.75))
    path = di.impulse_space_path(hit)
    P_n = np.asarray(path.normal_impulse)
    v = np.asarray(path.velocity)
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 3.8))
    a.plot(P_n, v[:, 0], label="normal $v_n(Q)$")
    a.plot(P_n, v[:, 1], label="tangential $v_t(Q)$")
    a.axhline(0, color="0.6", lw=0.8)
    a.set(xlabel="normal impulse $P_n$ [N s]", ylabel="velocity of the tip Q [m/s]")
    a.legend()
    b.plot(P_n, np.asarray(path.tangential_impulse), color="C2")
    b.set(xlabel="normal impulse $P_n$ [N s]", ylabel="tangential impulse $P_t$ [N s]")
    fig.suptitle(f"Crutch tip, μ = 0.75, q3 = 12°, q̇5 = −0.2 rad/s: {hit.regime_name} "
                 f"(μ_c = {float(hit.mu_c):.3f})")
    fig.tight_layout()
    fig.savefig(OUT / "impulse-space-path.png", **SAVE)
    plt.close(fig)


def compliant() -> None:
    from difimpact.papers.font_llagunes_2012.crutch_tip import CHI, ELASTOMER_ON_CONCRETE, TIP_RADIUS

    walker = di.CrutchWalker()
    q, qdot = walker.pre_impact_state(q3=math.radians(12), q5dot=-0.2)
    law = di.HuntCrossley(di.hertz_stiffness(TIP_RADIUS, *ELASTOMER_ON_CONCRETE), CHI)
    sol = di.compliant_impact(walker, q, qdot, "Q", normal=law, friction=di.Coulomb(0.75), history=True)
    h = sol.history
    t = np.asarray(h.t)[:, 0] if np.ndim(h.t) > 1 else np.asarray(h.t)
    keep = np.isfinite(t)
    t = t[keep] * 1e3

    def col(x):
        x = np.asarray(x)
        return (x[:, 0] if x.ndim > 1 else x)[keep]

    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 3.8))
    a.plot(t, col(h.normal_force) / 1e3, label="normal $F_n$")
    a.plot(t, col(h.tangential_force) / 1e3, label="tangential $F_t$")
    a.set(xlabel="time [ms]", ylabel="contact force at Q [kN]")
    a.legend()
    b.plot(t, col(h.normal_velocity), label="normal $v_n(Q)$")
    b.plot(t, col(h.tangential_velocity), label="tangential $v_t(Q)$")
    b.axhline(0, color="0.6", lw=0.8)
    b.set(xlabel="time [ms]", ylabel="velocity of the tip Q [m/s]")
    b.legend()
    fig.suptitle("Compliant phase of the same impact (Hunt–Crossley, Hertz stiffness, exact Coulomb), to the end of "
                 f"compression: P_n = {float(sol.normal_impulse[0]):.3f} N s")
    fig.tight_layout()
    fig.savefig(OUT / "compliant-force-velocity.png", **SAVE)
    plt.close(fig)


if __name__ == "__main__":
    OUT.mkdir(exist_ok=True)
    models()
    impulse_space()
    compliant()
