"""Shared pieces of the benchmarks: timing, machine description, and the independent baselines' model
(the crutch walker written out in NumPy, and as a URDF for Pinocchio).

Nothing here imports difimpact, so a script can choose float32 or float64 before the library creates arrays.
"""

import argparse
import json
import math
import os
import platform
import statistics
import time
from importlib.metadata import version

import jax
import numpy as np

README = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "README.md")


def parse_args(description: str, dtype: bool = False, part: tuple[str, ...] = (), extra=()) -> argparse.Namespace:
    """``--quick`` (small sizes), ``--out`` (JSON file for ``run.py``), optionally ``--dtype``, ``--part``
    (one of ``part``; default all) and the script's own options ``extra`` (``(names, keywords)`` pairs of
    ``add_argument``); switches x64 on or off before anything creates a JAX array."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true", help="small sizes, few repeats (a smoke run)")
    parser.add_argument("--out", help="write the measured rows to this JSON file")
    if dtype:
        parser.add_argument("--dtype", choices=("float64", "float32"), default="float64")
    if part:
        parser.add_argument("--part", choices=part, help="run only this part")
    for names, kw in extra:
        parser.add_argument(*names, **kw)
    args = parser.parse_args()
    jax.config.update("jax_enable_x64", getattr(args, "dtype", "float64") == "float64")
    return args


def block(x):
    return jax.block_until_ready(x)


def compile_time(fn, *args):
    """``jax.jit(fn).lower(*args).compile()``: the compiled callable, wall seconds and process CPU seconds
    (the CPU time is what the compile costs when other processes share the cores)."""
    w, c = time.perf_counter(), time.process_time()
    compiled = jax.jit(fn).lower(*args).compile()
    return compiled, time.perf_counter() - w, time.process_time() - c


def median_time(fn, *args, repeats: int = 5, min_time: float = 0.05) -> tuple[float, float]:
    """Median wall seconds and median process CPU seconds of one call of ``fn(*args)`` (results blocked),
    after one warm-up call. Each repeat runs the call ``number`` times, ``number`` chosen so that a repeat
    lasts ``min_time``. On a shared machine the CPU time is the cost of the work; the wall time also holds
    the time other processes held the cores."""
    block(fn(*args))
    t = time.perf_counter()
    block(fn(*args))
    once = time.perf_counter() - t
    number = max(1, math.ceil(min_time / max(once, 1e-9)))
    walls, cpus = [], []
    for _ in range(repeats):
        t, c = time.perf_counter(), time.process_time()
        for _ in range(number):
            out = fn(*args)
        block(out)
        walls.append((time.perf_counter() - t) / number)
        cpus.append((time.process_time() - c) / number)
    return statistics.median(walls), statistics.median(cpus)


def loop_time(fn, *args) -> tuple[float, float]:
    """Wall and process CPU seconds of one call of ``fn(*args)`` (a Python-loop baseline)."""
    t, c = time.perf_counter(), time.process_time()
    fn(*args)
    return time.perf_counter() - t, time.process_time() - c


def memory_bandwidth(nbytes: int = 1 << 28, repeats: int = 5) -> float:
    """Bytes per second of ``np.copyto`` over ``nbytes`` (read + write counted), median of ``repeats``."""
    src = np.ones(nbytes // 8)
    dst = np.empty_like(src)
    np.copyto(dst, src)
    samples = []
    for _ in range(repeats):
        t = time.perf_counter()
        np.copyto(dst, src)
        samples.append(time.perf_counter() - t)
    return 2 * src.nbytes / statistics.median(samples)


def machine() -> dict:
    """CPU model, cores, load, devices (with their kind where it is not a CPU), versions."""
    model = platform.processor() or "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            model = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return dict(cpu=model, cores=os.cpu_count(), jax=jax.__version__, numpy=np.__version__,
                devices=[str(d) if d.platform == "cpu" else f"{d} ({d.device_kind})" for d in jax.devices()],
                loadavg=os.getloadavg(), versions={name: version(name) for name in ("equinox", "diffrax")})


def write(args, rows: list[dict], echo=None):
    """Print the rows (or only ``echo``); with ``--out`` also store them all as JSON for ``run.py``."""
    for row in rows if echo is None else echo:
        print(json.dumps(row))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f, indent=1)


# -- the benchmarked impulsive map (impulsive.py on the CPU, gpu.py on a GPU) ----------------------------

REGIMES = ("stick", "slide", "slide_reversal", "slide_stick", "slide_from_rest")  # `FrictionalRegime`'s items
REGIME_NAMES = tuple(name.replace("_", "-") for name in REGIMES)  # their names, indexed by the codes of `outputs`


def outputs(res):
    """``(q̇⁺, P_n, P_t, W_n, W_t, regime)`` of a :class:`difimpact.FrictionalImpactSolution`, the regime as the
    index of its item in :data:`REGIMES`."""
    import jax.numpy as jnp

    import difimpact as di

    code = jnp.select([res.regime == getattr(di.FrictionalRegime, name) for name in REGIMES], jnp.arange(len(REGIMES)))
    return res.qdot_plus, res.normal_impulse, res.tangential_impulse, res.normal_work, res.tangential_work, code


def impacts(walker, q, qdot, mu, throw=True):
    """The benchmarked map: state → (q̇⁺, P_n, P_t, W_n, W_t, regime), one impact per batch row.

    The ground check's tolerance is 1e-8 m (the default) in float64 and 1e-5 m in float32, where the tip
    height of a float64 posture cast to float32 is only known to about 1e-7 m."""
    import difimpact as di

    tol = 1e-8 if q.dtype == np.float64 else 1e-5
    return outputs(jax.vmap(lambda a, b, m: di.frictional_impact(
        walker, a, b, "Q", friction=di.Coulomb(m), ground_tol=tol, throw=throw))(q, qdot, mu))


# -- the crutch walker in NumPy (independent of difimpact's tree code) ---------------------------------

class NumpyCrutchWalker:
    """Crutch walker kinematics and dynamics written out by hand (``../shared/CONVENTIONS.md``), batched over
    leading axes: body ``i`` has absolute angle ``θ_i = q3 + … + q_{i+3}``, unit vector ``e = (sin θ, cos θ)``,
    and ``∂e/∂θ = n = (cos θ, −sin θ)``; a point at distance ``a`` along body ``i`` is at
    ``P + Σ_{k<i} l_k e_k + a e_i``, so its Jacobian column for angle ``j`` is ``Σ_{j ≤ k ≤ i} arm_k n_k`` and
    ``J̇ q̇ = −Σ_k arm_k e_k ω_k²``. Rows ``0…3`` of ``arms`` are the four centres of mass, row 4 the tip Q."""

    def __init__(self, walker):
        self.m, inertia, l, c = (np.asarray(x, float) for x in (walker.masses, walker.inertias, walker.lengths,
                                                                 walker.com))
        self.g = float(walker.g)
        self.arms = np.zeros((5, 4))
        for i in range(4):
            self.arms[i, :i] = l[:i]
            self.arms[i, i] = c[i]
        self.arms[4] = l
        angle_jac = np.zeros((4, 6))  # ∂θ_i/∂q: constant
        for i in range(4):
            angle_jac[i, 2:3 + i] = 1.0
        self.rotational = np.einsum("i,im,in->mn", inertia, angle_jac, angle_jac)

    def points(self, q, qdot):
        """Positions ``(…, 5, 2)``, Jacobians ``(…, 5, 2, 6)`` and ``J̇ q̇`` ``(…, 5, 2)`` of the four centres of
        mass and the tip."""
        theta = np.cumsum(q[..., 2:], axis=-1)
        omega = np.cumsum(qdot[..., 2:], axis=-1)
        s, c = np.sin(theta), np.cos(theta)
        e = np.stack([s, c], axis=-1)
        n = np.stack([c, -s], axis=-1)
        pos = q[..., None, :2] + np.einsum("pk,...kd->...pd", self.arms, e)
        # Σ_{k ≥ j} arm_k n_k, the arms being zero beyond the point's own body.
        cols = np.cumsum((self.arms[:, :, None] * n[..., None, :, :])[..., ::-1, :], axis=-2)[..., ::-1, :]
        J = np.zeros(q.shape[:-1] + (5, 2, 6))
        J[..., 0, 0] = J[..., 1, 1] = 1.0
        J[..., 2:] = np.swapaxes(cols, -1, -2)
        jdot_qdot = -np.einsum("pk,...kd,...k->...pd", self.arms, e, omega**2)
        return pos, J, jdot_qdot

    def mass_and_bias(self, q, qdot):
        """``M(q)`` and ``c(q, q̇) = Σ m_i J_iᵀ J̇_i q̇ + g Σ m_i ∂y_i/∂q`` (the angle Jacobians are constant)."""
        _, J, jd = self.points(q, qdot)
        Jc, jd = J[..., :4, :, :], jd[..., :4, :]
        M = np.einsum("i,...iam,...ian->...mn", self.m, Jc, Jc) + self.rotational
        c = np.einsum("i,...iam,...ia->...m", self.m, Jc, jd) + self.g * np.einsum("i,...im->...m", self.m,
                                                                                 Jc[..., 1, :])
        return M, c

    def tip(self, q, qdot):
        """Crutch tip Q: position, contact rows ``[A_n; A_t]`` and ``[Ȧ_n q̇, Ȧ_t q̇]``."""
        pos, J, jd = self.points(q, qdot)
        return pos[..., 4, :], J[..., 4, ::-1, :], jd[..., 4, ::-1]

    def frictional_impact(self, q, qdot, mu):
        """The tip's frictional impact by :func:`numpy_frictional_map` (``q̇⁺, P_n, P_t, W_n, W_t``)."""
        M, _ = self.mass_and_bias(q, qdot)
        _, A, _ = self.tip(q, qdot)
        return numpy_frictional_map(M, A[..., 0, :], A[..., 1, :], qdot, mu)


def numpy_frictional_map(M, a_n, a_t, qdot, mu, rest_tol=1e-9):
    """The closed form of ``difimpact.frictional_impact_map`` (seed 000, eqs. 8, 10, 17–32) in NumPy, batched
    over leading axes: returns ``q̇⁺, P_n, P_t, W_n, W_t``."""
    A = np.stack([a_n, a_t], axis=-2)
    X = np.linalg.solve(M, np.swapaxes(A, -1, -2))
    w = A @ X
    w_nn, w_tt, w_nt = w[..., 0, 0], w[..., 1, 1], 0.5 * (w[..., 0, 1] + w[..., 1, 0])
    v = (A @ qdot[..., None])[..., 0]
    v_n, v_t = v[..., 0], v[..., 1]
    can_stick = mu >= np.abs(w_nt) / w_tt
    rest = np.abs(v_t) <= rest_tol * np.abs(v_n)
    tau_stick = -w_nt / w_tt
    sigma = np.where(rest, np.where(w_nt >= 0, 1.0, -1.0), np.where(v_t >= 0, 1.0, -1.0))
    tau1 = np.where(rest & can_stick, tau_stick, -mu * sigma)
    k1, h1 = w_nn + tau1 * w_nt, w_nt + tau1 * w_tt
    with np.errstate(divide="ignore", invalid="ignore"):
        p_end1 = np.where(k1 > 0, -v_n / k1, np.inf)
        p_switch = np.where(rest | ~(sigma * h1 < 0), np.inf, -v_t / h1)
        two = p_switch < p_end1
        tau2 = np.where(can_stick, tau_stick, mu * sigma)
        k2 = w_nn + tau2 * w_nt
        p1 = np.where(two, p_switch, p_end1)
        p2 = np.where(two, -(v_n + k1 * p1) / k2, 0.0)
    tau2 = np.where(two, tau2, tau1)
    d1 = X[..., 0] + tau1[..., None] * X[..., 1]
    d2 = X[..., 0] + tau2[..., None] * X[..., 1]
    g1, g2 = (A @ d1[..., None])[..., 0], (A @ d2[..., None])[..., 0]
    i1 = v * p1[..., None] + 0.5 * g1 * (p1**2)[..., None]
    i2 = (v + g1 * p1[..., None]) * p2[..., None] + 0.5 * g2 * (p2**2)[..., None]
    qdot_plus = qdot + p1[..., None] * d1 + p2[..., None] * d2
    return (qdot_plus, p1 + p2, tau1 * p1 + tau2 * p2, i1[..., 0] + i2[..., 0],
            tau1 * i1[..., 1] + tau2 * i2[..., 1])


def seed000_states(n: int, seed: int = 0, mu_range=(0.5, 1.0), rest_fraction: float = 0.2):
    """``n`` pre-impact states of the default :class:`difimpact.CrutchWalker` drawn uniformly over seed 000's
    ranges (q3 in 3°…21°, q̇5 in −0.2…0.4 rad/s, μ in ``mu_range``) as float64 NumPy ``q, q̇, μ``. In a
    ``rest_fraction`` of them q̇5 is set so that the tip has no tangential velocity (``v_t⁻ = 0``, Table 2's
    first row: the ``stick`` and ``slide-from-rest`` regimes, which a continuous draw never hits).

    Always solved in float64 (``place_crutch``'s Newton tolerance, 1e-12, is out of reach in float32)."""
    import difimpact as di

    rng = np.random.default_rng(seed)
    with jax.enable_x64(True):
        walker = di.CrutchWalker()
        q3 = np.radians(rng.uniform(3.0, 21.0, n))
        q5dot = rng.uniform(-0.2, 0.4, n)
        q, qdot = jax.jit(jax.vmap(walker.pre_impact_state))(q3, q5dot)
        a_t = np.asarray(jax.jit(jax.vmap(lambda x: walker.contact_jacobian(x, "Q")[1]))(q))
    q, qdot = np.asarray(q), np.array(qdot)
    rest = rng.uniform(size=n) < rest_fraction
    # v_t = a_t · q̇ with q̇ = [0, 0, q̇3, 0, q̇5, 0]: zero at q̇5 = −a_t3 q̇3 / a_t5.
    qdot[:, 4] = np.where(rest, -a_t[:, 2] * qdot[:, 2] / a_t[:, 4], qdot[:, 4])
    return q, qdot, rng.uniform(*mu_range, n)
