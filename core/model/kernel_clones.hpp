#pragma once

// Hot loops built for several x86-64 levels, the dynamic loader picking the best the CPU has
// (GCC's target_clones): AVX-512 (x86-64-v4), AVX2+FMA (x86-64-v3) or the baseline SSE2. The
// baseline has two double lanes; AVX-512 has eight and 32 vector registers, which loops keeping
// a dozen double accumulators need (1.9x the AVX2 build on 65,536 float32 reductions,
// benchmarks/RESULTS.md, "Reduction kernels").
// Not under ThreadSanitizer: the clones' resolver runs while the dynamic loader relocates the
// program, before TSan's runtime is up, and its instrumented code crashes there
// (scripts/tsan.sh).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
#define RULESTREAM_KERNEL_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define RULESTREAM_KERNEL_CLONES
#endif

// What a cloned kernel calls must be inlined into it: a function (or lambda) of its own would be
// compiled for the baseline ISA only.
#define RULESTREAM_INLINE_LAMBDA __attribute__((always_inline))
