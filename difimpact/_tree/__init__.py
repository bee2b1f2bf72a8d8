"""Planar rigid-body trees: kinematics and dynamics derived from one description.

A tree has a floating base -- the planar position ``(q[0], q[1])`` of the origin of its root bodies --
and revolute joints. Body ``i`` has an absolute angle measured from the upward vertical, positive toward
``+x`` (the package's convention, see the documentation's conventions page),

$$
\\theta_i = \\theta_{p(i)} + s_i q_{k(i)} + o_i,
$$

(``θ_{p} = 0`` for a root, ``s_i = ±1`` and the constant ``o_i`` are static; ``k(i) = -1`` welds the body to
its parent). A point fixed in body ``i`` at body coordinates ``(a, p)`` (``a`` along the segment axis
``e = (sin θ, cos θ)``, ``p`` along ``n = (cos θ, -sin θ)``) is at ``r_i + a e + p n`` where ``r_i`` is the
body's joint. Everything else follows from the Lagrangian ``T = ½ q̇ᵀ M q̇`` and
``V = g Σ m_i (y_i cos γ − x_i sin γ)``: on a ground sloping down toward ``+x`` at the angle ``γ`` the model frame
is the ground's (``x`` along it, ``y`` normal to it) and gravity is tilted, ``g (sin γ, −cos γ)`` (``γ = 0``: level
ground):

$$
M(q) = \\sum_i m_i J_i^T J_i + I_i J_{θ,i}^T J_{θ,i},\\qquad
c(q, \\dot q) = \\dot M \\dot q - \\partial T / \\partial q + \\partial V / \\partial q,
$$

so that the equations of motion read ``M q̈ + c = τ + Jᵀ F`` (Font-Llagunes et al. 2012, eq. 1).
"""

from .description import Body as Body, Point as Point
from .tree import PlanarTree as PlanarTree
