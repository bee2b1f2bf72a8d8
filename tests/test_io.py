"""Importers and exporters: an MJCF model's M and c against MuJoCo's own, a URDF's M against Pinocchio's CRBA,
the crutch walker written as URDF and MJCF and read back (same M, impacts, gradients), clear errors for what is
not planar."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import difimpact as di

from .helpers import tree_allclose

try:
    import mujoco
except ImportError:
    mujoco = None
try:
    import pinocchio as pin
except ImportError:
    pin = None
needs_mjcf = pytest.mark.skipif(mujoco is None, reason="the `mjcf` extra (mujoco) is not installed")
needs_pinocchio = pytest.mark.skipif(pin is None, reason="pinocchio (in the `test` extra) is not installed")

# A planar walker exercising what the compiler resolves: class defaults (joint axis, armature), inertia from
# geoms, a hinge about −y, a joint away from its body's origin, a turned body, a hinge with `ref` (qpos0 ≠ 0),
# a welded body, a root whose hinge is away from the slides' origin, and sites.
WALKER_MJCF = """
<mujoco model="walker">
  <option gravity="0 0 -9.81"/>
  <default>
    <joint type="hinge" axis="0 1 0" armature="0" damping="0.1"/>
    <geom type="capsule" density="1000"/>
    <default class="flipped"><joint axis="0 -1 0"/></default>
  </default>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 0.1"/>
    <body name="torso" pos="0 0 1.3">
      <joint name="rootx" type="slide" axis="1 0 0"/>
      <joint name="rootz" type="slide" axis="0 0 1"/>
      <joint name="rooty" pos="0 0 -0.1"/>
      <geom size="0.07 0.3"/>
      <site name="head" pos="0 0 0.35"/>
      <body name="arm" pos="0.05 0.2 0.2" euler="0 30 0">
        <geom size="0.03" fromto="0 0 0 0.3 0 0"/>
        <body name="hand" pos="0.3 0 0"><geom type="sphere" size="0.05"/></body>
      </body>
      <body name="thigh" pos="0 -0.05 -0.3">
        <joint name="hip" class="flipped" ref="10"/>
        <geom size="0.05 0.22" pos="0 0 -0.22"/>
        <body name="leg" pos="0 0 -0.44" euler="0 -15 0">
          <joint name="knee" pos="0 0 0.02"/>
          <geom size="0.04 0.22" pos="0.01 0 -0.24"/>
          <body name="foot" pos="0 0 -0.5">
            <joint name="ankle" pos="0 0 0.03"/>
            <geom size="0.05 0.1" pos="0.06 0 -0.03" quat="0.707107 0 -0.707107 0"/>
            <site name="heel" pos="-0.04 0 -0.06"/>
            <site name="toe" pos="0.18 0 -0.06"/>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""

# A URDF exercising the same: joint frames turned about the axis (rpy), a revolute about −y, an inertial frame
# turned out of the plane with products of inertia, a welded massive link, a massless point link, the base.
WALKER_URDF = """
<robot name="walker">
  <link name="world"/><link name="sx"/><link name="sz"/>
  <joint name="x" type="prismatic"><parent link="world"/><child link="sx"/><axis xyz="1 0 0"/>
    <limit lower="-10" upper="10" effort="0" velocity="0"/></joint>
  <joint name="z" type="prismatic"><parent link="sx"/><child link="sz"/><axis xyz="0 0 1"/>
    <limit lower="-10" upper="10" effort="0" velocity="0"/></joint>
  <link name="pelvis"><inertial><origin xyz="0.02 0.01 0.1" rpy="0.3 0.2 0.1"/><mass value="12"/>
    <inertia ixx="0.2" iyy="0.15" izz="0.1" ixy="0.01" ixz="-0.02" iyz="0.005"/></inertial></link>
  <joint name="pitch" type="revolute"><parent link="sz"/><child link="pelvis"/><origin xyz="0 0 0.9"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="0" velocity="0"/></joint>
  <link name="trunk"><inertial><origin xyz="0 0 0.3"/><mass value="30"/>
    <inertia ixx="1.1" iyy="1.2" izz="0.3" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="lumbar" type="fixed"><parent link="pelvis"/><child link="trunk"/><origin xyz="0 0 0.15" rpy="0 0.1 0"/>
  </joint>
  <link name="thigh"><inertial><origin xyz="0.01 0 -0.2"/><mass value="8"/>
    <inertia ixx="0.15" iyy="0.16" izz="0.03" ixy="0" ixz="0.002" iyz="0"/></inertial></link>
  <joint name="hip" type="revolute"><parent link="pelvis"/><child link="thigh"/>
    <origin xyz="0 -0.08 -0.05" rpy="0 0.2 0"/>
    <axis xyz="0 -1 0"/><limit lower="-3" upper="3" effort="0" velocity="0"/></joint>
  <link name="shank"><inertial><origin xyz="0 0 -0.18"/><mass value="3.5"/>
    <inertia ixx="0.05" iyy="0.05" izz="0.005" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="knee" type="continuous"><parent link="thigh"/><child link="shank"/><origin xyz="0.005 0 -0.42"/>
    <axis xyz="0 1 0"/></joint>
  <link name="heel"/>
  <joint name="heel_frame" type="fixed"><parent link="shank"/><child link="heel"/><origin xyz="-0.05 0 -0.45"/></joint>
</robot>
"""


def _random_q(rng, n):
    return np.concatenate([rng.uniform(-1, 1, 2), rng.uniform(-np.pi, np.pi, n - 2)])


# -- MJCF against MuJoCo ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def mj_walker():
    m = mujoco.MjModel.from_xml_string(WALKER_MJCF)
    return m, mujoco.MjData(m), di.from_mjcf(WALKER_MJCF)


@needs_mjcf
def test_mjcf_mass_matrix_bias_and_sites_match_mujoco(mj_walker, rng):
    """M against ``mj_fullM`` to 1e-10, ``c(q, q̇)`` against ``qfrc_bias`` (RNE: Coriolis, centrifugal, gravity)
    and the sites against ``site_xpos``, at random postures. The model's coordinates are MuJoCo's ``qpos``."""
    m, d, model = mj_walker
    assert model.coordinate_names == tuple(m.joint(j).name for j in range(m.njnt))
    assert model.point_names == ("head", "heel", "toe")
    fns = jax.jit(lambda q, v: (model.mass_matrix(q), model.bias(q, v),
                                jnp.stack([model.point(q, p) for p in model.point_names])))
    for _ in range(4):
        q, v = _random_q(rng, m.nq), rng.normal(size=m.nv)
        d.qpos[:], d.qvel[:] = q, v
        mujoco.mj_forward(m, d)
        full = np.zeros((m.nv, m.nv))
        mujoco.mj_fullM(m, d, full)
        mass, bias, points = fns(jnp.asarray(q), jnp.asarray(v))
        np.testing.assert_allclose(mass, full, rtol=0, atol=1e-10)
        np.testing.assert_allclose(bias, d.qfrc_bias, rtol=0, atol=1e-9)
        np.testing.assert_allclose(points, d.site_xpos[:, [0, 2]], rtol=0, atol=1e-12)


# -- URDF against Pinocchio -------------------------------------------------------------------------------------
def _pinocchio_mass_matrix(xml, names, qs):
    pmodel = pin.buildModelFromXML(xml)
    data = pmodel.createData()
    idx = [pmodel.idx_qs[pmodel.getJointId(name)] for name in names]
    out = []
    for q in qs:
        qp = np.zeros(pmodel.nq)
        qp[idx] = q
        if pmodel.nq > len(names):  # a continuous joint is (cos, sin) in Pinocchio
            qp = pin.neutral(pmodel)
            for name, value in zip(names, q):
                joint = pmodel.joints[pmodel.getJointId(name)]
                qp[joint.idx_q:joint.idx_q + joint.nq] = ([np.cos(value), np.sin(value)] if joint.nq == 2
                                                          else [value])
        full = pin.crba(pmodel, data, qp)
        full = np.triu(full) + np.triu(full, 1).T
        vidx = [pmodel.joints[pmodel.getJointId(name)].idx_v for name in names]
        out.append(full[np.ix_(vidx, vidx)])
    return np.stack(out)


@needs_pinocchio
def test_urdf_mass_matrix_matches_pinocchio_crba(rng):
    model = di.from_urdf(WALKER_URDF)
    assert model.coordinate_names == ("x", "z", "pitch", "hip", "knee")
    assert model.point_names == ("heel",)
    qs = np.stack([_random_q(rng, model.n) for _ in range(4)])
    ours = jax.jit(jax.vmap(model.mass_matrix))(jnp.asarray(qs))
    np.testing.assert_allclose(ours, _pinocchio_mass_matrix(WALKER_URDF, model.coordinate_names, qs),
                               rtol=0, atol=1e-10)


# -- the crutch walker out and back -----------------------------------------------------------------------------
@eqx.filter_jit
def _impact_and_gradient(model, q, qdot):
    """The crutch tip's sticking impact (seed 000, eq. 10) and the gradient of
    its energy loss with respect to the model's parameters and the pre-impact state."""
    options = dict(stick=("Q",))
    hit = di.impact(model, q, qdot, **options)
    grad = eqx.filter_grad(lambda args: di.energy_loss(*args, **options))((model, q, qdot))
    return hit, grad


@pytest.fixture(scope="module")
def round_trip():
    walker = di.CrutchWalker()
    q, qdot = walker.pre_impact_state(np.radians(12.0), -0.2)
    return walker, (q, qdot), _impact_and_gradient(walker, q, qdot)


@needs_mjcf
@pytest.mark.parametrize("fmt", ["urdf", "mjcf"])
def test_crutch_walker_round_trip(round_trip, fmt, rng):
    """Written out and read back, the crutch walker has the same coordinates, points, M, impact and gradients
    (with respect to the pre-impact state and to the segment masses and inertias)."""
    walker, (q, qdot), (hit, (grad_model, *grad_state)) = round_trip
    back = {"urdf": lambda: di.from_urdf(di.to_urdf(walker)), "mjcf": lambda: di.from_mjcf(di.to_mjcf(walker))}[fmt]()
    assert back.coordinate_names == walker.coordinate_names and back.point_names == walker.point_names
    qs = jnp.asarray(np.stack([_random_q(rng, 6) for _ in range(4)]))
    np.testing.assert_allclose(jax.vmap(back.mass_matrix)(qs), jax.vmap(walker.mass_matrix)(qs), rtol=0, atol=1e-12)
    hit_back, (grad_back, *grad_state_back) = _impact_and_gradient(back, q, qdot)
    assert tree_allclose(hit_back, hit, rtol=1e-10, atol=1e-12)
    assert tree_allclose(grad_state_back, grad_state, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(grad_back.planar_tree.mass, grad_model.masses, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(grad_back.planar_tree.inertia, grad_model.inertias, rtol=1e-10, atol=1e-12)


@needs_pinocchio
def test_exported_urdf_matches_pinocchio(rng):
    """The URDF writer against Pinocchio: the model Pinocchio builds from it has the walker's M."""
    walker = di.CrutchWalker()
    qs = np.stack([_random_q(rng, 6) for _ in range(3)])
    np.testing.assert_allclose(jax.vmap(walker.mass_matrix)(jnp.asarray(qs)),
                               _pinocchio_mass_matrix(di.to_urdf(walker), walker.coordinate_names, qs),
                               rtol=0, atol=1e-10)


# -- what is not planar -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("edit, match", [
    (('<joint name="knee" pos="0 0 0.02"/>', '<joint name="knee" pos="0 0 0.02" axis="1 0 0"/>'),
     "joint 'knee' of body 'leg' turns about"),
    (('<joint name="ankle" pos="0 0 0.03"/>', '<joint name="ankle" type="ball"/>'), "'ankle' .* ball joint"),
    (('</worldbody>', '</worldbody><equality><connect body1="foot" body2="world" anchor="0 0 0"/></equality>'),
     "equality constraints .*closed loop"),
    (('armature="0"', 'armature="0.01"'), "slide 'rootx' has armature 0.01: a planar tree holds armature on hinges"),
])
@needs_mjcf
def test_mjcf_not_planar_is_named(edit, match):
    with pytest.raises(ValueError, match=match):
        di.from_mjcf(WALKER_MJCF.replace(*edit))


@pytest.mark.parametrize("edit, match", [
    (('<axis xyz="0 -1 0"/>', '<axis xyz="1 0 0"/>'), "joint 'hip' of body 'thigh' turns about"),
    (('type="continuous"', 'type="prismatic"'), "'knee' is prismatic"),
    (('<axis xyz="0 1 0"/></joint>', '<axis xyz="0 1 0"/><mimic joint="hip"/></joint>'), "'knee' mimics 'hip'"),
])
def test_urdf_not_planar_is_named(edit, match):
    with pytest.raises(ValueError, match=match):
        di.from_urdf(WALKER_URDF.replace(*edit))


@needs_mjcf
def test_unknown_point_is_named():
    with pytest.raises(ValueError, match="no site/marker 'nose'"):
        di.from_mjcf(WALKER_MJCF, points={"tip": "nose"})
    model = di.from_mjcf(WALKER_MJCF, points={"heel": "heel", "mid": ("foot", (0.07, 0.0, -0.06))})
    q = jnp.zeros(model.n)
    np.testing.assert_allclose(jnp.linalg.norm(model.point(q, "mid") - model.point(q, "heel")), 0.11, atol=1e-12)
