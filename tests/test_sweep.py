"""Sweeps (issue 5, item 2): chunked sweep equal to a plain vmap, to a Python loop and to seed 003's
Appendix A mass matrix; last-chunk padding; one trace for all chunks; grids; bad input; and the sharded sweep
equal to the unsharded one, bit for bit, on 4 forced host devices (in a subprocess)."""

import itertools
import os
import subprocess
import sys
import textwrap

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import difimpact as di

from .helpers import tree_allclose
from .test_models import appendix_a_mass_matrix

N = 11  # not a multiple of the chunk sizes below, so the last chunk is padded


def biped_quantities(p):
    """A real difimpact function of one parameter set: mass matrix, kinetic energy, free accelerations."""
    model = di.BipedWithTorso(m=p["m"], m_T=p["m_T"])
    return {
        "M": model.mass_matrix(p["q"]),
        "T": model.kinetic_energy(p["q"], p["qdot"]),
        "qddot": model.accelerations(p["q"], p["qdot"]),
    }


@pytest.fixture(scope="module")
def batch():
    rng = np.random.default_rng(5)
    return {
        "m": rng.uniform(1.0, 8.0, N),
        "m_T": rng.uniform(2.0, 15.0, N),
        "q": rng.uniform(-1.0, 1.0, (N, 5)),
        "qdot": rng.uniform(-2.0, 2.0, (N, 5)),
    }


@pytest.fixture(scope="module")
def reference(batch):
    return jax.jit(jax.vmap(biped_quantities))(batch)


@pytest.mark.parametrize("chunk_size", [None, 4, 50])
def test_chunked_sweep_equals_vmap(batch, reference, chunk_size):
    out = di.sweep(biped_quantities, batch, chunk_size=chunk_size)
    assert all(isinstance(leaf, np.ndarray) and leaf.shape[0] == N for leaf in jax.tree.leaves(out))
    assert tree_allclose(out, reference, rtol=1e-13, atol=1e-13)


def test_sweep_equals_loop_and_closed_form(batch):
    out = di.sweep(biped_quantities, batch, chunk_size=4)
    one = jax.jit(biped_quantities)
    for k in range(N):
        p = jax.tree.map(lambda x: x[k], batch)
        # The batched program multiplies by the tree's constant matrices with the batch as one dimension, the single
        # one vector by vector: they round differently (ε each), and the solve for q̈ amplifies that by cond(M).
        single = one(p)
        for key, value in single.items():
            np.testing.assert_allclose(out[key][k], value, rtol=0, atol=1e-12 * float(np.max(np.abs(value))),
                                       err_msg=key)
        M = appendix_a_mass_matrix(p["q"], p["m"], 10.0, p["m_T"], 0.8, 0.4, 0.4)  # seed 003, eq. 26
        np.testing.assert_allclose(out["M"][k], M, rtol=0, atol=1e-12)
        np.testing.assert_allclose(out["T"][k], 0.5 * p["qdot"] @ M @ p["qdot"], rtol=1e-12)


def test_padding_repeats_valid_sets_and_is_dropped():
    # Zero padding would trip the model's own check (`m_H` must be positive); the last set is repeated instead.
    m_H = np.arange(1.0, 8.0)  # 7 sets, chunks of 3: the last chunk holds 1 set and 2 padding copies
    out = di.sweep(lambda m: di.BipedWithTorso(m_H=m).mass_matrix(jnp.zeros(5))[0, 0], m_H, chunk_size=3)
    np.testing.assert_allclose(out, 2 * 5.0 + m_H + 10.0, rtol=1e-15)  # M[0, 0] = total mass


def test_one_trace_for_all_chunks():
    traces = []

    def energy(model, p):
        traces.append(None)  # runs once per trace, not per evaluation
        return model.kinetic_energy(p["q"], p["qdot"])

    rng = np.random.default_rng(1)
    p = {"q": rng.uniform(-1, 1, (10, 4)), "qdot": rng.uniform(-1, 1, (10, 4))}
    fn = eqx.Partial(energy, di.CompassGait())
    first = di.sweep(fn, p, chunk_size=3)  # 4 chunks, the last one padded
    assert len(traces) == 1
    # Same function, new parameter values, another batch size and new model arrays: still no new trace.
    heavier = eqx.Partial(energy, di.CompassGait(m=10.0))
    p7 = jax.tree.map(lambda x: x[:7], p)
    second = di.sweep(heavier, p7, chunk_size=3)
    assert len(traces) == 1
    ref = jax.vmap(lambda q, qd: di.CompassGait(m=10.0).kinetic_energy(q, qd))(p7["q"], p7["qdot"])
    np.testing.assert_allclose(second, ref, rtol=1e-13)
    assert not np.allclose(first[:7], second)


def test_grid_product_order_and_reshape():
    a, b = np.array([1.0, 2.0, 3.0]), np.array([10.0, 20.0])
    batch, shape = di.grid(a=a, b=b)
    assert shape == (3, 2) and list(batch) == ["a", "b"]
    assert list(zip(batch["a"], batch["b"])) == list(itertools.product(a, b))
    out = di.sweep(lambda p: jnp.stack([p["a"] * p["b"], p["a"] - p["b"]]), batch, chunk_size=4)
    out = out.reshape(shape + out.shape[1:])
    np.testing.assert_array_equal(out[..., 0], np.outer(a, b))
    np.testing.assert_array_equal(out[..., 1], a[:, None] - b[None, :])


def test_progress_bar(capsys):
    di.sweep(jnp.sin, np.linspace(0, 1, 9), chunk_size=4, progress=True)
    assert "3/3" in capsys.readouterr().err


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(params={"a": np.zeros(3), "b": np.zeros(4)}), "params"),
        (dict(params={"a": np.zeros(3), "b": 1.0}), "params"),
        (dict(params={}), "params"),
        (dict(params=np.zeros(0)), "params"),
        (dict(chunk_size=0), "chunk_size"),
        (dict(chunk_size=-2), "chunk_size"),
        (dict(chunk_size=2.5), "chunk_size"),
        (dict(chunk_size=True), "chunk_size"),
        (dict(devices="gpu"), "devices"),
        (dict(devices=[]), "devices"),
        (dict(devices=[0, 1]), "devices"),
        (dict(fn=3.0), "fn"),
    ],
)
def test_bad_input(kwargs, name):
    args = dict(fn=jnp.sin, params=np.zeros(3)) | kwargs
    with pytest.raises((ValueError, TypeError), match=f"`{name}`"):
        di.sweep(args.pop("fn"), args.pop("params"), **args)


def test_bad_input_traced_and_grid():
    with pytest.raises(ValueError, match="`params`"):
        jax.jit(lambda x: di.sweep(jnp.sin, x))(np.zeros(3))
    with pytest.raises(ValueError, match="`b`"):
        di.grid(a=[1.0, 2.0], b=[[1.0]])
    with pytest.raises(ValueError, match="`b`"):
        di.grid(a=[1.0], b=[])
    with pytest.raises(ValueError, match="`grid`"):
        di.grid()


def test_error_names_the_failing_member():
    """An ``equinox.error_if`` inside ``fn`` (here the model's own check of `m`) names the member of the whole
    batch, its chunk and its index there; a batch whose other members are valid still runs."""
    masses = np.where(np.arange(11) == 6, -1.0, 1.0)
    energy = lambda m: di.BipedWithTorso(m=m).kinetic_energy(jnp.zeros(5), jnp.ones(5))
    with pytest.raises(eqx.EquinoxRuntimeError, match=r"member 6 of the batch \(chunk 1, index 2 in the chunk\) "
                       r"failed: `m` must be non-negative"):
        di.sweep(energy, masses, chunk_size=4)
    with pytest.raises(eqx.EquinoxRuntimeError, match=r"member 10 of the batch \(chunk 2, index 2 in the chunk\)"):
        di.sweep(energy, np.where(np.arange(11) == 10, -1.0, 1.0), chunk_size=4)  # the padded last chunk
    np.testing.assert_allclose(di.sweep(energy, np.abs(masses), chunk_size=4),
                               [di.BipedWithTorso(m=1.0).kinetic_energy(jnp.zeros(5), jnp.ones(5))] * 11, rtol=1e-14)


def test_vmap_with_throw_false_finds_the_failing_member():
    """The documented way under a plain ``jax.vmap``: ``throw=False`` and the ``result`` of each member."""
    M = jnp.stack([jnp.eye(3), jnp.diag(jnp.array([1.0, 1.0, 0.0])), 2 * jnp.eye(3)])  # member 1: q3 massless
    A = jnp.array([[1.0, 0.0, 0.0]])
    out = jax.vmap(lambda M: di.constrained_impact(M, A, jnp.ones(3), throw=False))(M)
    assert np.flatnonzero(out.result != di.ImpactResults.successful).tolist() == [1]


SHARDED = textwrap.dedent(
    """
    import jax, jax.numpy as jnp, numpy as np
    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_numpy_rank_promotion", "raise")
    import difimpact as di
    from tests.test_sweep import biped_quantities
    assert jax.device_count() == 4, jax.devices()

    rng = np.random.default_rng(7)
    n = 13
    batch = {"m": rng.uniform(1, 8, n), "m_T": rng.uniform(2, 15, n),
             "q": rng.uniform(-1, 1, (n, 5)), "qdot": rng.uniform(-2, 2, (n, 5))}
    # chunk_size counts sets per device; 4 and 8 are the batch sizes whose vectorised reductions round
    # differently on CPU, so sub-batches that did not match exactly would show up here.
    plain = di.sweep(biped_quantities, batch, chunk_size=4)
    for devices in ("all", jax.devices()[1:]):
        sharded = di.sweep(biped_quantities, batch, chunk_size=4, devices=devices)
        for key in plain:
            assert sharded[key].dtype == np.float64
            assert np.array_equal(sharded[key], plain[key]), (devices, key)

    # Each device maps its own contiguous slice of every chunk: 2 sets per device, chunks of 8; without a
    # chunk size, one chunk split evenly (4 sets per device).
    owner = lambda x: jax.lax.axis_index("batch")
    got = di.sweep(owner, np.arange(13.0), chunk_size=2, devices="all")
    assert got.tolist() == [0, 0, 1, 1, 2, 2, 3, 3, 0, 0, 1, 1, 2], got
    got = di.sweep(owner, np.arange(13.0), devices="all")
    assert got.tolist() == [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3], got

    # A root find inside (optimistix Newton in CrutchWalker.pre_impact_state, closure-converted by equinox), as
    # in the README's example: sharded over all 4 devices and over one, bitwise equal to the plain sweep, which
    # equals one-by-one evaluation.
    walker = di.CrutchWalker()

    def crutch(p):
        q, qdot = walker.pre_impact_state(p["q3"], p["q5dot"])
        return di.frictional_impact(walker, q, qdot, "Q", friction=di.Coulomb(p["mu"]))

    cb, _ = di.grid(q3=np.deg2rad([3.0, 12.0, 21.0]), q5dot=[-0.2, 0.4], mu=[0.5, 1.0])
    plain = di.sweep(crutch, cb, chunk_size=2)
    for devices in ("all", jax.devices()[:1]):
        sharded = di.sweep(crutch, cb, chunk_size=2, devices=devices)
        assert all(np.array_equal(a, b) for a, b in zip(jax.tree.leaves(plain), jax.tree.leaves(sharded)))
    one = jax.jit(crutch)(jax.tree.map(lambda x: x[5], cb))
    np.testing.assert_allclose(plain.normal_impulse[5], one.normal_impulse, rtol=1e-12)
    assert plain.normal_impulse[4] < 0.5 * plain.normal_impulse[5]  # q3 = 12°, q̇5 = −0.2: μ 0.5 slides, 1.0 sticks

    # The model's own checks still fire inside the sharded computation, naming the member (8 sets per chunk).
    masses = np.where(np.arange(13) == 9, -1.0, 1.0)
    try:
        di.sweep(lambda m: di.BipedWithTorso(m=m).mass_matrix(jnp.zeros(5)), masses, chunk_size=2, devices="all")
    except Exception as e:
        assert "member 9 of the batch (chunk 1, index 1 in the chunk) failed: `m` must be non-negative" in str(e), e
    else:
        raise AssertionError("negative mass accepted")
    print("SHARDED-OK")
    """
)


@pytest.mark.slow  # a process with four host devices compiling the sharded sweep (~14 s): CI's second stage
@pytest.mark.stage2
def test_sharded_equals_unsharded_on_four_host_devices():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, XLA_FLAGS=os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=4",
               JAX_PLATFORMS="cpu")
    run = subprocess.run([sys.executable, "-c", SHARDED], cwd=root, env=env, capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0 and "SHARDED-OK" in run.stdout, run.stdout + run.stderr[-4000:]
