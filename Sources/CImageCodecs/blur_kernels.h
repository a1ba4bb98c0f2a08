/*
 * The pixel kernels of the recursive Gaussian and the tilt-shift blend, written once and compiled twice by
 * blur.c: for the baseline x86-64 (SSE2) and for AVX2 + FMA (chosen at run time). Before including this
 * file, define SW_TARGET (a function attribute: empty or target("avx2,fma")) and SW_NAME(x) (the variant's
 * name for x). Everything here is static: each variant is a closed copy.
 *
 * Vectors are 8 floats (GCC/Clang vector extensions): one AVX register, two SSE registers. SW_CHAINS is the
 * number of independent recursions the horizontal pass interleaves (latency hiding): 2 with AVX, 1 with SSE
 * (where one vector already is two registers, and two chains would not fit in the sixteen).
 *
 * Every kernel copies the coefficients into a local first: stores through float pointers could otherwise
 * alias them, and the compiler would load them again at every step.
 */

#define SW_INLINE static inline __attribute__((always_inline)) SW_TARGET

/* MARK: helpers */

SW_INLINE sw_v8f SW_NAME(load8)(const float *p) {
    sw_v8f v;
    __builtin_memcpy(&v, p, sizeof v);
    return v;
}

SW_INLINE void SW_NAME(store8)(float *p, sw_v8f v) { __builtin_memcpy(p, &v, sizeof v); }

SW_INLINE sw_v8f SW_NAME(bytes8)(const uint8_t *p) {
    sw_v8u8 b;
    __builtin_memcpy(&b, p, sizeof b);
    return __builtin_convertvector(b, sw_v8f);
}

SW_INLINE sw_v4f SW_NAME(bytes4)(const uint8_t *p) {
    sw_v4u8 b;
    __builtin_memcpy(&b, p, sizeof b);
    return __builtin_convertvector(b, sw_v4f);
}


SW_INLINE sw_v8f SW_NAME(splat8)(float x) { return (sw_v8f){x, x, x, x, x, x, x, x}; }
SW_INLINE sw_v4f SW_NAME(splat4)(float x) { return (sw_v4f){x, x, x, x}; }

/* Clamps to 0...255 and rounds to the nearest integer (ties to even): adding 1.5 * 2^23 leaves the rounded
   value in the low bits of the float's bit pattern. */
SW_INLINE sw_v8u8 SW_NAME(round8)(sw_v8f v) {
    v = __builtin_elementwise_min(__builtin_elementwise_max(v, SW_NAME(splat8)(0)), SW_NAME(splat8)(255));
    v += 12582912.0f;
    sw_v8u32 bits;
    __builtin_memcpy(&bits, &v, sizeof bits);
    return __builtin_convertvector(bits, sw_v8u8);
}

SW_INLINE sw_v4u8 SW_NAME(round4)(sw_v4f v) {
    v = __builtin_elementwise_min(__builtin_elementwise_max(v, SW_NAME(splat4)(0)), SW_NAME(splat4)(255));
    v += 12582912.0f;
    sw_v4u32 bits;
    __builtin_memcpy(&bits, &v, sizeof bits);
    return __builtin_convertvector(bits, sw_v4u8);
}

/* Transposes an 8x8 block held in eight vectors (row i in r[i]) in place. */
SW_INLINE void SW_NAME(transpose8)(sw_v8f r[8]) {
    sw_v8f t0 = __builtin_shufflevector(r[0], r[1], 0, 8, 1, 9, 4, 12, 5, 13);
    sw_v8f t1 = __builtin_shufflevector(r[0], r[1], 2, 10, 3, 11, 6, 14, 7, 15);
    sw_v8f t2 = __builtin_shufflevector(r[2], r[3], 0, 8, 1, 9, 4, 12, 5, 13);
    sw_v8f t3 = __builtin_shufflevector(r[2], r[3], 2, 10, 3, 11, 6, 14, 7, 15);
    sw_v8f t4 = __builtin_shufflevector(r[4], r[5], 0, 8, 1, 9, 4, 12, 5, 13);
    sw_v8f t5 = __builtin_shufflevector(r[4], r[5], 2, 10, 3, 11, 6, 14, 7, 15);
    sw_v8f t6 = __builtin_shufflevector(r[6], r[7], 0, 8, 1, 9, 4, 12, 5, 13);
    sw_v8f t7 = __builtin_shufflevector(r[6], r[7], 2, 10, 3, 11, 6, 14, 7, 15);
    sw_v8f u0 = __builtin_shufflevector(t0, t2, 0, 1, 8, 9, 4, 5, 12, 13);
    sw_v8f u1 = __builtin_shufflevector(t0, t2, 2, 3, 10, 11, 6, 7, 14, 15);
    sw_v8f u2 = __builtin_shufflevector(t1, t3, 0, 1, 8, 9, 4, 5, 12, 13);
    sw_v8f u3 = __builtin_shufflevector(t1, t3, 2, 3, 10, 11, 6, 7, 14, 15);
    sw_v8f u4 = __builtin_shufflevector(t4, t6, 0, 1, 8, 9, 4, 5, 12, 13);
    sw_v8f u5 = __builtin_shufflevector(t4, t6, 2, 3, 10, 11, 6, 7, 14, 15);
    sw_v8f u6 = __builtin_shufflevector(t5, t7, 0, 1, 8, 9, 4, 5, 12, 13);
    sw_v8f u7 = __builtin_shufflevector(t5, t7, 2, 3, 10, 11, 6, 7, 14, 15);
    r[0] = __builtin_shufflevector(u0, u4, 0, 1, 2, 3, 8, 9, 10, 11);
    r[1] = __builtin_shufflevector(u1, u5, 0, 1, 2, 3, 8, 9, 10, 11);
    r[2] = __builtin_shufflevector(u2, u6, 0, 1, 2, 3, 8, 9, 10, 11);
    r[3] = __builtin_shufflevector(u3, u7, 0, 1, 2, 3, 8, 9, 10, 11);
    r[4] = __builtin_shufflevector(u0, u4, 4, 5, 6, 7, 12, 13, 14, 15);
    r[5] = __builtin_shufflevector(u1, u5, 4, 5, 6, 7, 12, 13, 14, 15);
    r[6] = __builtin_shufflevector(u2, u6, 4, 5, 6, 7, 12, 13, 14, 15);
    r[7] = __builtin_shufflevector(u3, u7, 4, 5, 6, 7, 12, 13, 14, 15);
}

/* The Triggs-Sdika values after the end of a sequence that repeats x_end forever, from its last three
   forward values f0 = f[N-1], f1 = f[N-2], f2 = f[N-3]. */
SW_INLINE void SW_NAME(end_values)(const sw_recursive_gaussian *g, sw_v8f x_end, sw_v8f f0, sw_v8f f1, sw_v8f f2,
                                   sw_v8f *y0, sw_v8f *y1, sw_v8f *y2) {
    sw_v8f d0 = f0 - x_end, d1 = f1 - x_end, d2 = f2 - x_end;
    *y0 = x_end + g->m[0] * d0 + g->m[1] * d1 + g->m[2] * d2;
    *y1 = x_end + g->m[3] * d0 + g->m[4] * d1 + g->m[5] * d2;
    *y2 = x_end + g->m[6] * d0 + g->m[7] * d1 + g->m[8] * d2;
}

/* One step of the recursion: b*x + a3*p3 + a2*p2 + a1*p1 (p1 last: it is the one the next step waits for). */
SW_INLINE sw_v8f SW_NAME(step)(const sw_recursive_gaussian *g, sw_v8f x, sw_v8f p1, sw_v8f p2, sw_v8f p3) {
    return (g->b * x + g->a3 * p3 + g->a2 * p2) + g->a1 * p1;
}

/* One step of the backward recursion from forward value f, shifting the three previous outputs; the first
   step (the right edge) is the Triggs-Sdika value already in q1. */
SW_INLINE sw_v8f SW_NAME(backward_step)(const sw_recursive_gaussian *g, sw_v8f f, sw_v8f *q1, sw_v8f *q2, sw_v8f *q3,
                                        int first) {
    if (first) return *q1;
    sw_v8f value = SW_NAME(step)(g, f, *q1, *q2, *q3);
    *q3 = *q2;
    *q2 = *q1;
    *q1 = value;
    return value;
}

#define SW_LOCAL_COEFFICIENTS(g) const sw_recursive_gaussian local_ = *(g); g = &local_

/* MARK: horizontal pass */

/* Gray: 8 * SW_CHAINS rows at a time, each chain eight rows (one vector holds one column of eight rows); the input
   and the output are transposed 8x8 block by block. `scratch` holds 2 * width vectors. */
SW_TARGET static void SW_NAME(horizontal_gray)(const sw_recursive_gaussian *g, const uint8_t *const *src,
                                                 float *const *dst, int width, sw_v8f *scratch) {
    SW_LOCAL_COEFFICIENTS(g);
    const int w = width;
    const int blocks = w / 8; /* full 8-column blocks; the rest column by column */
    sw_v8f p1[SW_CHAINS], p2[SW_CHAINS], p3[SW_CHAINS], last[SW_CHAINS];
    for (int c = 0; c < SW_CHAINS; c++) {
        sw_v8f x0;
        for (int r = 0; r < 8; r++) x0[r] = (float)src[8 * c + r][0];
        p1[c] = p2[c] = p3[c] = x0;
    }
    /* Forward. */
    for (int k = 0; k < blocks; k++) {
        sw_v8f cols[SW_CHAINS][8];
        for (int c = 0; c < SW_CHAINS; c++) {
            for (int r = 0; r < 8; r++) cols[c][r] = SW_NAME(bytes8)(src[8 * c + r] + 8 * k);
            SW_NAME(transpose8)(cols[c]);
        }
        for (int i = 0; i < 8; i++) {
            for (int c = 0; c < SW_CHAINS; c++) {
                sw_v8f v = SW_NAME(step)(g, cols[c][i], p1[c], p2[c], p3[c]);
                scratch[SW_CHAINS * (8 * k + i) + c] = v;
                p3[c] = p2[c]; p2[c] = p1[c]; p1[c] = v;
            }
        }
    }
    for (int x = 8 * blocks; x < w; x++) {
        for (int c = 0; c < SW_CHAINS; c++) {
            sw_v8f v;
            for (int r = 0; r < 8; r++) v[r] = (float)src[8 * c + r][x];
            sw_v8f value = SW_NAME(step)(g, v, p1[c], p2[c], p3[c]);
            scratch[SW_CHAINS * x + c] = value;
            p3[c] = p2[c]; p2[c] = p1[c]; p1[c] = value;
        }
    }
    for (int c = 0; c < SW_CHAINS; c++) {
        for (int r = 0; r < 8; r++) last[c][r] = (float)src[8 * c + r][w - 1];
    }
    /* Backward, from the Triggs-Sdika values at the right edge. */
    sw_v8f q1[SW_CHAINS], q2[SW_CHAINS], q3[SW_CHAINS];
    for (int c = 0; c < SW_CHAINS; c++) SW_NAME(end_values)(g, last[c], p1[c], p2[c], p3[c], &q1[c], &q2[c], &q3[c]);
    /* The tail columns (right of the last full block), one by one. */
    int x = w - 1;
    int tail_end = 8 * blocks;
    int first_output = 1;
    for (; x >= tail_end; x--) {
        for (int c = 0; c < SW_CHAINS; c++) {
            sw_v8f value = SW_NAME(backward_step)(g, scratch[SW_CHAINS * x + c], &q1[c], &q2[c], &q3[c], first_output);
            for (int r = 0; r < 8; r++) dst[8 * c + r][x] = value[r];
        }
        first_output = 0;
    }
    for (int k = blocks - 1; k >= 0; k--) {
        sw_v8f cols[SW_CHAINS][8];
        for (int i = 7; i >= 0; i--) {
            int xi = 8 * k + i;
            for (int c = 0; c < SW_CHAINS; c++) {
                cols[c][i] = SW_NAME(backward_step)(g, scratch[SW_CHAINS * xi + c], &q1[c], &q2[c], &q3[c], first_output);
            }
            first_output = 0;
        }
        for (int c = 0; c < SW_CHAINS; c++) {
            SW_NAME(transpose8)(cols[c]);
            for (int r = 0; r < 8; r++) SW_NAME(store8)(dst[8 * c + r] + 8 * k, cols[c][r]);
        }
    }
}

/* RGB or RGBA: one pixel's channels in four lanes, two rows in a vector, SW_CHAINS vectors: 2 * SW_CHAINS rows.
   RGBA is premultiplied by its alpha on the way in. `scratch` holds 2 * width vectors. An RGB row is read
   one byte past its last pixel and written one float past it (the caller leaves room for both). */
SW_INLINE void SW_NAME(horizontal_color)(const sw_recursive_gaussian *g, const uint8_t *const *src,
                                          float *const *dst, int width, const int channels, sw_v8f *scratch) {
    SW_LOCAL_COEFFICIENTS(g);
    const int w = width, ch = channels;
    const int premultiply = ch == 4;
#define SW_PIXEL(row, x) ({                                                                  \
        sw_v4f v_ = SW_NAME(bytes4)((row) + ch * (x));                                      \
        if (premultiply) { float k_ = v_[3] * (1.0f / 255); v_ *= (sw_v4f){k_, k_, k_, 1}; }  \
        v_; })
#define SW_PAIR(c, x) __builtin_shufflevector(SW_PIXEL(src[2 * (c)], x), SW_PIXEL(src[2 * (c) + 1], x), 0, 1, 2, 3, 4, 5, 6, 7)
    sw_v8f p1[SW_CHAINS], p2[SW_CHAINS], p3[SW_CHAINS], last[SW_CHAINS];
    for (int c = 0; c < SW_CHAINS; c++) {
        sw_v8f x0 = SW_PAIR(c, 0);
        p1[c] = p2[c] = p3[c] = x0;
    }
    for (int x = 0; x < w; x++) {
        for (int c = 0; c < SW_CHAINS; c++) {
            sw_v8f v = SW_PAIR(c, x);
            sw_v8f value = SW_NAME(step)(g, v, p1[c], p2[c], p3[c]);
            scratch[SW_CHAINS * x + c] = value;
            p3[c] = p2[c]; p2[c] = p1[c]; p1[c] = value;
            if (x == w - 1) last[c] = v;
        }
    }
    sw_v8f q1[SW_CHAINS], q2[SW_CHAINS], q3[SW_CHAINS];
    for (int c = 0; c < SW_CHAINS; c++) SW_NAME(end_values)(g, last[c], p1[c], p2[c], p3[c], &q1[c], &q2[c], &q3[c]);
    /* Stores go right to left; an RGB store writes four floats, the fourth being the red of the pixel to
       its right, already final: it is written again with the same value. */
    sw_v8f right[SW_CHAINS];
    for (int c = 0; c < SW_CHAINS; c++) right[c] = q1[c];
    for (int x = w - 1; x >= 0; x--) {
        for (int c = 0; c < SW_CHAINS; c++) {
            sw_v8f value = SW_NAME(backward_step)(g, scratch[SW_CHAINS * x + c], &q1[c], &q2[c], &q3[c], x == w - 1);
            sw_v8f stored = ch == 4 ? value : __builtin_shufflevector(value, right[c], 0, 1, 2, 8, 4, 5, 6, 12);
            sw_v4f low = __builtin_shufflevector(stored, stored, 0, 1, 2, 3);
            sw_v4f high = __builtin_shufflevector(stored, stored, 4, 5, 6, 7);
            __builtin_memcpy(dst[2 * c] + ch * x, &low, sizeof low);
            __builtin_memcpy(dst[2 * c + 1] + ch * x, &high, sizeof high);
            right[c] = value;
        }
    }
#undef SW_PAIR
#undef SW_PIXEL
}

SW_TARGET static void SW_NAME(horizontal_rgb)(const sw_recursive_gaussian *g, const uint8_t *const *src,
                                              float *const *dst, int width, sw_v8f *scratch) {
    SW_NAME(horizontal_color)(g, src, dst, width, 3, scratch);
}

SW_TARGET static void SW_NAME(horizontal_rgba)(const sw_recursive_gaussian *g, const uint8_t *const *src,
                                               float *const *dst, int width, sw_v8f *scratch) {
    SW_NAME(horizontal_color)(g, src, dst, width, 4, scratch);
}

/* MARK: vertical pass and blend */

SW_TARGET static void SW_NAME(forward)(const sw_recursive_gaussian *g, float *row, const float *p1, const float *p2,
                                       const float *p3, size_t begin, size_t end) {
    SW_LOCAL_COEFFICIENTS(g);
    for (size_t j = begin; j < end; j += 16) {
        sw_v8f a = SW_NAME(step)(g, SW_NAME(load8)(row + j), SW_NAME(load8)(p1 + j), SW_NAME(load8)(p2 + j), SW_NAME(load8)(p3 + j));
        sw_v8f b = SW_NAME(step)(g, SW_NAME(load8)(row + j + 8), SW_NAME(load8)(p1 + j + 8), SW_NAME(load8)(p2 + j + 8),
                                 SW_NAME(load8)(p3 + j + 8));
        SW_NAME(store8)(row + j, a);
        SW_NAME(store8)(row + j + 8, b);
    }
}

SW_TARGET static void SW_NAME(backward)(const sw_recursive_gaussian *g, const float *f, float *out, const float *q1,
                                        const float *q2, const float *q3, size_t begin, size_t end) {
    SW_LOCAL_COEFFICIENTS(g);
    for (size_t j = begin; j < end; j += 16) {
        sw_v8f a = SW_NAME(step)(g, SW_NAME(load8)(f + j), SW_NAME(load8)(q1 + j), SW_NAME(load8)(q2 + j), SW_NAME(load8)(q3 + j));
        sw_v8f b = SW_NAME(step)(g, SW_NAME(load8)(f + j + 8), SW_NAME(load8)(q1 + j + 8), SW_NAME(load8)(q2 + j + 8),
                                 SW_NAME(load8)(q3 + j + 8));
        SW_NAME(store8)(out + j, a);
        SW_NAME(store8)(out + j + 8, b);
    }
}

SW_TARGET static void SW_NAME(end)(const sw_recursive_gaussian *g, const float *x_end, const float *f0, const float *f1,
                                   const float *f2, float *y0, float *y1, float *y2, size_t begin, size_t end) {
    SW_LOCAL_COEFFICIENTS(g);
    for (size_t j = begin; j < end; j += 8) {
        sw_v8f a, b, c;
        SW_NAME(end_values)(g, SW_NAME(load8)(x_end + j), SW_NAME(load8)(f0 + j), SW_NAME(load8)(f1 + j), SW_NAME(load8)(f2 + j), &a, &b, &c);
        SW_NAME(store8)(y0 + j, a);
        SW_NAME(store8)(y1 + j, b);
        SW_NAME(store8)(y2 + j, c);
    }
}

/* out = orig + weight * (blurred - orig), rounded, for samples [begin, end) of a gray or RGB row. */
SW_TARGET static void SW_NAME(blend)(const uint8_t *orig, const float *blurred, uint8_t *out, float weight,
                                     size_t begin, size_t end) {
    size_t j = begin;
    sw_v8f w = SW_NAME(splat8)(weight);
    for (; j + 8 <= end; j += 8) {
        sw_v8f o = SW_NAME(bytes8)(orig + j);
        sw_v8u8 r = SW_NAME(round8)(o + w * (SW_NAME(load8)(blurred + j) - o));
        __builtin_memcpy(out + j, &r, sizeof r);
    }
    for (; j < end; j++) {
        float o = (float)orig[j];
        float v = o + weight * (blurred[j] - o);
        v = v < 0 ? 0 : (v > 255 ? 255 : v);
        out[j] = (uint8_t)__builtin_nearbyintf(v);
    }
}

/* RGBA: blend premultiplied, then divide by the blended alpha. [begin, end) in samples, multiples of 4. */
SW_TARGET static void SW_NAME(blend_premultiplied)(const uint8_t *orig, const float *blurred, uint8_t *out,
                                                   float weight, size_t begin, size_t end) {
    for (size_t i = begin; i < end; i += 4) {
        sw_v4f o = SW_NAME(bytes4)(orig + i);
        float k = o[3] * (1.0f / 255);
        o *= (sw_v4f){k, k, k, 1};
        sw_v4f b;
        __builtin_memcpy(&b, blurred + i, sizeof b);
        sw_v4f v = o + weight * (b - o);
        float alpha = v[3] < 0 ? 0 : (v[3] > 255 ? 255 : v[3]);
        if (alpha < 1e-3f) {
            v = (sw_v4f){0, 0, 0, 0};
        } else {
            float scale = 255 / alpha;
            v *= (sw_v4f){scale, scale, scale, 0};
            v[3] = alpha;
        }
        sw_v4u8 r = SW_NAME(round4)(v);
        __builtin_memcpy(out + i, &r, sizeof r);
    }
}

/* The blend at any angle and with levels (progressive falloff): weights per sample (a pixel's weight repeated
   over its channels) and `count` blurred rows, levels[k] blurred at σ (k + 1) / count. Level 0 is the original;
   a weight m takes level m count, interpolated linearly between the two levels around it:
   out = orig + sum over k of clamp(m count - k, 0, 1) (levels[k] - levels[k - 1]). With one level this is
   `blend` with a weight per sample. */
SW_TARGET static void SW_NAME(blend_levels)(const uint8_t *orig, const float *const *levels, int count,
                                            const float *weights, uint8_t *out, size_t begin, size_t end) {
    const float scale = (float)count;
    size_t j = begin;
    for (; j + 8 <= end; j += 8) {
        sw_v8f o = SW_NAME(bytes8)(orig + j);
        sw_v8f m = SW_NAME(load8)(weights + j) * SW_NAME(splat8)(scale);
        sw_v8f acc = o, previous = o;
        for (int k = 0; k < count; k++) {
            sw_v8f c = __builtin_elementwise_min(__builtin_elementwise_max(m - SW_NAME(splat8)((float)k), SW_NAME(splat8)(0)),
                                                 SW_NAME(splat8)(1));
            sw_v8f level = SW_NAME(load8)(levels[k] + j);
            acc += c * (level - previous);
            previous = level;
        }
        sw_v8u8 r = SW_NAME(round8)(acc);
        __builtin_memcpy(out + j, &r, sizeof r);
    }
    for (; j < end; j++) {
        float o = (float)orig[j], m = weights[j] * scale;
        float acc = o, previous = o;
        for (int k = 0; k < count; k++) {
            float c = m - (float)k;
            c = c < 0 ? 0 : (c > 1 ? 1 : c);
            acc += c * (levels[k][j] - previous);
            previous = levels[k][j];
        }
        acc = acc < 0 ? 0 : (acc > 255 ? 255 : acc);
        out[j] = (uint8_t)__builtin_nearbyintf(acc);
    }
}

/* The same for RGBA premultiplied in the levels: blended premultiplied, then divided by the blended alpha. */
SW_TARGET static void SW_NAME(blend_levels_premultiplied)(const uint8_t *orig, const float *const *levels, int count,
                                                          const float *weights, uint8_t *out, size_t begin,
                                                          size_t end) {
    const float scale = (float)count;
    for (size_t i = begin; i < end; i += 4) {
        sw_v4f o = SW_NAME(bytes4)(orig + i);
        float alpha_in = o[3] * (1.0f / 255);
        o *= (sw_v4f){alpha_in, alpha_in, alpha_in, 1};
        float m = weights[i] * scale;
        sw_v4f v = o, previous = o;
        for (int k = 0; k < count; k++) {
            float c = m - (float)k;
            c = c < 0 ? 0 : (c > 1 ? 1 : c);
            sw_v4f level;
            __builtin_memcpy(&level, levels[k] + i, sizeof level);
            v += c * (level - previous);
            previous = level;
        }
        float alpha = v[3] < 0 ? 0 : (v[3] > 255 ? 255 : v[3]);
        if (alpha < 1e-3f) {
            v = (sw_v4f){0, 0, 0, 0};
        } else {
            float s = 255 / alpha;
            v *= (sw_v4f){s, s, s, 0};
            v[3] = alpha;
        }
        sw_v4u8 r = SW_NAME(round4)(v);
        __builtin_memcpy(out + i, &r, sizeof r);
    }
}

SW_TARGET static void SW_NAME(horizontal)(const sw_recursive_gaussian *g, const uint8_t *const *src, float *const *dst,
                                          int rows, int width, int channels, void *scratch) {
    const int group = (channels == 1 ? 8 : 2) * SW_CHAINS;
    for (int r0 = 0; r0 < rows; r0 += group) {
        const uint8_t *s[8 * SW_CHAINS];
        float *d[8 * SW_CHAINS];
        float *spare = (float *)scratch + (size_t)SW_CHAINS * 8 * (size_t)width; /* a row for the padding rows' output */
        for (int r = 0; r < group; r++) {
            int real = r0 + r < rows;
            s[r] = src[real ? r0 + r : rows - 1];
            d[r] = real ? dst[r0 + r] : spare;
        }
        if (channels == 1) {
            SW_NAME(horizontal_gray)(g, s, d, width, (sw_v8f *)scratch);
        } else if (channels == 3) {
            SW_NAME(horizontal_rgb)(g, s, d, width, (sw_v8f *)scratch);
        } else {
            SW_NAME(horizontal_rgba)(g, s, d, width, (sw_v8f *)scratch);
        }
    }
}

/* MARK: exact (FIR) Gaussian */

/* One row: the samples, converted to floats (RGBA premultiplied), go into `padded` with `radius` pixels repeated at
   each end; then out[j] = taps[0] p[j] + sum over k of taps[k] (p[j - k ch] + p[j + k ch]), 8 samples at a time.
   The last vector may write up to 7 floats past the row's samples (the float rows have room for them). */
SW_TARGET static void SW_NAME(fir_horizontal)(const sw_fir_gaussian *g, const uint8_t *const *src, float *const *dst,
                                              int rows, int width, int channels, void *scratch) {
    const int radius = g->radius, ch = channels;
    float taps[SW_FIR_MAX_RADIUS + 1];
    for (int k = 0; k <= radius; k++) taps[k] = g->taps[k];
    const size_t samples = (size_t)width * (size_t)ch;
    const size_t margin = (size_t)radius * (size_t)ch;
    float *padded = (float *)scratch;
    for (int r = 0; r < rows; r++) {
        const uint8_t *s = src[r];
        float *p = padded + margin;
        for (size_t j = 0; j < samples; j++) p[j] = (float)s[j];
        if (ch == 4) {
            for (size_t j = 0; j < samples; j += 4) {
                float a = p[j + 3] * (1.0f / 255);
                p[j] *= a; p[j + 1] *= a; p[j + 2] *= a;
            }
        }
        for (int k = 1; k <= radius; k++) {
            for (int c = 0; c < ch; c++) {
                p[-(ptrdiff_t)k * ch + c] = p[c];
                p[samples - (size_t)ch + (size_t)k * (size_t)ch + (size_t)c] = p[samples - (size_t)ch + (size_t)c];
            }
        }
        /* Past the right margin: zeros, read by the last vector's lanes beyond the row. */
        for (size_t j = samples + margin; j < samples + margin + 8; j++) p[j] = 0;
        float *out = dst[r];
        for (size_t j = 0; j < samples; j += 8) {
            sw_v8f acc = SW_NAME(splat8)(taps[0]) * SW_NAME(load8)(p + j);
            for (int k = 1; k <= radius; k++) {
                size_t d = (size_t)k * (size_t)ch;
                acc += SW_NAME(splat8)(taps[k]) * (SW_NAME(load8)(p + j - d) + SW_NAME(load8)(p + j + d));
            }
            SW_NAME(store8)(out + j, acc);
        }
    }
}

SW_TARGET static void SW_NAME(fir_vertical)(const sw_fir_gaussian *g, const float *const *rows, float *out,
                                            size_t begin, size_t end) {
    const int radius = g->radius;
    float taps[SW_FIR_MAX_RADIUS + 1];
    for (int k = 0; k <= radius; k++) taps[k] = g->taps[k];
    const float *centre = rows[radius];
    for (size_t j = begin; j < end; j += 16) {
        sw_v8f a = SW_NAME(splat8)(taps[0]) * SW_NAME(load8)(centre + j);
        sw_v8f b = SW_NAME(splat8)(taps[0]) * SW_NAME(load8)(centre + j + 8);
        for (int k = 1; k <= radius; k++) {
            const float *up = rows[radius - k], *down = rows[radius + k];
            sw_v8f t = SW_NAME(splat8)(taps[k]);
            a += t * (SW_NAME(load8)(up + j) + SW_NAME(load8)(down + j));
            b += t * (SW_NAME(load8)(up + j + 8) + SW_NAME(load8)(down + j + 8));
        }
        SW_NAME(store8)(out + j, a);
        SW_NAME(store8)(out + j + 8, b);
    }
}

static const sw_blur_kernels SW_NAME(kernels) = {
    .horizontal = SW_NAME(horizontal),
    .forward = SW_NAME(forward),
    .backward = SW_NAME(backward),
    .end = SW_NAME(end),
    .blend = SW_NAME(blend),
    .blend_premultiplied = SW_NAME(blend_premultiplied),
    .blend_levels = SW_NAME(blend_levels),
    .blend_levels_premultiplied = SW_NAME(blend_levels_premultiplied),
    .fir_horizontal = SW_NAME(fir_horizontal),
    .fir_vertical = SW_NAME(fir_vertical),
};

#undef SW_INLINE
#undef SW_LOCAL_COEFFICIENTS
