/* The recursive Gaussian's kernels, in two variants chosen at run time: AVX2 + FMA where the CPU has them,
   the baseline x86-64 (SSE2) otherwise. The kernels themselves are in blur_kernels.h. */
#include "CImageCodecs.h"

#include <stdlib.h>
#include <string.h>

/* The baseline variant passes 8-float vectors between functions that are always inlined: no ABI is involved. */
#pragma clang diagnostic ignored "-Wpsabi"

typedef float sw_v8f __attribute__((vector_size(32)));
typedef float sw_v4f __attribute__((vector_size(16)));
typedef uint8_t sw_v8u8 __attribute__((vector_size(8)));
typedef uint8_t sw_v4u8 __attribute__((vector_size(4)));
typedef uint32_t sw_v8u32 __attribute__((vector_size(32)));
typedef uint32_t sw_v4u32 __attribute__((vector_size(16)));

#define SW_TARGET
#define SW_NAME(x) sw_baseline_##x
#define SW_CHAINS 1
#include "blur_kernels.h"
#undef SW_TARGET
#undef SW_NAME
#undef SW_CHAINS

#if defined(__x86_64__) || defined(__i386__)
#define SW_HAVE_AVX2_VARIANT 1
#define SW_TARGET __attribute__((target("avx2,fma")))
#define SW_NAME(x) sw_avx2_##x
#define SW_CHAINS 2
#include "blur_kernels.h"
#undef SW_TARGET
#undef SW_NAME
#undef SW_CHAINS
#endif

static int sw_cpu_has_avx2(void) {
#if SW_HAVE_AVX2_VARIANT
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    return 0;
#endif
}

const sw_blur_kernels *sw_blur_kernels_for(int level, int *chosen) {
    int avx2 = level != SW_SIMD_BASELINE && sw_cpu_has_avx2();
    if (chosen != NULL) *chosen = avx2 ? SW_SIMD_AVX2 : SW_SIMD_BASELINE;
#if SW_HAVE_AVX2_VARIANT
    if (avx2) return &sw_avx2_kernels;
#endif
    return &sw_baseline_kernels;
}

size_t sw_blur_scratch_bytes(int width, int channels) {
    /* Recursive: 2 * width vectors of 8 floats for the forward values, then one row (plus a float) for padding
       rows. Exact: one row with SW_FIR_MAX_RADIUS pixels repeated at each end and a vector of slack. */
    size_t recursive = (size_t)16 * (size_t)width + (size_t)width * (size_t)channels + 16;
    size_t exact = ((size_t)width + 2 * SW_FIR_MAX_RADIUS) * (size_t)channels + 16;
    return (recursive > exact ? recursive : exact) * sizeof(float);
}
