from .branch import BranchPoint as BranchPoint, GaitBranch as GaitBranch
from .continuation import continue_gait as continue_gait
from .heel_strike import (
    AbstractHeelStrike as AbstractHeelStrike,
    heel_strike as heel_strike,
    heel_strike_law as heel_strike_law,
    HeelStrike as HeelStrike,
    ImpulsiveHeelStrike as ImpulsiveHeelStrike,
    MasslessLegsHeelStrike as MasslessLegsHeelStrike,
)
from .fixed_point import periodic_gait as periodic_gait, PeriodicGait as PeriodicGait, stride_power as stride_power
from .stability import (
    eigenvalues as eigenvalues,
    floquet_multipliers as floquet_multipliers,
    spectral_radius as spectral_radius,
    stride_jacobian as stride_jacobian,
)
from .stride import (
    GaitResults as GaitResults,
    StanceSystem as StanceSystem,
    StanceTolerances as StanceTolerances,
    Stride as Stride,
    stride as stride,
)
