"""difimpact: differentiable impacts in planar biomechanical multibody systems.

The public names, by concept (docs/api/index.md lists them with their count): models; impact maps; contact laws;
the compliant phase; gaits; powered gaits; multi-phase gaits; optimisation; importers; compilation; results. The
papers that the library reproduces, and their constants, are the subpackage :mod:`difimpact.papers`.

The names under ``if TYPE_CHECKING:`` (the parts that need diffrax or optax) are imported when first read
(:mod:`difimpact._lazy`): ``import difimpact`` stays quick for a first impact.
"""

import importlib.metadata
import warnings
from typing import TYPE_CHECKING

from . import _lazy

# Models: the built-in models, planar trees for your own, anthropometry (the tables that `scale_segments` and
# the seven-link human take, also under `difimpact.papers`), drawing.
from ._models import (
    AbstractPlanarModel as AbstractPlanarModel,
    AbstractSteppingModel as AbstractSteppingModel,
    AbstractWalker as AbstractWalker,
    BipedWithTorso as BipedWithTorso,
    CompassGait as CompassGait,
    CrutchWalker as CrutchWalker,
    FiveLinkBiped as FiveLinkBiped,
    HeelStrikePosture as HeelStrikePosture,
    RimlessWheel as RimlessWheel,
    SevenLinkHuman as SevenLinkHuman,
    SimplestWalker as SimplestWalker,
    TreeModel as TreeModel,
)
from ._tree import Body as Body, PlanarTree as PlanarTree, Point as Point
from ._anthropometry import (
    AnthropometricTable as AnthropometricTable,
    DUMAS_2007_FEMALE as DUMAS_2007_FEMALE,
    DUMAS_2007_MALE as DUMAS_2007_MALE,
    HatPart as HatPart,
    scale_segments as scale_segments,
    SegmentRow as SegmentRow,
    WINTER_2009 as WINTER_2009,
)
from ._draw import draw_model as draw_model

# Impact maps: impulsive impacts, with friction, with push-off.
from ._impact.ground import impact as impact, loss_per_distance as loss_per_distance
from ._impact.constrained import constrained_impact as constrained_impact
from ._impact.frictional_ground import frictional_impact as frictional_impact
from ._impact.frictional import (
    frictional_impact_map as frictional_impact_map,
    impulse_space_path as impulse_space_path,
)
from ._impact.pushoff import pushoff_impact as pushoff_impact

# Contact laws: a contact's point and its normal and friction laws, and the materials' helpers.
from ._contact import (
    AbstractElasticStickLaw as AbstractElasticStickLaw,
    AbstractExactStickLaw as AbstractExactStickLaw,
    AbstractFrictionLaw as AbstractFrictionLaw,
    AbstractNormalLaw as AbstractNormalLaw,
    AbstractSmoothFrictionLaw as AbstractSmoothFrictionLaw,
    AbstractStickSlipLaw as AbstractStickSlipLaw,
    Contact as Contact,
    Coulomb as Coulomb,
    damping_from_restitution as damping_from_restitution,
    effective_modulus as effective_modulus,
    hertz_stiffness as hertz_stiffness,
    HuntCrossley as HuntCrossley,
    KelvinVoigt as KelvinVoigt,
    mindlin_stiffness as mindlin_stiffness,
    RegularisedCoulomb as RegularisedCoulomb,
    TangentialSpring as TangentialSpring,
)

# The compliant phase: finite-time contact, on the hybrid-phase engine.
if TYPE_CHECKING:  # imported on first use (difimpact._lazy)
    from ._compliant import compliant_impact as compliant_impact
    from ._hybrid import AbstractHybridSystem as AbstractHybridSystem, solve_hybrid as solve_hybrid

# Gaits: passive walking — strides, heel strikes, periodic gaits, their stability and their branches.
if TYPE_CHECKING:  # imported on first use (difimpact._lazy)
    from ._gait import (
        AbstractHeelStrike as AbstractHeelStrike,
        continue_gait as continue_gait,
        eigenvalues as eigenvalues,
        floquet_multipliers as floquet_multipliers,
        heel_strike as heel_strike,
        heel_strike_law as heel_strike_law,
        ImpulsiveHeelStrike as ImpulsiveHeelStrike,
        MasslessLegsHeelStrike as MasslessLegsHeelStrike,
        periodic_gait as periodic_gait,
        spectral_radius as spectral_radius,
        StanceTolerances as StanceTolerances,
        stride as stride,
        stride_jacobian as stride_jacobian,
        stride_power as stride_power,
    )

# Powered gaits: optimal and tracked gaits of actuated bipeds.
if TYPE_CHECKING:  # imported on first use (difimpact._lazy)
    from ._powered import (
        biped_torso_walker as biped_torso_walker,
        five_link_walker as five_link_walker,
        GaitProblem as GaitProblem,
        kelly_gait as kelly_gait,
        optimal_gait as optimal_gait,
        PointwiseConstraint as PointwiseConstraint,
        PoweredBiped as PoweredBiped,
        tracking_floquet as tracking_floquet,
        tracking_stride as tracking_stride,
        TrackingOptions as TrackingOptions,
        work_balance as work_balance,
    )

# Multi-phase gaits: a gait as contact phases (your own layout), and the seven-link human's.
from ._collocation import (
    ContactGait as ContactGait,
    ContactPhase as ContactPhase,
    multiphase_gait as multiphase_gait,
    MultiPhaseProblem as MultiPhaseProblem,
    retime as retime,
)
if TYPE_CHECKING:  # imported on first use (difimpact._lazy)
    from ._human_gait import (
        gait_agreement as gait_agreement,
        HUMAN_STEP as HUMAN_STEP,
        human_gait as human_gait,
        human_tracking_gait as human_tracking_gait,
        MeasuredGait as MeasuredGait,
        winter_normal as winter_normal,
    )

# Optimisation: objectives of an impact, sweeps, minimisation, nonlinear programs, worked problems.
if TYPE_CHECKING:  # imported on first use (difimpact._lazy)
    from ._objectives import (
        constrained_energy_index as constrained_energy_index,
        energy_index as energy_index,
        energy_loss as energy_loss,
        impulses as impulses,
        peak_contact_force as peak_contact_force,
        post_impact_velocity as post_impact_velocity,
        sliding_margin as sliding_margin,
        sticking_margin as sticking_margin,
    )
from ._sweep import grid as grid, sweep as sweep
if TYPE_CHECKING:  # imported on first use (difimpact._lazy)
    from ._optimise import minimise as minimise
from ._autodiff import forward_mode_gradient as forward_mode_gradient
if TYPE_CHECKING:  # imported on first use (difimpact._lazy)
    from ._problem import GridSearch as GridSearch, Problem as Problem
from ._nlp import NLPOptions as NLPOptions, solve_nlp as solve_nlp

# Importers: models from MuJoCo (MJCF), URDF and OpenSim files, and back.
from ._io import (
    from_mjcf as from_mjcf,
    from_osim as from_osim,
    from_urdf as from_urdf,
    to_mjcf as to_mjcf,
    to_urdf as to_urdf,
)

# Compilation: the entry points' programs kept on disk between processes, and one's own programs made keepable.
from ._cache import use_compilation_cache as use_compilation_cache
from ._check import checks_as_nan as checks_as_nan

# Results: what the entry points return — solutions, and the enumerations of their outcomes (`*Results`).
from ._results import RESULTS as RESULTS
from ._impact.constrained import ImpactResults as ImpactResults, ImpactSolution as ImpactSolution
from ._impact.frictional import (
    FrictionalImpactResults as FrictionalImpactResults,
    FrictionalImpactSolution as FrictionalImpactSolution,
    FrictionalRegime as FrictionalRegime,
    ImpulsePath as ImpulsePath,
)
from ._impact.pushoff import PushoffResults as PushoffResults, PushoffSolution as PushoffSolution
if TYPE_CHECKING:  # imported on first use (difimpact._lazy)
    from ._compliant import (
        CompliantResults as CompliantResults,
        CompliantSolution as CompliantSolution,
        History as History,
    )
    from ._hybrid import HybridResults as HybridResults, HybridSolution as HybridSolution
    from ._gait import (
        BranchPoint as BranchPoint,
        GaitBranch as GaitBranch,
        GaitResults as GaitResults,
        HeelStrike as HeelStrike,
        PeriodicGait as PeriodicGait,
        Stride as Stride,
    )
    from ._powered import (
        OptimalGait as OptimalGait,
        TrackingGait as TrackingGait,
        TrackingStride as TrackingStride,
        WorkBalance as WorkBalance,
    )
from ._collocation import PhasedGait as PhasedGait
if TYPE_CHECKING:  # imported on first use (difimpact._lazy)
    from ._human_gait import HumanGait as HumanGait
from ._nlp import failures as failures, NLPResults as NLPResults, NLPSolution as NLPSolution
if TYPE_CHECKING:  # imported on first use (difimpact._lazy)
    from ._optimise import OptimiseResults as OptimiseResults, OptimiseSolution as OptimiseSolution

# Optimisation, continued: the papers' worked problems (their modules use the names above).
if TYPE_CHECKING:  # imported on first use (difimpact._lazy)
    from .papers.font_kovecses_2008.optimisation import biped_torso as biped_torso
    from .papers.font_llagunes_2010.optimisation import compass_foot_radius as compass_foot_radius
    from .papers.font_llagunes_2012.optimisation import crutch_peak_force as crutch_peak_force
    from .papers.ros_2015.optimisation import ankle_blocking as ankle_blocking

try:
    __version__ = importlib.metadata.version("difimpact")
except importlib.metadata.PackageNotFoundError:  # pragma: no cover - source checkout
    __version__ = "0.0.0"

# Names kept until 0.3 with a `DeprecationWarning`: {old name: (its value's module, name there, what to use)}.
_DEPRECATED = {
    "OptimiseResult": ("._optimise", "OptimiseSolution", "`difimpact.OptimiseSolution`"),
    "KELLY_GUESS": ("._powered.walkers", "KELLY_GUESS", "`difimpact.papers.KELLY_GUESS`"),
}


_LAZY = _lazy.table(__file__)
__all__ = sorted([n for n, v in globals().items() if not n.startswith("_") and n != "TYPE_CHECKING"
                  and not isinstance(v, type(_lazy))] + list(_LAZY), key=str.lower)


def __getattr__(name: str):
    """The names imported on first use (:data:`_LAZY`), the package's modules not yet imported (``papers``), and
    the names of :data:`_DEPRECATED`, each with a ``DeprecationWarning`` naming its replacement."""
    if name in _LAZY:
        return _lazy.load(__name__, globals(), _LAZY, name)
    if name in _lazy.submodules(__path__):  # a module of the package read as an attribute: `difimpact.papers`
        return importlib.import_module(f"{__name__}.{name}")
    if name not in _DEPRECATED:
        raise AttributeError(f"module 'difimpact' has no attribute {name!r}")
    module, attribute, use = _DEPRECATED[name]
    warnings.warn(f"`difimpact.{name}` is deprecated and will be removed in 0.3: use {use}.", DeprecationWarning,
                  stacklevel=2)
    return getattr(importlib.import_module(module, __name__), attribute)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
