"""difimpact: differentiable impacts in planar biomechanical multibody systems."""

import importlib.metadata

from ._anthropometry import (
    AnthropometricTable as AnthropometricTable,
    DUMAS_2007_FEMALE as DUMAS_2007_FEMALE,
    DUMAS_2007_MALE as DUMAS_2007_MALE,
    HatPart as HatPart,
    scale_segments as scale_segments,
    SegmentRow as SegmentRow,
    WINTER_2009 as WINTER_2009,
)
from ._compliant import (
    compliant_impact as compliant_impact,
    CompliantResults as CompliantResults,
    CompliantSolution as CompliantSolution,
    History as History,
)
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
from ._gait import (
    AbstractHeelStrike as AbstractHeelStrike,
    BranchPoint as BranchPoint,
    continue_gait as continue_gait,
    eigenvalues as eigenvalues,
    floquet_multipliers as floquet_multipliers,
    GaitBranch as GaitBranch,
    GaitResults as GaitResults,
    heel_strike as heel_strike,
    heel_strike_law as heel_strike_law,
    HeelStrike as HeelStrike,
    ImpulsiveHeelStrike as ImpulsiveHeelStrike,
    MasslessLegsHeelStrike as MasslessLegsHeelStrike,
    periodic_gait as periodic_gait,
    PeriodicGait as PeriodicGait,
    spectral_radius as spectral_radius,
    StanceTolerances as StanceTolerances,
    Stride as Stride,
    stride as stride,
    stride_jacobian as stride_jacobian,
    stride_power as stride_power,
)
from ._impact.constrained import (
    constrained_impact as constrained_impact,
    ImpactResults as ImpactResults,
    ImpactSolution as ImpactSolution,
)
from ._impact.ground import impact as impact, loss_per_distance as loss_per_distance
from ._impact.pushoff import (
    pushoff_impact as pushoff_impact,
    PushoffResults as PushoffResults,
    PushoffSolution as PushoffSolution,
)
from ._impact.frictional import (
    FrictionalImpactResults as FrictionalImpactResults,
    FrictionalImpactSolution as FrictionalImpactSolution,
    FrictionalRegime as FrictionalRegime,
    ImpulsePath as ImpulsePath,
    frictional_impact_map as frictional_impact_map,
    impulse_space_path as impulse_space_path,
)
from ._impact.frictional_ground import frictional_impact as frictional_impact
from ._io import (
    from_mjcf as from_mjcf,
    from_osim as from_osim,
    from_urdf as from_urdf,
    to_mjcf as to_mjcf,
    to_urdf as to_urdf,
)
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
from ._hybrid import (
    AbstractHybridSystem as AbstractHybridSystem,
    HybridResults as HybridResults,
    HybridSolution as HybridSolution,
    solve_hybrid as solve_hybrid,
)
from ._collocation import (
    ContactGait as ContactGait,
    ContactPhase as ContactPhase,
    multiphase_gait as multiphase_gait,
    MultiPhaseProblem as MultiPhaseProblem,
    PhasedGait as PhasedGait,
    retime as retime,
)
from ._human_gait import (
    gait_agreement as gait_agreement,
    HUMAN_STEP as HUMAN_STEP,
    human_gait as human_gait,
    human_tracking_gait as human_tracking_gait,
    HumanGait as HumanGait,
    MeasuredGait as MeasuredGait,
    winter_normal as winter_normal,
)
from ._nlp import (
    failures as failures,
    NLPOptions as NLPOptions,
    NLPResults as NLPResults,
    NLPSolution as NLPSolution,
    solve_nlp as solve_nlp,
)
from ._powered import (
    biped_torso_walker as biped_torso_walker,
    five_link_walker as five_link_walker,
    GaitProblem as GaitProblem,
    KELLY_GUESS as KELLY_GUESS,
    kelly_gait as kelly_gait,
    optimal_gait as optimal_gait,
    OptimalGait as OptimalGait,
    PoweredBiped as PoweredBiped,
    tracking_floquet as tracking_floquet,
    tracking_stride as tracking_stride,
    TrackingGait as TrackingGait,
    TrackingOptions as TrackingOptions,
    TrackingStride as TrackingStride,
    work_balance as work_balance,
    WorkBalance as WorkBalance,
)
from ._autodiff import forward_mode_gradient as forward_mode_gradient
from ._cache import use_compilation_cache as use_compilation_cache
from ._draw import draw_model as draw_model
from ._problem import GridSearch as GridSearch, Problem as Problem
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
from ._results import RESULTS as RESULTS
from ._optimise import minimise as minimise, OptimiseResult as OptimiseResult, OptimiseResults as OptimiseResults
from ._sweep import grid as grid, sweep as sweep
from ._tree import Body as Body, PlanarTree as PlanarTree, Point as Point

# The papers' worked optimisation problems, importable from here as before. Last: their modules use the names above.
from .papers.font_kovecses_2008.optimisation import biped_torso as biped_torso
from .papers.font_llagunes_2010.optimisation import compass_foot_radius as compass_foot_radius
from .papers.font_llagunes_2012.optimisation import crutch_peak_force as crutch_peak_force
from .papers.ros_2015.optimisation import ankle_blocking as ankle_blocking

try:
    __version__ = importlib.metadata.version("difimpact")
except importlib.metadata.PackageNotFoundError:  # pragma: no cover - source checkout
    __version__ = "0.0.0"


def __getattr__(name: str):
    """Names kept for one release with a ``DeprecationWarning``: ``FRICTIONAL_REGIMES`` (use
    :class:`FrictionalRegime`)."""
    from ._impact import regime

    try:
        return regime.deprecated(name)
    except AttributeError:
        raise AttributeError(f"module 'difimpact' has no attribute {name!r}") from None
