"""Heel strikes measured in the lab (package data ``difimpact/data/gait``, see its ``PROVENANCE.md``), and the
pre-impact states they give the seven-link human and the treadmill subject's own OpenSim model.

Each trial's CSV holds, for every heel strike (the first 20 N of vertical force under the leading foot) and the
five frames on each side, the planar joint angles and their rates (degrees, counter-clockwise seen from the
subject's right), the pelvis velocity relative to the ground and marker velocities of the leading heel and the
trailing metatarsal heads.
"""

import csv
import functools
import importlib.resources
import math
import xml.etree.ElementTree as ET
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from difimpact import HeelStrikePosture, SevenLinkHuman, from_osim

DATA = importlib.resources.files("difimpact") / "data" / "gait"
TRIALS = {"treadmill": "heelstrike_treadmill_gait10dof18musc_subject01.csv",
          "overground": "heelstrike_overground_rajagopal2016.csv",
          "winter": "heelstrike_winter_normal.csv"}
OSIM = "gait10dof18musc_subject01.osim"
PRE_IMPACT = (-2, -1)  # the frames read as pre-impact states: before the one nearest the 20 N crossing


class Subject(NamedTuple):
    label: str
    mass: float
    stature: float
    hip: tuple[float, float] | None  # hip-joint centre in the pelvis frame [m], for its velocity
    how: str


class Frame(NamedTuple):
    """One frame of one heel strike: `values` maps the CSV's columns to floats (NaN where empty)."""

    trial: str
    event: str
    rel_frame: int
    values: dict


@functools.cache
def subjects() -> dict[str, Subject]:
    out = {}
    with (DATA / "subjects.csv").open() as f:
        for r in csv.DictReader(f):
            hip = None if not r["hip_in_pelvis_x_m"] else (float(r["hip_in_pelvis_x_m"]),
                                                           float(r["hip_in_pelvis_y_m"]))
            out[r["trial"]] = Subject(r["label"], float(r["mass_kg"]), float(r["stature_m"]), hip, r["how"])
    return out


@functools.cache
def frames(trial: str) -> tuple[Frame, ...]:
    """Every frame of `trial`; Winter's two events are one curve shifted by half a cycle, so only its first."""
    out = []
    with (DATA / TRIALS[trial]).open() as f:
        for r in csv.DictReader(f):
            values = {k: float(v) if v not in ("", None) else math.nan for k, v in r.items()
                      if k not in ("source", "event", "leading_leg", "Fy_unit")}
            out.append(Frame(trial, r["event"], int(r["rel_frame"]), values | {"lead": r["leading_leg"]}))
    if trial == "winter":
        out = [fr for fr in out if fr.event == out[0].event]
    return tuple(out)


def _or_zero(x: float) -> float:
    return 0.0 if math.isnan(x) else x


def seven_link_state(human: SevenLinkHuman, frame: Frame, subject: Subject):
    """``(q, q̇⁻)`` of the seven-link human in the frame's posture and velocities, the leading leg as the model's
    right leg. Absolute angles (counter-clockwise): torso ``tilt + lumbar``, thighs ``tilt + hip flexion``,
    shanks minus the knee flexion, feet plus the dorsiflexion (no pelvis data: tilt and lumbar 0). The
    posture puts the leading heel on the ground and solves the trailing ankle so that the trailing MH touches
    it (:meth:`~difimpact.SevenLinkHuman.heel_strike_posture`). The joint rates are the measured ones; the base
    velocity makes the hip-joint centre move as measured (horizontal: ``hipjc_vx``; vertical: the pelvis
    origin's plus ``ω_tilt × r_hip``)."""
    v = frame.values
    rad = math.radians
    tilt, lumbar, d_tilt, d_lumbar = (_or_zero(v[k]) for k in ("pelvis_tilt", "lumbar_ext", "d_pelvis_tilt",
                                                                  "d_lumbar_ext"))
    posture = HeelStrikePosture(rad(tilt + lumbar), rad(tilt + v["hip_flex_lead"]), -rad(v["knee_flex_lead"]),
                                rad(v["ankle_dorsi_lead"]), rad(tilt + v["hip_flex_trail"]), -rad(v["knee_flex_trail"]))
    q = human.heel_strike_posture(posture=posture)
    torso_rate = rad(d_tilt + d_lumbar)
    rates = []
    for leg in ("lead", "trail"):
        rates += [-(rad(d_tilt + v[f"d_hip_flex_{leg}"]) - torso_rate), rad(v[f"d_knee_flex_{leg}"]),
                  -rad(v[f"d_ankle_dorsi_{leg}"])]
    rates = jnp.asarray([-torso_rate] + rates, dtype=q.dtype)
    vx = v["hipjc_vx_rel_ground_mps"] if not math.isnan(v["hipjc_vx_rel_ground_mps"]) else v[
        "pelvis_vx_rel_ground_mps"]
    vy = _or_zero(v["pelvis_vy_mps"])
    if subject.hip is not None:  # ω × r: the hip's vertical velocity is the pelvis origin's plus ω r_x
        c, s = math.cos(rad(tilt)), math.sin(rad(tilt))
        vy += rad(d_tilt) * (c * subject.hip[0] - s * subject.hip[1])
    jac = human.point_jacobian(q, "H_R")
    base = jnp.asarray([vx, vy], dtype=q.dtype) - jac[:, 2:] @ rates
    return q, jnp.concatenate([base, rates])


@functools.cache
def osim_contacts() -> dict[str, tuple[str, tuple[float, float, float]]]:
    """Heel and metatarsal-head contact points of the OpenSim model, per side: the heel marker's and the two toe
    markers' mean fore-aft position, on the sole line at the toe markers' mean height (calcaneus frame)."""
    model = ET.parse(str(DATA / OSIM)).getroot().find("Model")
    loc = {m.get("name"): np.array(m.findtext("location").split(), float)
           for m in model.iterfind("MarkerSet/objects/Marker")}
    out = {}
    for side, s in (("R", "r"), ("L", "l")):
        toe = 0.5 * (loc[f"{side}.Toe.Lat"] + loc[f"{side}.Toe.Med"])
        out[f"CAL_{side}"] = (f"calcn_{s}", (float(loc[f"{side}.Heel"][0]), float(toe[1]), 0.0))
        out[f"MH_{side}"] = (f"calcn_{s}", (float(toe[0]), float(toe[1]), 0.0))
    return out


def osim_model(knee_r: float, knee_l: float):
    """The treadmill subject's own model with its knee centres held at the given knee angles [rad]."""
    return from_osim(str(DATA / OSIM), points=osim_contacts(),
                     moving_centres={"knee_angle_r": knee_r, "knee_angle_l": knee_l})


def osim_state(model, frame: Frame):
    """``(q, q̇⁻)`` of the OpenSim model from the frame's coordinates (OpenSim's own, so no conversion but
    ``knee_angle = −knee flexion``), with the pelvis height placing the leading heel on the ground and the
    trailing ankle solved so that the trailing MH touches it."""
    v, names = frame.values, model.coordinate_names
    lead = frame.values["lead"].lower()
    trail = "l" if lead == "r" else "r"
    q, qdot = np.zeros(model.n), np.zeros(model.n)
    values = {"pelvis_tilt": ("pelvis_tilt", 1), "lumbar_extension": ("lumbar_ext", 1)}
    for leg, side in (("lead", lead), ("trail", trail)):
        values |= {f"hip_flexion_{side}": (f"hip_flex_{leg}", 1), f"knee_angle_{side}": (f"knee_flex_{leg}", -1),
                   f"ankle_angle_{side}": (f"ankle_dorsi_{leg}", 1)}
    for coord, (column, sign) in values.items():
        q[names.index(coord)] = sign * math.radians(v[column])
        qdot[names.index(coord)] = sign * math.radians(v[f"d_{column}"])
    qdot[:2] = v["pelvis_vx_rel_ground_mps"], v["pelvis_vy_mps"]
    q = model.solve_coordinate(jnp.asarray(q), f"CAL_{lead.upper()}", 1, 1.0)
    ankle = names.index(f"ankle_angle_{trail}")
    q = model.solve_coordinate(q, f"MH_{trail.upper()}", ankle, q[ankle])
    return q, jnp.asarray(qdot)
