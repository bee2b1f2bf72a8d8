r"""One step of the seven-link human's symmetric gait as a nonlinear program (the phases of :mod:`.phases`).

Every collocation point holds ``(q, \dot q, t, E, τ)`` and the torques ``v = u / U`` (``U = 100`` N m): ``t`` the
time since heel strike, ``E = ∫ Σ v^2 dt`` the effort so far, ``τ`` its phase's duration. In phase time
``s ∈ [0, 1]`` the states obey ``d/ds (q, \dot q, t, E, τ) = τ (\dot q, \ddot q, 1, Σ v^2, 0)``, transcribed by
Hermite–Simpson or trapezoidal collocation (:mod:`difimpact._collocation`; Kelly 2017, §§3–4) on segments
of width ``h_j`` in phase time, equal or geometrically graded (:func:`widths`, :func:`defects`): with the
durations and the running cost as states every constraint meets one point or a few neighbouring ones, so the
Newton matrix is banded (:mod:`difimpact._nlp.banded`). The cost is the effort per distance (Kelly 2017, eq. 7.1
over the step length ``L``),

$$J = \frac{1}{L}\int_0^{T} \sum_j u_j^2\,dt,\qquad L = x_{CAL_L}(q(T)),\quad L = v\,T,$$

the step periodic through the heel strike and the relabelling (:func:`.phases.relabel`); consecutive phases
share their boundary state. Path constraints: normal forces ``≥ 0`` and the friction cone ``|F_t| ≤ μ F_n``
on every contact row, the free foot points above the ground at the interior points, the right foot landing
flat at rest (``y_{MH_R} = \dot y_{MH_R} = 0``), the left heel on the ground and descending at the strike, the
normal impulses of the left heel and of the right metatarsal heads ``≥ 0`` (the heel is pushed, the trailing foot
stays), joint limits as bounds. Forces enter the inequalities in body weights and impulses per unit mass [m/s], so
that every row is of order one.
"""

from .._collocation.mesh import defects as defects
from .._collocation.mesh import widths as widths
from .._collocation.multiphase import MultiPhaseProblem, PointLayout
from .._collocation.multiphase import sparsity as sparsity
from .phases import Q_HI as Q_HI
from .phases import Q_LO as Q_LO
from .phases import QD_MAX as QD_MAX
from .phases import K, N

_L = PointLayout(N, K)
S = _L.states  # states per point: q, q̇, t, E, τ
B = _L.block  # variables per point
U = 100.0  # N m per unit of the torque variables
FLAT = 2  # index of the flat-foot phase
IT, IE, ITAU = _L.t, _L.effort, _L.tau

# The seven-link human's gait problem is the multi-phase transcription of :data:`~.phases.STEP`
# (:func:`~difimpact._human_gait.gait.make_problem` builds it).
HumanGaitProblem = MultiPhaseProblem
