r"""The seven-link human's tracking gait: the symmetric step that follows a measured gait cycle.

The measured reference is Winter's normative normal-cadence cycle (D. A. Winter, *Biomechanics and Motor Control
of Human Gait*, as tabulated in BioMAC-Sim-Toolbox's ``Winter_normal.mat``; provenance in
``difimpact/data/gait/PROVENANCE.md``): mean and inter-subject SD of the hip, knee and ankle angles and of the
horizontal and vertical ground reaction force (in body weights) at 50 instants of the cycle, the cycle's duration
(1.1396 ± 0.05 s) and the speed (1.325 m/s). There are no pelvis or trunk angles in it, so the torso is not
tracked. The samples are resampled at any instant by their trigonometric interpolant (exact at the samples,
smooth in time, so the cost is twice differentiable in the collocation points' times),

$$f(p) = \sum_{k=0}^{n/2} w_k\,\mathrm{Re}\big(c_k e^{2\pi i k p / 100}\big),\qquad
  c_k = \frac1n\sum_{j<n} f_j e^{-2\pi i k j / n},$$

``p`` in % of the cycle, ``w_0 = w_{n/2} = 1``, else ``w_k = 2``.

One step of the model runs from the right heel strike to the left one, so a symmetric step is half a cycle: at
a fraction ``s`` of the step the right leg follows the cycle at ``50 s`` % and the left leg at ``50 s + 50`` %
(the left side is the right side half a cycle later). The tracking cost is added to the problem's effort per
distance (:meth:`~difimpact._human_gait.problem.HumanGaitProblem.objective`), as in the tracking problems of
Ackermann & van den Bogert (2010, eq. 3: squared tracking errors over the measured SD), Falisse et al. (2019)
and OpenSim Moco's ``MocoStateTrackingGoal``/``MocoContactTrackingGoal`` (Dembia et al. 2020),

$$J_{track} = \frac{1}{T_m}\int_0^{T}\Big[w_θ \sum_{j=1}^{6}\Big(\frac{θ_j - \bar θ_j}{σ_j}\Big)^2
  + w_F \sum_{feet}\sum_{x,y}\Big(\frac{F/(m g) - \bar F}{σ_F}\Big)^2\Big]dt
  + w_T\Big(\frac{T - T_m}{σ_T}\Big)^2,$$

``T_m`` the measured step time (half the cycle), the reference taken at ``50 t / T_m`` %, so that each term meets
one collocation point and the Newton matrix stays banded; the step's duration ``T`` is tracked by the last term
(its SD half the cycle's). The integral is the collocation's quadrature (Hermite–Simpson's Simpson weights times
each phase's duration). No residual forces act on the pelvis: the model has none (its floating base moves only
under gravity, the joint torques' reactions and the ground's contact forces), so tracking cannot be bought with
non-physical forces.
"""

import importlib.resources
from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._custom_types import Array, Float, Scalar
from .._models.seven_link_human import SevenLinkHuman
from .gait import human_gait
from .problem import IT, ITAU, B, HumanGaitProblem, S

DATA = "winter_normal_cycle.csv"
SIGNALS = ("hip", "knee", "ankle", "Fx", "Fy")  # the reference's columns (right leg, right foot)
# In the model's coordinates (clockwise, knee flexion positive; the hip relative to the torso-pelvis segment, as
# gait2d's and BioMAC-Sim-Toolbox's tracking of these curves): hip = -hip_flexion, knee = -knee_angle,
# ankle = -ankle_angle.
_SIGNS = {"hip_flexion": -1.0, "knee_angle": -1.0, "ankle_angle": -1.0, "GRF_x": 1.0, "GRF_y": 1.0}


class MeasuredGait(eqx.Module):
    """A measured symmetric gait cycle, uniformly sampled from the right heel strike.

    - `mean`, `sd` ``(n, 5)``: the right hip, knee, ankle angles [rad] in the model's convention and the ground's
      force ``(F_x, F_y)`` on the right foot [body weights], at ``100 j / n`` % of the cycle.
    - `cycle_time`, `cycle_time_sd` [s], `speed` [m/s].

    The shapes are checked where it is made, and, where they are concrete, the values: finite, every SD and
    the scalars positive (the tracking cost divides by the SDs).
    """

    mean: Float[Array, "n 5"]
    sd: Float[Array, "n 5"]
    cycle_time: Scalar
    cycle_time_sd: Scalar
    speed: Scalar

    def __check_init__(self):
        shape = np.shape(self.mean)
        if len(shape) != 2 or shape[1] != len(SIGNALS) or shape[0] < 1:
            raise ValueError(f"`mean` must have shape (n, {len(SIGNALS)}): one column per signal {SIGNALS}, got "
                             f"shape {shape}.")
        if np.shape(self.sd) != shape:
            raise ValueError(f"`sd` must have the shape of `mean` {shape}, got {np.shape(self.sd)}.")
        for name in ("cycle_time", "cycle_time_sd", "speed"):
            if np.shape(getattr(self, name)) != ():
                raise ValueError(f"`{name}` must be a scalar, got shape {np.shape(getattr(self, name))}.")
        for name in ("mean", "sd", "cycle_time", "cycle_time_sd", "speed"):
            value = getattr(self, name)
            if isinstance(value, jax.core.Tracer):
                continue
            value = np.asarray(value, float)
            if not np.all(np.isfinite(value)):
                raise ValueError(f"`{name}` contains NaN or infinite entries.")
            if name != "mean" and not np.all(value > 0):
                i = int(np.flatnonzero(~(value > 0))[0]) if value.ndim else 0
                where = f" (sample {i // len(SIGNALS)}, {SIGNALS[i % len(SIGNALS)]})" if value.ndim else ""
                raise ValueError(f"`{name}` must be positive, got {value.flat[i]:g}{where}.")

    @property
    def step_time(self):
        return self.cycle_time / 2

    @property
    def step_length(self):
        return self.speed * self.step_time

    def at(self, pct) -> tuple[Float[Array, "... 5"], Float[Array, "... 5"]]:
        """Mean and SD at `pct` % of the cycle (any shape; periodic), by trigonometric interpolation."""
        return _trig(self.mean, pct), _trig(self.sd, pct)

    def step(self, s) -> tuple[Float[Array, "... 10"], Float[Array, "... 10"]]:
        """Mean and SD at fractions `s` of the model's step: hip, knee, ankle of the right then the left leg, then
        ``(F_x, F_y)`` on the right then the left foot (the left side half a cycle later)."""
        pct = 50.0 * jnp.asarray(s)
        (mr, sr), (ml, sl) = self.at(pct), self.at(pct + 50.0)
        cat = lambda r, l: jnp.concatenate([r[..., :3], l[..., :3], r[..., 3:], l[..., 3:]], axis=-1)
        return cat(mr, ml), cat(sr, sl)


def _trig(samples, pct):
    """The trigonometric interpolant of uniformly sampled periodic columns at `pct` % (module docstring)."""
    samples = jnp.asarray(samples)
    n = samples.shape[0]
    c = jnp.fft.rfft(samples, axis=0) / n
    k = np.arange(c.shape[0])
    w = np.where((k == 0) | (2 * k == n), 1.0, 2.0)[:, None]
    pct = jnp.asarray(pct, samples.dtype)
    x = 2 * jnp.pi / 100.0 * pct[..., None] * k.reshape((1,) * pct.ndim + k.shape)
    return jnp.cos(x) @ (w * c.real) - jnp.sin(x) @ (w * c.imag)


def read_cycle(name: str = DATA) -> tuple[dict[str, np.ndarray], dict[str, float]]:
    """The columns of a packaged cycle file by name, and the ``key value unit`` pairs of its header comment."""
    path = importlib.resources.files("difimpact") / "data" / "gait" / name
    with path.open() as fh:
        lines = fh.read().splitlines()
    head = lines[0]
    meta = {"cycle_time": float(head.split("cycle ")[1].split(" s")[0]),
            "cycle_time_sd": float(head.split("(SD ")[1].split(" s")[0]),
            "speed": float(head.split("speed ")[1].split(" m/s")[0])}
    names = lines[1].split(",")
    data = np.array([[float(v) for v in ln.split(",")] for ln in lines[2:]])
    return {n: data[:, i] for i, n in enumerate(names)}, meta


def winter_normal() -> MeasuredGait:
    """Winter's normative normal-cadence cycle (module docstring) as a :class:`MeasuredGait`."""
    cols, meta = read_cycle()
    mean = np.stack([_SIGNS[k] * cols[k] for k in _SIGNS], axis=1)
    sd = np.stack([cols[f"{k}_sd"] for k in _SIGNS], axis=1)
    return MeasuredGait(jnp.asarray(mean), jnp.asarray(sd), *(jnp.asarray(meta[k]) for k in
                                                               ("cycle_time", "cycle_time_sd", "speed")))


class TrackingTarget(eqx.Module):
    """The tracking terms of a :class:`~difimpact._human_gait.problem.HumanGaitProblem` (module docstring), in the
    units of its objective (the effort's torques in units of ``U``)."""

    reference: MeasuredGait
    angle_weight: Scalar
    grf_weight: Scalar
    time_weight: Scalar

    def errors(self, problem: HumanGaitProblem, x, lam) -> Float[Array, "G 10"]:
        """The normalised errors ``(θ - θ̄)/σ`` (six joints) and ``(F/(m g) - F̄)/σ_F`` (two feet, x and y) at every
        collocation point, from its states `x` ``(G, S)`` and contact forces `lam` ``(G, 8)`` [N] on the rows of
        :data:`~.phases.ROWS`."""
        mean, sd = self.reference.step(x[:, IT] / self.reference.step_time)
        weight = jnp.sum(problem.model.tree().mass) * problem.model.g
        feet = lam.reshape(-1, 2, 2, 2).sum(axis=2)[:, :, ::-1].reshape(-1, 4) / weight  # (F_x, F_y) R, L
        return (jnp.concatenate([x[:, 3:9], feet], axis=1) - mean) / sd

    def integral(self, problem: HumanGaitProblem, x, lam) -> Scalar:
        """``J_track`` (module docstring) of the states `x` ``(G, S)`` and forces `lam` ``(G, 8)``."""
        e = self.errors(problem, x, lam) ** 2
        w = problem.weights()  # the mesh's quadrature (graded meshes included)
        running = self.angle_weight * e[:, :6].sum(1) + self.grf_weight * e[:, 6:].sum(1)
        T_m, sd_T = self.reference.step_time, self.reference.cycle_time_sd / 2
        return (jnp.asarray(w, x.dtype) * x[:, ITAU]) @ running / T_m + self.time_weight * (
            (x[-1, IT] - T_m) / sd_T) ** 2

    uses_forces: ClassVar[bool] = True  # the problem passes the forces it computed (:meth:`cost`)

    def cost(self, problem: HumanGaitProblem, z, forces=None) -> Scalar:
        """The tracking terms of the problem's objective at its variables `z` (`forces` ``(G, 8)`` [N] on the rows
        of :data:`~.phases.ROWS` at every point, where already computed; else from the problem's dynamics)."""
        lam = problem.field(z)[1] if forces is None else forces
        return self.integral(problem, z.reshape(-1, B)[:, :S], lam)


def tracking_target(reference: MeasuredGait | None = None, *, angle_weight=1.0, grf_weight=0.1,
                    time_weight=1.0) -> TrackingTarget:
    """The `tracking` argument of :func:`~difimpact._human_gait.human_gait`: `reference` (default
    :func:`winter_normal`) and the weights ``w_θ``, ``w_F``, ``w_T`` of the module docstring's cost."""
    reference = winter_normal() if reference is None else reference
    f = lambda v: jnp.asarray(float(v))
    return TrackingTarget(reference, f(angle_weight), f(grf_weight), f(time_weight))


def tracking_gait(human=None, reference: MeasuredGait | None = None, *, angle_weight=1.0, grf_weight=0.1,
                  time_weight=1.0, **kwargs):
    """The step of `human` (default :class:`~difimpact.SevenLinkHuman`) at the `reference`'s speed (default
    :func:`winter_normal`) minimising effort per distance plus the tracking cost (module docstring); `kwargs` go
    to :func:`~difimpact.human_gait` (mesh, guess, options, ...). Returns its :class:`~difimpact.HumanGait`;
    :func:`agreement` (``difimpact.gait_agreement``) compares it with the measured cycle.

    **Example:**

    ```python
    import difimpact as di

    gait = di.human_tracking_gait()                 # Winter's normal cadence; minutes on a CPU
    print(round(float(gait.solution.value), 4))     # 1.6411 (IPOPT on the same problem: 1.6411)
    print(di.gait_agreement(gait)["knee"]["within"] >= 0.9)   # True: within ±1 SD over most of the cycle
    ```"""
    _reference(reference)
    target = tracking_target(reference, angle_weight=angle_weight, grf_weight=grf_weight, time_weight=time_weight)
    human = SevenLinkHuman() if human is None else human
    return human_gait(human, target.reference.speed, tracking=target, **kwargs)


def cycle(gait, points: int = 200) -> tuple[np.ndarray, np.ndarray]:
    """A gait's step as a whole symmetric cycle on `points` uniform instants ``p`` [% of the cycle, from the right
    heel strike]: ``(p, y)`` with ``y (points, 5)`` the right hip, knee, ankle [rad] and ``(F_x, F_y)`` on the right
    foot [body weights]; over the first half the step's right side, over the second its left side (the symmetric
    step's left leg is the right leg half a cycle later), each linear between the collocation points, in the
    gait's own time ``50 t / T`` %."""
    t, q, grf = np.asarray(gait.t), np.asarray(gait.q), np.asarray(gait.grf)
    weight = float(np.sum(np.asarray(gait.problem.model.tree().mass))) * float(gait.problem.model.g)
    right = np.concatenate([q[:, 3:6], grf[:, 0] / weight], axis=1)
    left = np.concatenate([q[:, 6:9], grf[:, 1] / weight], axis=1)
    p = np.arange(points) * 100.0 / points
    s = np.mod(p, 50.0) / 50.0 * t[-1]
    y = np.where((p < 50.0)[:, None], _interp(s, t, right), _interp(s, t, left))
    return p, y


def _interp(s, t, y):
    return np.stack([np.interp(s, t, y[:, j]) for j in range(y.shape[1])], axis=1)


def agreement(gait, reference: MeasuredGait | None = None, points: int = 200) -> dict[str, dict[str, float]]:
    """Per signal of :data:`SIGNALS` over the :func:`cycle`: ``rms`` (root mean square of the difference to the
    measured mean; angles in degrees, forces in body weights) and ``within`` (the fraction of the cycle within the
    measured mean ± 1 SD)."""
    if isinstance(gait, (str, bytes)) or not all(hasattr(gait, a) for a in ("t", "q", "grf", "problem")):
        raise TypeError(f"`gait` must be a HumanGait (of `human_gait` or `human_tracking_gait`), got "
                        f"{type(gait).__name__} {gait!r:.60}.")
    _reference(reference)
    reference = winter_normal() if reference is None else reference
    p, y = cycle(gait, points)
    mean, sd = (np.asarray(a) for a in reference.at(jnp.asarray(p)))
    d = y - mean
    scale = np.array([180.0 / np.pi] * 3 + [1.0, 1.0])
    return {name: {"rms": float(np.sqrt(np.mean(d[:, j] ** 2)) * scale[j]),
                   "within": float(np.mean(np.abs(d[:, j]) <= sd[:, j]))} for j, name in enumerate(SIGNALS)}


def _reference(reference):
    """`reference` must be a :class:`MeasuredGait` or ``None`` (Winter's cycle)."""
    if reference is not None and not isinstance(reference, MeasuredGait):
        raise TypeError(f"`reference` must be a MeasuredGait (e.g. `difimpact.winter_normal()`) or None (Winter's "
                        f"normal cycle), got {type(reference).__name__} {reference!r:.60}.")
