"""Kelly's five-link biped (OptimTraj demo/fiveLinkBiped; Kelly, SIAM Review 59(4), 2017, section 7) solved by
CasADi + IPOPT on successively finer meshes: the reference numbers for tests and benchmarks.

    python benchmarks/kelly_reference.py [--tol 1e-10] [--quick]

Hermite-Simpson (separated) on Kelly's mesh (6 segments) from MAIN.m's guess, then 12, 24, 48, 96, 192
segments (and Kelly's second mesh, 15), each from the previous solution interpolated; trapezoid on 10 grid
points from MAIN.m's guess, then 25, 50, 100, 200, 400, each from the previous. Every mesh is also solved from
MAIN.m's guess directly ("cold"). Prints one table; writes nothing. The model, transcription and IPOPT options
are in ``_kelly_ipopt.py``. Kelly reports J = 469.5507 on his first mesh (fmincon, TolFun 1e-3).
"""

import argparse
import os
import platform
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import casadi
from _kelly_ipopt import kelly_problem

KELLY_PUBLISHED = 469.5507


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tol", type=float, default=1e-10, help="IPOPT tol (default 1e-10)")
    ap.add_argument("--quick", action="store_true", help="coarse meshes only")
    args = ap.parse_args()

    hs_meshes = [6, 12, 24, 48] if args.quick else [6, 12, 24, 48, 96, 192]
    tr_meshes = [10, 25, 50] if args.quick else [10, 25, 50, 100, 200, 400]
    runs = [("hermite-simpson", s, "segments") for s in hs_meshes[:1]] + [("hermite-simpson", 15, "segments")]
    runs += [("hermite-simpson", s, "segments") for s in hs_meshes[1:]]
    runs += [("trapezoid", n, "grid points") for n in tr_meshes]

    print(f"Kelly's five-link biped, CasADi {casadi.__version__} + IPOPT (MUMPS, exact Hessian), tol {args.tol:g}; "
          f"{platform.processor() or platform.machine()}, Python {platform.python_version()}")
    print("IPOPT s = CasADi's stats()['t_wall_total'] for the nlpsol call (IPOPT plus the function evaluations it "
          "requests); build s = building the NLP and the IPOPT instance (expand to SX)")
    hdr = (f"{'method':16s} {'mesh':>5s} {'nGrid':>5s} {'n_z':>5s} {'cost (warm)':>18s} {'it':>4s} {'IPOPT s':>8s} "
           f"{'max viol':>8s} {'cost (cold, MAIN.m guess)':>26s} {'it':>4s} {'IPOPT s':>8s} {'build s':>7s}  status")
    print(hdr)
    print("-" * len(hdr))
    prev = {"hermite-simpson": None, "trapezoid": None}
    best = {}
    rows = []
    for method, mesh, _unit in runs:
        w = time.perf_counter()
        prob = kelly_problem(method, segments=mesh) if method == "hermite-simpson" else kelly_problem(method, n_grid=mesh)
        prob.solver(args.tol)
        build = time.perf_counter() - w
        cold = prob.solve(tol=args.tol)
        src = prev[method] if not (method == "hermite-simpson" and mesh == 15) else best.get("hs6")
        warm = prob.solve(guess=src, tol=args.tol) if src is not None else cold
        if method == "hermite-simpson" and mesh == 6:
            best["hs6"] = warm
        if mesh != 15:
            prev[method] = warm
        rows.append((method, mesh, warm))
        status = warm["status"] if warm["status"] == cold["status"] else f"{warm['status']} / cold {cold['status']}"
        print(f"{method:16s} {mesh:5d} {prob.n_grid:5d} {prob.n_z:5d} {warm['cost']:18.10f} {warm['iterations']:4d} "
              f"{warm['ipopt_time_s']:8.3f} {warm['max_violation']:8.1e} {cold['cost']:26.10f} {cold['iterations']:4d} "
              f"{cold['ipopt_time_s']:8.3f} {build:7.2f}  {status}", flush=True)

    for method in ("hermite-simpson", "trapezoid"):
        seq = [(m, s) for meth, m, s in rows if meth == method and not (method == "hermite-simpson" and m == 15)]
        ref_mesh, ref = seq[-1]
        print(f"\n{method}: cost minus the finest mesh's ({ref_mesh}: {ref['cost']:.10f}), and the ratio of "
              "successive differences")
        last = None
        for m, s in seq[:-1]:
            d = s["cost"] - ref["cost"]
            ratio = f"{last / d:6.2f}" if last not in (None, 0.0) and d != 0.0 else "      "
            print(f"  {m:5d}  {d:+.3e}  {ratio}")
            last = d
    hs6 = best["hs6"]
    print(f"\nKelly's mesh (HS, 6 segments): IPOPT {hs6['cost']:.10f} vs Kelly's published {KELLY_PUBLISHED} "
          f"(fmincon, TolFun 1e-3): difference {KELLY_PUBLISHED - hs6['cost']:+.4f} "
          f"({(KELLY_PUBLISHED - hs6['cost']) / hs6['cost']:+.1e} relative)")


if __name__ == "__main__":
    main()
