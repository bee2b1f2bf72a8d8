"""XLA's options for the program of a whole solve (an optimal gait), passed to its top-level ``jit``.

On a CPU, loop fusions through XLA's elemental emitter rather than its MLIR fusion emitters: these solves compile
in less time and run faster so (the figures: ``benchmarks/RESULTS.md``). The option is ignored on other devices.
For a multi-phase gait also LLVM's default optimisation, whatever a process's flags ask (the test suite asks for
level 0, a short compile): at level 0 the seven-link human's solve costs several times its optimised run, more
than the compile saves."""

SOLVE_PROGRAM_OPTIONS = {"xla_cpu_use_fusion_emitters": False}
OPTIMISED_SOLVE_PROGRAM_OPTIONS = {**SOLVE_PROGRAM_OPTIONS, "xla_backend_optimization_level": 2}
