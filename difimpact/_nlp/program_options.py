"""XLA's options for the program of a whole solve (an optimal gait), passed to its ``jit``.

On a CPU, loop fusions through XLA's elemental emitter rather than its MLIR fusion emitters: Kelly's problem then
compiles in about 15 % less time and solves about 20 % faster, the seven-link human's quick mesh solves about 20 %
faster (``benchmarks/RESULTS.md``, measured apart). The option is ignored on other devices. For a multi-phase gait
also LLVM's optimisation, whatever a process's flags ask (the test suite asks for level 0, a short compile): at
level 0 the seven-link human's quick-mesh solve costs 4.5 times its optimised CPU time, more than the compile
saves."""

SOLVE_PROGRAM_OPTIONS = {"xla_cpu_use_fusion_emitters": False}
OPTIMISED_SOLVE_PROGRAM_OPTIONS = {**SOLVE_PROGRAM_OPTIONS, "xla_backend_optimization_level": 2}
