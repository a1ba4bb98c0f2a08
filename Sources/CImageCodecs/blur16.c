/* The tilt-shift's kernels for 16-bit samples (issue #32: 16 bits kept). Only the kernels that read or write
   samples differ from the 8-bit ones (blur_kernels.h): the horizontal passes (samples in, floats out) and the
   blends (floats in, samples out). The vertical passes work on floats whatever the samples were, so a 16-bit
   table (sw_blur_kernels16_for) takes them from the 8-bit table of the same variant. Sample pointers keep the
   table's uint8_t type: here they point at host-order uint16_t samples (rows of 2 bytes a sample, aligned to 2).

   Floats hold samples on the 0...65535 scale (a float's 24 bits keep 8 bits below a 16-bit level). RGBA is
   blurred premultiplied, as at 8 bits. These kernels are plain C, vectorised by the compiler where it can: the
   horizontal recursion interleaves a pixel's channels, the blends are elementwise. */
#include "CImageCodecs.h"

#include <pthread.h>
#include <stddef.h>
#include <string.h>

#define SW16_MAX 65535.0f

static inline float sw16_clamp(float v) { return v < 0 ? 0 : (v > SW16_MAX ? SW16_MAX : v); }

/* Rounded to the nearest level (ties away from zero: v is never negative here). */
static inline uint16_t sw16_round(float v) { return (uint16_t)(sw16_clamp(v) + 0.5f); }

/* Row `src` (`samples` uint16_t) as floats into `out`, RGBA premultiplied by its alpha. */
static void sw16_load_row(const uint8_t *src, float *out, size_t samples, int channels) {
    const uint16_t *s = (const uint16_t *)(const void *)src;
    for (size_t j = 0; j < samples; j++) out[j] = (float)s[j];
    if (channels == 4) {
        for (size_t j = 0; j < samples; j += 4) {
            float a = out[j + 3] * (1.0f / SW16_MAX);
            out[j] *= a;
            out[j + 1] *= a;
            out[j + 2] *= a;
        }
    }
}

typedef float sw16_v4f __attribute__((vector_size(16)));

static inline sw16_v4f sw16_splat(float x) { return (sw16_v4f){x, x, x, x}; }

/* The recursive Gaussian along rows, four rows at a time (a vector's lanes are the four rows' same sample, so the
   recursion's dependent steps serve four rows): the rows' samples go as floats into `scratch` transposed (RGBA
   premultiplied), forward then backward in place there (each backward step reads the forward value of its own
   sample only), Triggs-Sdika at the right edge, the left edge repeated, as the 8-bit horizontal pass does; then
   back out into the float rows. `scratch` holds 4 × width × channels floats (sw_blur_scratch_bytes has room). */
static void sw16_horizontal(const sw_recursive_gaussian *gp, const uint8_t *const *src, float *const *dst, int rows,
                            int width, int channels, void *scratch) {
    const sw_recursive_gaussian g = *gp;
    const sw16_v4f b = sw16_splat(g.b), a1 = sw16_splat(g.a1), a2 = sw16_splat(g.a2), a3 = sw16_splat(g.a3);
    const int ch = channels;
    const size_t samples = (size_t)width * (size_t)ch;
    float *t = (float *)scratch;
#define SW16_LOAD(j) ({ sw16_v4f v_; __builtin_memcpy(&v_, t + 4 * (j), sizeof v_); v_; })
#define SW16_STORE(j, v) do { sw16_v4f s_ = (v); __builtin_memcpy(t + 4 * (j), &s_, sizeof s_); } while (0)
    for (int r0 = 0; r0 < rows; r0 += 4) {
        const int n = rows - r0 < 4 ? rows - r0 : 4;
        for (int k = 0; k < 4; k++) {
            const uint16_t *row = (const uint16_t *)(const void *)src[r0 + (k < n ? k : n - 1)];
            for (size_t j = 0; j < samples; j++) t[4 * j + (size_t)k] = (float)row[j];
        }
        if (ch == 4) {
            for (size_t j = 0; j < samples; j += 4) {
                sw16_v4f alpha = SW16_LOAD(j + 3) * sw16_splat(1.0f / SW16_MAX);
                for (size_t c = 0; c < 3; c++) SW16_STORE(j + c, SW16_LOAD(j + c) * alpha);
            }
        }
        sw16_v4f p1[4], p2[4], p3[4], q1[4], q2[4], q3[4], edge[4];
        const size_t last = samples - (size_t)ch;
        for (int c = 0; c < ch; c++) {
            p1[c] = p2[c] = p3[c] = SW16_LOAD((size_t)c);
            edge[c] = SW16_LOAD(last + (size_t)c);
        }
        for (size_t j = 0; j < samples; j += (size_t)ch) {
            for (int c = 0; c < ch; c++) {
                sw16_v4f v = (b * SW16_LOAD(j + (size_t)c) + a3 * p3[c] + a2 * p2[c]) + a1 * p1[c];
                SW16_STORE(j + (size_t)c, v);
                p3[c] = p2[c];
                p2[c] = p1[c];
                p1[c] = v;
            }
        }
        for (int c = 0; c < ch; c++) {
            sw16_v4f e = edge[c], d0 = p1[c] - e, d1 = p2[c] - e, d2 = p3[c] - e;
            q1[c] = e + sw16_splat(g.m[0]) * d0 + sw16_splat(g.m[1]) * d1 + sw16_splat(g.m[2]) * d2;
            q2[c] = e + sw16_splat(g.m[3]) * d0 + sw16_splat(g.m[4]) * d1 + sw16_splat(g.m[5]) * d2;
            q3[c] = e + sw16_splat(g.m[6]) * d0 + sw16_splat(g.m[7]) * d1 + sw16_splat(g.m[8]) * d2;
            SW16_STORE(last + (size_t)c, q1[c]);
        }
        for (size_t x = (size_t)width - 1; x-- > 0;) {
            for (int c = ch - 1; c >= 0; c--) {
                size_t j = x * (size_t)ch + (size_t)c;
                sw16_v4f v = (b * SW16_LOAD(j) + a3 * q3[c] + a2 * q2[c]) + a1 * q1[c];
                q3[c] = q2[c];
                q2[c] = q1[c];
                q1[c] = v;
                SW16_STORE(j, v);
            }
        }
        for (int k = 0; k < n; k++) {
            float *out = dst[r0 + k];
            for (size_t j = 0; j < samples; j++) out[j] = t[4 * j + (size_t)k];
        }
    }
#undef SW16_LOAD
#undef SW16_STORE
}

/* The exact horizontal pass: the row's floats with `radius` pixels repeated at each end, then the taps. */
static void sw16_fir_horizontal(const sw_fir_gaussian *g, const uint8_t *const *src, float *const *dst, int rows,
                                int width, int channels, void *scratch) {
    const int radius = g->radius, ch = channels;
    const size_t samples = (size_t)width * (size_t)ch;
    const size_t margin = (size_t)radius * (size_t)ch;
    float *p = (float *)scratch + margin;
    for (int r = 0; r < rows; r++) {
        sw16_load_row(src[r], p, samples, ch);
        for (int k = 1; k <= radius; k++) {
            for (int c = 0; c < ch; c++) {
                p[-(ptrdiff_t)k * ch + c] = p[c];
                p[samples - (size_t)ch + (size_t)k * (size_t)ch + (size_t)c] = p[samples - (size_t)ch + (size_t)c];
            }
        }
        float *out = dst[r];
        for (size_t j = 0; j < samples; j++) {
            float acc = g->taps[0] * p[j];
            for (int k = 1; k <= radius; k++) {
                size_t d = (size_t)k * (size_t)ch;
                acc += g->taps[k] * (p[j - d] + p[j + d]);
            }
            out[j] = acc;
        }
    }
}

static void sw16_blend(const uint8_t *orig8, const float *blurred, uint8_t *out8, float weight, size_t begin,
                       size_t end) {
    const uint16_t *orig = (const uint16_t *)(const void *)orig8;
    uint16_t *out = (uint16_t *)(void *)out8;
    /* out may be orig, sample for sample (each is read before it is written): safe to vectorise. */
#pragma clang loop vectorize(assume_safety)
    for (size_t j = begin; j < end; j++) {
        float o = (float)orig[j];
        out[j] = sw16_round(o + weight * (blurred[j] - o));
    }
}

/* A premultiplied pixel `v` (alpha last) divided by its alpha, rounded into `out`. */
static inline void sw16_store_unpremultiplied(float v[4], uint16_t *out) {
    float alpha = sw16_clamp(v[3]);
    if (alpha < 1e-3f) {
        out[0] = out[1] = out[2] = out[3] = 0;
        return;
    }
    float scale = SW16_MAX / alpha;
    for (int c = 0; c < 3; c++) out[c] = sw16_round(v[c] * scale);
    out[3] = sw16_round(alpha);
}

static void sw16_blend_premultiplied(const uint8_t *orig8, const float *blurred, uint8_t *out8, float weight,
                                     size_t begin, size_t end) {
    const uint16_t *orig = (const uint16_t *)(const void *)orig8;
    uint16_t *out = (uint16_t *)(void *)out8;
    for (size_t i = begin; i < end; i += 4) {
        float k = (float)orig[i + 3] * (1.0f / SW16_MAX);
        float v[4];
        for (int c = 0; c < 4; c++) {
            float o = (float)orig[i + (size_t)c] * (c == 3 ? 1.0f : k);
            v[c] = o + weight * (blurred[i + (size_t)c] - o);
        }
        sw16_store_unpremultiplied(v, out + i);
    }
}

/* A weight m takes level m count, interpolated between the two levels around it (level 0 is `o`). */
static inline float sw16_level_value(float o, const float *const *levels, int count, float m, size_t j) {
    float acc = o, previous = o;
    for (int k = 0; k < count; k++) {
        float c = m - (float)k;
        c = c < 0 ? 0 : (c > 1 ? 1 : c);
        acc += c * (levels[k][j] - previous);
        previous = levels[k][j];
    }
    return acc;
}

static void sw16_blend_levels(const uint8_t *orig8, const float *const *levels, int count, const float *weights,
                              uint8_t *out8, size_t begin, size_t end) {
    const uint16_t *orig = (const uint16_t *)(const void *)orig8;
    uint16_t *out = (uint16_t *)(void *)out8;
#pragma clang loop vectorize(assume_safety)
    for (size_t j = begin; j < end; j++) {
        out[j] = sw16_round(sw16_level_value((float)orig[j], levels, count, weights[j] * (float)count, j));
    }
}

static void sw16_blend_levels_premultiplied(const uint8_t *orig8, const float *const *levels, int count,
                                            const float *weights, uint8_t *out8, size_t begin, size_t end) {
    const uint16_t *orig = (const uint16_t *)(const void *)orig8;
    uint16_t *out = (uint16_t *)(void *)out8;
    for (size_t i = begin; i < end; i += 4) {
        float k = (float)orig[i + 3] * (1.0f / SW16_MAX);
        float m = weights[i] * (float)count;
        float v[4];
        for (int c = 0; c < 4; c++) {
            float o = (float)orig[i + (size_t)c] * (c == 3 ? 1.0f : k);
            v[c] = sw16_level_value(o, levels, count, m, i + (size_t)c);
        }
        sw16_store_unpremultiplied(v, out + i);
    }
}

static sw_blur_kernels sw16_tables[2];
static int sw16_chosen[2];
static pthread_once_t sw16_once = PTHREAD_ONCE_INIT;

static void sw16_make_tables(void) {
    const int levels[2] = {SW_SIMD_BASELINE, SW_SIMD_AUTO};
    for (int i = 0; i < 2; i++) {
        sw_blur_kernels table = *sw_blur_kernels_for(levels[i], &sw16_chosen[i]);
        table.horizontal = sw16_horizontal;
        table.fir_horizontal = sw16_fir_horizontal;
        table.blend = sw16_blend;
        table.blend_premultiplied = sw16_blend_premultiplied;
        table.blend_levels = sw16_blend_levels;
        table.blend_levels_premultiplied = sw16_blend_levels_premultiplied;
        sw16_tables[i] = table;
    }
}

const sw_blur_kernels *sw_blur_kernels16_for(int level, int *chosen) {
    pthread_once(&sw16_once, sw16_make_tables);
    int i = level == SW_SIMD_BASELINE ? 0 : 1;
    if (level == SW_SIMD_AVX2 && sw16_chosen[1] != SW_SIMD_AVX2) i = 0;
    if (chosen != NULL) *chosen = sw16_chosen[i];
    return &sw16_tables[i];
}

/* MARK: 16 bits to 8, dithered */

/* The 8x8 Bayer matrix: thresholds 0...63. */
static const uint8_t sw16_bayer[8][8] = {
    {0, 32, 8, 40, 2, 34, 10, 42},  {48, 16, 56, 24, 50, 18, 58, 26}, {12, 44, 4, 36, 14, 46, 6, 38},
    {60, 28, 52, 20, 62, 30, 54, 22}, {3, 35, 11, 43, 1, 33, 9, 41},  {51, 19, 59, 27, 49, 17, 57, 25},
    {15, 47, 7, 39, 13, 45, 5, 37},  {63, 31, 55, 23, 61, 29, 53, 21},
};

void sw_dither16_to_8(const uint16_t *src, uint8_t *dst, size_t pixels, int channels, int row) {
    const uint8_t *thresholds = sw16_bayer[row & 7];
    for (size_t x = 0; x < pixels; x++) {
        /* v × 255 / 65535 on the 8-bit scale plus a threshold in [0, 1) from the matrix, then truncated: a value
           between two 8-bit levels becomes the upper one in its share of the pixels (on average, the value). */
        float offset = ((float)thresholds[x & 7] + 0.5f) * (1.0f / 64.0f);
        for (int c = 0; c < channels; c++) {
            size_t j = x * (size_t)channels + (size_t)c;
            float v = (float)src[j] * (255.0f / 65535.0f) + offset;
            dst[j] = (uint8_t)(v > 255.0f ? 255.0f : v);
        }
    }
}
