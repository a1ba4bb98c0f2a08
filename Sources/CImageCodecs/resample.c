/* Halving and doubling rows for the decimated blur (DecimatedStripBlender): a 2x2 box average down, a bilinear
   doubling up. Each function is compiled for AVX-512 (VL: 8-float vectors, but one instruction to narrow 32-bit
   lanes to bytes), AVX2 and the baseline x86-64, and the variant is chosen on the first call by the CPU's
   features. Not `target_clones`: its ifunc resolver runs while the program is being loaded, before
   ThreadSanitizer's runtime is ready, and crashed the TSan build of the tests. */
#include "CImageCodecs.h"

#include <stdatomic.h>
#include <string.h>

typedef float sw_rs_v8f __attribute__((vector_size(32)));
typedef float sw_rs_v4f __attribute__((vector_size(16)));
typedef uint8_t sw_rs_v8u8 __attribute__((vector_size(8)));
typedef uint32_t sw_rs_v8u32 __attribute__((vector_size(32)));
typedef uint8_t sw_rs_v4u8 __attribute__((vector_size(4)));
typedef uint16_t sw_rs_v4u16 __attribute__((vector_size(8)));


#if defined(__x86_64__)
#define SW_RS_VARIANTS 1
#endif

static inline __attribute__((always_inline)) void sw_decimate_rows_body(const uint8_t *above, const uint8_t *below,
                                                                        uint8_t *out, int width, int channels) {
    const int ch = channels, pairs = width / 2;
    const size_t even = (size_t)pairs * 2 * (size_t)ch;
    if (ch == 1) {
        for (int i = 0; i < pairs; i++) {
            unsigned sum = (unsigned)above[2 * i] + above[2 * i + 1] + below[2 * i] + below[2 * i + 1];
            out[i] = (uint8_t)((sum + 2) >> 2);
        }
    } else {
        /* Four lanes a pixel (the fourth is the next pixel's first: overwritten by the next store); the last
           pair alone, so that nothing is read or written past the rows. */
        int i = 0;
        if (ch == 3) {
            for (; i + 1 < pairs; i++) {
                const uint8_t *a = above + (size_t)6 * (size_t)i, *b = below + (size_t)6 * (size_t)i;
                sw_rs_v4u8 a0, a1, b0, b1;
                memcpy(&a0, a, 4); memcpy(&a1, a + 3, 4); memcpy(&b0, b, 4); memcpy(&b1, b + 3, 4);
                sw_rs_v4u16 sum = __builtin_convertvector(a0, sw_rs_v4u16) + __builtin_convertvector(a1, sw_rs_v4u16)
                    + __builtin_convertvector(b0, sw_rs_v4u16) + __builtin_convertvector(b1, sw_rs_v4u16) + 2;
                sw_rs_v4u8 r = __builtin_convertvector(sum >> 2, sw_rs_v4u8);
                memcpy(out + (size_t)3 * (size_t)i, &r, 4);
            }
        }
        for (; i < pairs; i++) {
            const uint8_t *a = above + (size_t)2 * (size_t)i * (size_t)ch, *b = below + (size_t)2 * (size_t)i * (size_t)ch;
            uint8_t *o = out + (size_t)i * (size_t)ch;
            for (int c = 0; c < ch; c++) {
                unsigned sum = (unsigned)a[c] + a[c + ch] + b[c] + b[c + ch];
                o[c] = (uint8_t)((sum + 2) >> 2);
            }
        }
    }
    if (width % 2) {
        /* The last column alone: its own average down the two rows. */
        for (int c = 0; c < ch; c++) {
            out[(size_t)pairs * (size_t)ch + (size_t)c] = (uint8_t)(((unsigned)above[even + (size_t)c] + below[even + (size_t)c] + 1) >> 1);
        }
    }
}

/* orig + weight (value - orig), clamped to 0...255 and rounded to the nearest (ties to even), as the blur
   kernels' blend does: 8 samples. */
static inline __attribute__((always_inline)) void sw_rs_blend8(const uint8_t *orig, const float *values, float weight,
                                                               uint8_t *out) {
    sw_rs_v8u8 bytes;
    sw_rs_v8f value;
    memcpy(&bytes, orig, sizeof bytes);
    memcpy(&value, values, sizeof value);
    sw_rs_v8f o = __builtin_convertvector(bytes, sw_rs_v8f);
    sw_rs_v8f v = o + weight * (value - o);
    v = __builtin_elementwise_min(__builtin_elementwise_max(v, (sw_rs_v8f){0, 0, 0, 0, 0, 0, 0, 0}),
                                  (sw_rs_v8f){255, 255, 255, 255, 255, 255, 255, 255});
    v += 12582912.0f;
    sw_rs_v8u32 bits;
    memcpy(&bits, &v, sizeof bits);
    sw_rs_v8u8 result = __builtin_convertvector(bits, sw_rs_v8u8);
    memcpy(out, &result, sizeof result);
}

static inline __attribute__((always_inline)) uint8_t sw_rs_blend1(uint8_t orig, float value, float weight) {
    float o = (float)orig, v = o + weight * (value - o);
    v = v < 0 ? 0 : (v > 255 ? 255 : v);
    return (uint8_t)__builtin_nearbyintf(v);
}

static inline __attribute__((always_inline)) void sw_double_blend_row_body(
    const uint8_t *orig, const uint8_t *above, const uint8_t *below, float below_share, float weight, uint8_t *out,
    int half_width, int width, int channels, float *scratch) {
    const int ch = channels;
    const size_t half_samples = (size_t)half_width * (size_t)ch, samples = (size_t)width * (size_t)ch;
    float *vertical = scratch, *doubled = scratch + half_samples + (size_t)ch + 16;
    const float t = below_share;
    for (size_t s = 0; s < half_samples; s++) {
        float a = (float)above[s];
        vertical[s] = a + t * ((float)below[s] - a);
    }
    for (int c = 0; c < ch; c++) vertical[half_samples + (size_t)c] = vertical[half_samples - (size_t)ch + (size_t)c];
    const int pairs = (width - 1) / 2;
    if (ch == 1) {
        /* Pixel 0, then 16 pixels (2i + 1 ... 2i + 16) from half pixels i ... i + 8, then the rest one by one. */
        out[0] = sw_rs_blend1(orig[0], vertical[0], weight);
        int i = 0;
        for (; i + 8 <= pairs; i += 8) {
            sw_rs_v8f p, q;
            memcpy(&p, vertical + i, sizeof p);
            memcpy(&q, vertical + i + 1, sizeof q);
            sw_rs_v8f a = 0.75f * p + 0.25f * q, b = 0.25f * p + 0.75f * q;
            sw_rs_v8f both[2] = {__builtin_shufflevector(a, b, 0, 8, 1, 9, 2, 10, 3, 11),
                                 __builtin_shufflevector(a, b, 4, 12, 5, 13, 6, 14, 7, 15)};
            sw_rs_blend8(orig + 2 * i + 1, (const float *)&both[0], weight, out + 2 * i + 1);
            sw_rs_blend8(orig + 2 * i + 9, (const float *)&both[1], weight, out + 2 * i + 9);
        }
        for (; i < pairs; i++) {
            float p = vertical[i], q = vertical[i + 1];
            out[2 * i + 1] = sw_rs_blend1(orig[2 * i + 1], 0.75f * p + 0.25f * q, weight);
            out[2 * i + 2] = sw_rs_blend1(orig[2 * i + 2], 0.25f * p + 0.75f * q, weight);
        }
        if ((width - 1) % 2) {
            out[2 * pairs + 1] = sw_rs_blend1(orig[2 * pairs + 1], 0.75f * vertical[pairs] + 0.25f * vertical[pairs + 1], weight);
        }
        return;
    }
    /* Three channels: four lanes a pixel (the fourth overwritten by the next store), then the blend. */
    for (int c = 0; c < ch; c++) doubled[c] = vertical[c];
    for (int i = 0; i < pairs; i++) {
        sw_rs_v4f p, q;
        memcpy(&p, vertical + (size_t)i * (size_t)ch, sizeof p);
        memcpy(&q, vertical + (size_t)(i + 1) * (size_t)ch, sizeof q);
        sw_rs_v4f a = 0.75f * p + 0.25f * q, b = 0.25f * p + 0.75f * q;
        memcpy(doubled + (size_t)(2 * i + 1) * (size_t)ch, &a, sizeof a);
        memcpy(doubled + (size_t)(2 * i + 2) * (size_t)ch, &b, sizeof b);
    }
    if ((width - 1) % 2) {
        const float *p = vertical + (size_t)pairs * (size_t)ch;
        for (int c = 0; c < ch; c++) doubled[(size_t)(2 * pairs + 1) * (size_t)ch + (size_t)c] = 0.75f * p[c] + 0.25f * p[c + ch];
    }
    size_t j = 0;
    for (; j + 8 <= samples; j += 8) {
        sw_rs_blend8(orig + j, doubled + j, weight, out + j);
    }
    for (; j < samples; j++) out[j] = sw_rs_blend1(orig[j], doubled[j], weight);
}

/* The variants, and the choice among them (made once; a relaxed atomic, as any thread may make it first). */
#ifdef SW_RS_VARIANTS
#define SW_RS_AVX512 __attribute__((target("avx512vl,avx512f,avx2,fma")))
#define SW_RS_AVX2 __attribute__((target("avx2,fma")))

SW_RS_AVX512 static void sw_decimate_rows_avx512(const uint8_t *above, const uint8_t *below, uint8_t *out, int width,
                                                 int channels) {
    sw_decimate_rows_body(above, below, out, width, channels);
}
SW_RS_AVX2 static void sw_decimate_rows_avx2(const uint8_t *above, const uint8_t *below, uint8_t *out, int width,
                                             int channels) {
    sw_decimate_rows_body(above, below, out, width, channels);
}
SW_RS_AVX512 static void sw_double_blend_row_avx512(const uint8_t *orig, const uint8_t *above, const uint8_t *below,
                                                    float below_share, float weight, uint8_t *out, int half_width,
                                                    int width, int channels, float *scratch) {
    sw_double_blend_row_body(orig, above, below, below_share, weight, out, half_width, width, channels, scratch);
}
SW_RS_AVX2 static void sw_double_blend_row_avx2(const uint8_t *orig, const uint8_t *above, const uint8_t *below,
                                                float below_share, float weight, uint8_t *out, int half_width,
                                                int width, int channels, float *scratch) {
    sw_double_blend_row_body(orig, above, below, below_share, weight, out, half_width, width, channels, scratch);
}
#endif

static void sw_decimate_rows_baseline(const uint8_t *above, const uint8_t *below, uint8_t *out, int width,
                                      int channels) {
    sw_decimate_rows_body(above, below, out, width, channels);
}
static void sw_double_blend_row_baseline(const uint8_t *orig, const uint8_t *above, const uint8_t *below,
                                         float below_share, float weight, uint8_t *out, int half_width, int width,
                                         int channels, float *scratch) {
    sw_double_blend_row_body(orig, above, below, below_share, weight, out, half_width, width, channels, scratch);
}

/* 0: not chosen yet; 1: baseline; 2: AVX2; 3: AVX-512. */
static atomic_int sw_rs_level;

static int sw_rs_chosen_level(void) {
    int level = atomic_load_explicit(&sw_rs_level, memory_order_relaxed);
    if (level) return level;
    level = 1;
#ifdef SW_RS_VARIANTS
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512f")) {
        level = 3;
    } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        level = 2;
    }
#endif
    atomic_store_explicit(&sw_rs_level, level, memory_order_relaxed);
    return level;
}

void sw_decimate_rows(const uint8_t *above, const uint8_t *below, uint8_t *out, int width, int channels) {
    switch (sw_rs_chosen_level()) {
#ifdef SW_RS_VARIANTS
    case 3: sw_decimate_rows_avx512(above, below, out, width, channels); return;
    case 2: sw_decimate_rows_avx2(above, below, out, width, channels); return;
#endif
    default: sw_decimate_rows_baseline(above, below, out, width, channels); return;
    }
}

void sw_double_blend_row(const uint8_t *orig, const uint8_t *above, const uint8_t *below, float below_share,
                         float weight, uint8_t *out, int half_width, int width, int channels, float *scratch) {
    switch (sw_rs_chosen_level()) {
#ifdef SW_RS_VARIANTS
    case 3:
        sw_double_blend_row_avx512(orig, above, below, below_share, weight, out, half_width, width, channels, scratch);
        return;
    case 2:
        sw_double_blend_row_avx2(orig, above, below, below_share, weight, out, half_width, width, channels, scratch);
        return;
#endif
    default:
        sw_double_blend_row_baseline(orig, above, below, below_share, weight, out, half_width, width, channels, scratch);
        return;
    }
}
