"""Batched and sharded evaluation of any JAX function over many parameter sets.

``sweep`` is a host-side driver: it slices the batch into chunks on the host, evaluates each chunk with one
compiled ``vmap`` (optionally split over a 1-D device mesh with ``shard_map``) and writes the results into
preallocated NumPy arrays, so device memory is bounded by one chunk whatever the batch size.
"""

import functools
from collections.abc import Callable, Sequence
from typing import Any, Literal, Optional, Union

import equinox as eqx
import jax
import numpy as np
from jax.experimental import multihost_utils
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from ._validation import count, flag

_AXIS = "batch"


@eqx.filter_jit
def _evaluate(fn, chunk, mesh):
    """``vmap(fn)`` over one chunk; with a mesh, every device maps its own contiguous slice of the chunk."""
    if mesh is None:
        return jax.vmap(fn)(chunk)
    # Arrays held by `fn` (an equinox Module or eqx.Partial) are traced here: pass them into shard_map
    # explicitly, replicated, rather than closing over tracers.
    dynamic, static = eqx.partition(fn, eqx.is_array)
    per_device = jax.tree.map(lambda x: jax.ShapeDtypeStruct((x.shape[0] // mesh.size,) + x.shape[1:], x.dtype), chunk)
    # The per-device program is traced here, outside the manual mesh: inside shard_map every value's type carries
    # the mesh, and equinox's closure conversion (optimistix root finds, lineax solves) rejects constants built
    # without it ("called with different dynamic arguments"). shard_map then only evaluates the traced program.
    program, out_shape = jax.make_jaxpr(
        lambda dynamic, chunk: jax.vmap(eqx.combine(dynamic, static))(chunk),
        axis_env=[(_AXIS, mesh.size)], return_shape=True,
    )(dynamic, per_device)

    def run(dynamic, chunk):
        out = jax.core.eval_jaxpr(program.jaxpr, program.consts, *jax.tree.leaves((dynamic, chunk)))
        return jax.tree.unflatten(jax.tree.structure(out_shape), out)

    # check_vma=False: with no collectives there is nothing to check, and the replication check rejects
    # ordinary library code such as eqx.error_if (a cond whose branches differ in device variance).
    specs = (PartitionSpec(), PartitionSpec(_AXIS))
    return jax.shard_map(
        run, mesh=mesh, in_specs=specs, out_specs=PartitionSpec(_AXIS), check_vma=False
    )(dynamic, chunk)


def _mesh(devices) -> Optional[Mesh]:
    if devices is None:
        return None
    if isinstance(devices, str):
        if devices != "all":
            raise ValueError(f"`devices` must be None, 'all' or a sequence of jax devices, got {devices!r}.")
        devices = jax.devices()
    devices = list(devices) if isinstance(devices, Sequence) else devices
    if (
        not isinstance(devices, list)
        or not devices
        or not all(isinstance(d, jax.Device) for d in devices)
        or len(set(devices)) != len(devices)
    ):
        raise ValueError(
            f"`devices` must be None, 'all' or a non-empty sequence of distinct jax devices, got {devices!r}."
        )
    return Mesh(np.array(devices), (_AXIS,))


def _batch_leaves(params) -> list[np.ndarray]:
    leaves = jax.tree.leaves(params)
    if not leaves:
        raise ValueError("`params` must be a pytree with at least one array leaf.")
    if any(isinstance(leaf, jax.core.Tracer) for leaf in leaves):
        raise ValueError(
            "`params` must hold concrete arrays: sweep is a host-side driver and cannot run inside "
            "jit/vmap/grad (use jax.vmap there)."
        )
    for path, leaf in jax.tree_util.tree_flatten_with_path(params)[0]:
        kind = np.asarray(leaf).dtype.kind if not isinstance(leaf, (str, bytes)) else "U"
        if kind not in "biufc":
            raise TypeError(f"`params{jax.tree_util.keystr(path)}` is {type(leaf).__name__} of dtype kind {kind!r}: "
                            "every leaf of `params` must be a numeric array (batched); pass other settings to "
                            "`fn` by closure or `functools.partial`.")
    leaves = [np.asarray(leaf) for leaf in leaves]
    shapes = [leaf.shape for leaf in leaves]
    if any(len(s) == 0 for s in shapes) or len({s[0] for s in shapes}) != 1 or shapes[0][0] == 0:
        raise ValueError(
            "`params` leaves must share a non-empty leading batch axis, got leaf shapes "
            f"{[tuple(s) for s in shapes]}."
        )
    # The dtypes jit would use anyway (float32 when x64 is off), so that sharded and plain inputs agree.
    return [leaf.astype(jax.dtypes.canonicalize_dtype(leaf.dtype), copy=False) for leaf in leaves]


def _to_host(x: jax.Array) -> np.ndarray:
    # A sharded result spanning several processes is gathered so that every process gets all of it.
    return np.asarray(x) if x.is_fully_addressable else multihost_utils.process_allgather(x, tiled=True)


def sweep(
    fn: Callable[[Any], Any],
    params: Any,
    *,
    chunk_size: Optional[int] = None,
    progress: bool = False,
    devices: Union[None, Literal["all"], Sequence[jax.Device]] = None,
) -> Any:
    """Evaluate ``fn`` on every parameter set of a batch, in memory-bounded chunks, optionally sharded.

    Equivalent to ``jax.vmap(fn)(params)``, but the batch is cut into chunks of ``chunk_size`` sets evaluated one
    after the other by a single compiled ``jax.vmap(fn)``: the last chunk is padded (by repeating the last
    parameter set, which keeps the padding valid input) to the same size instead of being recompiled, and the
    padding is dropped from the results. A second sweep with the same ``fn`` and chunk size compiles nothing.

    With ``devices``, the sweep runs on a 1-D ``jax.sharding.Mesh`` with axis ``"batch"``: each chunk holds
    ``chunk_size`` sets **per device** (``chunk_size × len(devices)`` in all) and is evaluated with
    ``jax.shard_map``, every device mapping its own contiguous slice with no communication (``fn`` may read
    ``jax.lax.axis_index("batch")``). Because each device then runs the very program of the unsharded sweep on
    the very same sub-batches, the results are bitwise identical to ``sweep(fn, params, chunk_size=chunk_size)``
    whatever the devices (of one kind). This is why the chunk is counted per device: XLA's vectorised code on
    CPU rounds reductions differently for different batch sizes, so splitting one fixed chunk over the devices
    would change the last bits. With ``chunk_size=None`` the batch is split evenly over the devices in one chunk,
    and the results agree with the unsharded sweep to rounding only.

    **Multi-host.** Under ``jax.distributed`` run the same script in every process: call
    ``jax.distributed.initialize()`` first, then ``sweep(fn, params, devices="all", ...)`` with the same ``fn``,
    ``params`` and ``chunk_size`` in every process (e.g. from :func:`grid`, or from a seeded generator). The mesh
    spans the devices of all hosts (``jax.devices()``), each process feeds only its own devices' slices of every
    chunk (``jax.make_array_from_callback``), and the results are gathered so that every process returns the
    full arrays. The progress bar is shown by process 0 only. A list of local devices instead gives independent
    per-process sweeps.

    **Arguments:**

    - `fn`: a JAX function of one parameter set (a pytree like one slice of ``params``) returning a pytree of
      arrays, e.g. ``lambda p: BipedWithTorso(m=p["m"]).mass_matrix(q)``. Functions are compared by identity
      for caching; an equinox Module or ``eqx.Partial`` may carry arrays, which are traced, not baked in.
    - `params`: a pytree whose array leaves share a leading batch axis of size ``N``.
    - `chunk_size`: sets per chunk and per device (a positive integer); every chunk, even for a batch smaller
      than ``chunk_size``, has this size. ``None`` evaluates the whole batch as one chunk.
    - `progress`: show a tqdm progress bar over the chunks.
    - `devices`: ``None`` (the default device, no sharding), ``"all"`` (every device of every process), or a
      sequence of distinct ``jax.Device``.

    **Returns:** the outputs of ``fn`` stacked along a new leading axis of size ``N``, as a pytree of **NumPy**
    arrays in host memory (so a long sweep never holds more than one chunk on the devices).

    **Raises:** an error raised inside ``fn`` by ``equinox.error_if`` (invalid input, or a map called with
    ``throw=True`` that failed) stops the sweep with ``equinox.EquinoxRuntimeError("sweep: member i of the batch
    (chunk c, index j in the chunk) failed: <message>")``: the failed chunk is bisected with its own compiled
    program to find the first member that fails alone. To keep going past failures instead, call the maps with
    ``throw=False`` and read their ``result`` (``np.flatnonzero(out.result != di.ImpactResults.successful)``).

    **Example:**

    ```python
    import math
    import numpy as np
    import difimpact as di

    walker = di.CrutchWalker()
    q, qdot = walker.pre_impact_state(q3=math.radians(12), q5dot=-0.2)
    hit = lambda mu: di.frictional_impact(walker, q, qdot, "Q", friction=di.Coulomb(mu))
    print(di.sweep(hit, np.array([0.5, 0.75, 1.0]), chunk_size=2).normal_impulse)  # [4.005 14.155 14.155] N s
    ```
    """
    if not callable(fn):
        raise ValueError(f"`fn` must be callable, got {type(fn).__name__}.")
    chunk_size = None if chunk_size is None else count("chunk_size", chunk_size)
    flag("progress", progress)
    leaves, treedef, mesh = _batch_leaves(params), jax.tree.structure(params), _mesh(devices)
    n, n_devices = leaves[0].shape[0], 1 if mesh is None else mesh.size
    size = n_devices * (-(-n // n_devices) if chunk_size is None else int(chunk_size))
    sharding = None if mesh is None else NamedSharding(mesh, PartitionSpec(_AXIS))
    run = functools.partial(_run_chunk, fn, leaves, treedef, mesh, sharding)
    return _chunked(run, n, size, progress and jax.process_index() == 0)


def _chunked(run, n: int, size: int, show: bool) -> Any:
    """``run`` on the chunks of ``size`` indices of a batch of ``n`` (the last padded by repeating index ``n − 1``),
    the results gathered in host memory, the padding dropped; a failing chunk is bisected to name its first failing
    member (:func:`_which_member`). `show`: a tqdm progress bar over the chunks."""
    starts = range(0, n, size)
    if show:
        try:  # imported here: the library needs tqdm only for the bar; tqdm.auto warns at import without ipywidgets
            from tqdm.auto import tqdm
        except ImportError as err:
            raise ImportError("`progress=True` needs tqdm: pip install tqdm, or the extra 'difimpact[papers]'") from err

        starts = tqdm(starts, desc="sweep", unit="chunk")
    results, out_def = None, None
    for c, start in enumerate(starts):
        stop = min(start + size, n)
        index = np.minimum(np.arange(start, start + size), n - 1)
        try:
            out_leaves, out_def = jax.tree.flatten(run(index))
            out_leaves = [_to_host(o) for o in out_leaves]
        except eqx.EquinoxRuntimeError as error:
            raise _which_member(run, index, stop - start, c, error) from error
        if results is None:
            results = [np.empty((n,) + o.shape[1:], o.dtype) for o in out_leaves]
        for dst, src in zip(results, out_leaves):
            dst[start:stop] = src[: stop - start]
    return jax.tree.unflatten(out_def, results)


def _run_chunk(fn, leaves, treedef, mesh, sharding, index):
    """``_evaluate`` on the parameter sets ``index`` (one chunk's worth), results still on the devices."""
    chunk = [leaf[index] for leaf in leaves]
    if sharding is not None:
        chunk = [jax.make_array_from_callback(c.shape, sharding, c.__getitem__) for c in chunk]
    return jax.block_until_ready(_evaluate(fn, jax.tree.unflatten(treedef, chunk), mesh))


def _which_member(run, index, valid, chunk, error) -> eqx.EquinoxRuntimeError:
    """The error of a failed chunk, naming the first member that fails on its own.

    Bisection over the chunk's `valid` members with the chunk's compiled program (a sub-range is padded to the
    chunk size by repeating its last member, as the last chunk is): ``log₂(chunk size)`` evaluations, no new
    compilation. Assumes that whether a member fails does not depend on the others.
    """

    def fails(lo, hi):
        sub = index[lo:hi]
        try:
            run(np.concatenate([sub, np.full(len(index) - len(sub), sub[-1])]))
        except eqx.EquinoxRuntimeError:
            return True
        return False

    lo, hi = 0, valid
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if fails(lo, mid) else (mid, hi)
    text = str(error)
    marker = "EquinoxRuntimeError: "
    message = text[text.index(marker) + len(marker):].split("\n\n-----")[0] if marker in text else text
    if not fails(lo, lo + 1):
        return eqx.EquinoxRuntimeError(f"sweep: chunk {chunk} failed (no single member fails alone): {message}")
    return eqx.EquinoxRuntimeError(
        f"sweep: member {int(index[lo])} of the batch (chunk {chunk}, index {lo} in the chunk) failed: {message}"
    )


def grid(**axes) -> tuple[dict[str, np.ndarray], tuple[int, ...]]:
    """Cartesian product of 1-D parameter axes, flattened into a batch for :func:`sweep`.

    ``grid(a=A, b=B)`` returns ``({"a": a, "b": b}, (len(A), len(B)))`` where ``a[k], b[k]`` run over all pairs in
    ``"ij"`` order (the last axis varies fastest). Reshape a sweep's output ``y`` with
    ``y.reshape(shape + y.shape[1:])`` so that ``y[i, j] = fn({"a": A[i], "b": B[j]})``.

    **Arguments:** one keyword per axis, each a non-empty 1-D array.

    **Returns:** ``(batch, shape)``: a dict of flattened NumPy arrays (keyword order kept) and the grid shape.
    """
    if not axes:
        raise ValueError("`grid` needs at least one keyword axis, e.g. grid(q3=..., mu=...).")
    arrays = {name: np.asarray(values) for name, values in axes.items()}
    for name, a in arrays.items():
        if a.ndim != 1 or a.size == 0:
            raise ValueError(f"grid axis `{name}` must be a non-empty 1-D array, got shape {a.shape}.")
        if np.issubdtype(a.dtype, np.number) and not np.all(np.isfinite(a)):
            raise ValueError(f"grid axis `{name}` contains NaN or infinite entries.")
    shape = tuple(a.size for a in arrays.values())
    mesh = np.meshgrid(*arrays.values(), indexing="ij")
    return {name: m.reshape(-1) for name, m in zip(arrays, mesh)}, shape
