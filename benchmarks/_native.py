"""The native Pinocchio baseline: ``native/impulse.cpp`` (``pinocchio::impulseDynamics`` in a compiled loop on
one thread) built against the headers and libraries that the ``pin`` wheel ships, and run on given states.

The program is compiled with one ``g++`` line (no CMake needed) into ``native/build/`` and rebuilt when the
source or the compiler line changes. The Eigen headers come from the ``cmeel-eigen`` wheel (the ``bench``
extra); Pinocchio's own templates are instantiated in the program (header-only use, ``-O3 -march=native``),
so the loop is compiled for this CPU as XLA compiles difimpact's. The model is built in Python from the same
URDF as the Python-loop baseline and handed over with ``pinocchio.Model.saveToBinary`` (Boost serialization;
the wheel ships no URDF headers).
"""

import hashlib
import json
import os
import shutil
import subprocess
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "native", "impulse.cpp")
BUILD = os.path.join(HERE, "native", "build")
# The compile definitions of the pinocchio::pinocchio_headers CMake target of the wheel.
DEFINES = ["BOOST_MPL_LIMIT_LIST_SIZE=30", "BOOST_MPL_LIMIT_VECTOR_SIZE=30", "BOOST_MPL_CFG_NO_PREPROCESSED_HEADERS",
           "BOOST_FUSION_INVOKE_MAX_ARITY=12"]
FLAGS = ["-O3", "-march=native", "-DNDEBUG", "-std=c++17", "-w"]


def prefix() -> str:
    """The ``cmeel.prefix`` folder of the installed wheels (``include/pinocchio``, ``lib/libboost_*``)."""
    import cmeel

    path = os.path.join(os.path.dirname(os.path.dirname(cmeel.__file__)), "cmeel.prefix")
    if not os.path.isdir(os.path.join(path, "include", "pinocchio")):
        raise RuntimeError(f"no Pinocchio headers under {path}: install the `pin` wheel")
    if not os.path.isdir(os.path.join(path, "include", "eigen3")):
        raise RuntimeError(f"no Eigen headers under {path}: `pip install cmeel-eigen` (the `bench` extra)")
    return path


def command(out: str) -> list[str]:
    """The ``g++`` line that builds ``native/impulse.cpp`` into ``out``."""
    p = prefix()
    lib = os.path.join(p, "lib")
    return [os.environ.get("CXX", "g++"), *FLAGS, *(f"-D{d}" for d in DEFINES), f"-I{p}/include",
            f"-I{p}/include/eigen3", SOURCE, "-o", out, f"-L{lib}", f"-Wl,-rpath,{lib}", "-lboost_serialization"]


def build() -> str:
    """Compile the program unless an up-to-date binary exists; return its path."""
    with open(SOURCE, "rb") as f:
        key = hashlib.sha256(f.read() + " ".join(command("")).encode()).hexdigest()[:16]
    exe = os.path.join(BUILD, f"impulse-{key}")
    cmd = command(exe + ".tmp")
    if not os.path.exists(exe):
        if shutil.which(cmd[0]) is None:
            raise RuntimeError(f"no C++ compiler {cmd[0]!r} (set CXX)")
        os.makedirs(BUILD, exist_ok=True)
        subprocess.run(cmd, check=True)
        os.replace(exe + ".tmp", exe)
    return exe


def impulse_dynamics(model, frame: str, q: np.ndarray, qdot: np.ndarray, repeats: int = 20
                     ) -> tuple[np.ndarray, float, float]:
    """Run the native loop over the states ``q, q̇`` (``(n, nq)``, ``(n, nv)`` float64) with the Pinocchio
    ``model``, the contact point being the frame named ``frame``: the post-impact velocities, and the median
    wall and process-CPU seconds per impact of ``repeats`` loops."""
    exe = build()
    with tempfile.TemporaryDirectory() as tmp:
        paths = [os.path.join(tmp, name) for name in ("model.bin", "states.bin", "out.bin")]
        model.saveToBinary(paths[0])
        q, qdot = np.ascontiguousarray(q, np.float64), np.ascontiguousarray(qdot, np.float64)
        np.concatenate([[len(q)], q.ravel(), qdot.ravel()]).tofile(paths[1])
        done = subprocess.run([exe, paths[0], frame, *paths[1:], str(repeats)], check=True, capture_output=True, text=True)
        timing = json.loads(done.stdout)
        qdot_plus = np.fromfile(paths[2]).reshape(qdot.shape)
    return qdot_plus, timing["wall_s"] / len(q), timing["cpu_s"] / len(q)
