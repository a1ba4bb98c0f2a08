/*
 * The decoder's clipping, carried into a JPEG's own Y'CbCr planes (see sw_ycc_correct_clipping in CImageCodecs.h).
 *
 * A decoder upsamples the chroma ("fancy": a triangle filter, libjpeg's default) and converts each pixel to
 * R'G'B', clamping to 0...255. Where subsampled chroma meets sharp luma, or the colours are saturated, the
 * unclamped values leave the gamut, and the RGB recipe blurs the clamped image. Blurring the planes as they
 * are would blur the unclamped one. So, before the planes are blurred, each pixel whose R'G'B' would be
 * clamped has the Y'CbCr of (clamped − unclamped) added: to its luma sample, and averaged over its chroma
 * sample's pixels to the chroma sample. The corrected values are what the planes blur; they are still blended
 * with the uncorrected ones (so that rows the mask keeps sharp are the JPEG's own).
 *
 * Most photographs barely clip, so the work goes by bounds: a row's (then a chunk of 32 chroma samples') luma
 * and chroma extremes bound every pixel's R'G'B' (the upsampled chroma is a convex mix of its neighbours), and
 * only a chunk whose bounds leave the gamut is converted pixel by pixel.
 */
#include <string.h>

#include "CImageCodecs.h"

#define SW_CHUNK 32

/* libjpeg's fixed-point colour conversion (jdcolor.c): 16 fraction bits, rounded. */
#define SW_FIX(x) ((int)((x) * 65536.0 + 0.5))

/* Samples of one chroma plane around the current row: above, current and below (the same at the edges). */
typedef struct {
    const uint8_t *above, *current, *below;
} sw_chroma_rows;

static inline int sw_clamp_index(int i, int n) { return i < 0 ? 0 : (i >= n ? n - 1 : i); }

typedef uint8_t sw_v16u8 __attribute__((vector_size(16)));

/* Widens [*low, *high] to p[from..<to], 16 bytes at a time. */
static inline void sw_extremes(const uint8_t *p, int from, int to, int *low, int *high) {
    sw_v16u8 lo, hi;
    memset(&lo, *low, sizeof lo);
    memset(&hi, *high, sizeof hi);
    int i = from;
    for (; i + 16 <= to; i += 16) {
        sw_v16u8 x;
        memcpy(&x, p + i, sizeof x);
        lo = __builtin_elementwise_min(lo, x);
        hi = __builtin_elementwise_max(hi, x);
    }
    int l = __builtin_reduce_min(lo), h = __builtin_reduce_max(hi);
    for (; i < to; i++) {
        l = p[i] < l ? p[i] : l;
        h = p[i] > h ? p[i] : h;
    }
    *low = l;
    *high = h;
}

/* Whether every pixel of chroma samples [i0, i1) certainly stays within 0...255. */
static int sw_chunk_in_gamut(const uint8_t *const luma[2], int luma_rows, int width, const sw_chroma_rows *cb,
                             const sw_chroma_rows *cr, int chroma_width, int h, int i0, int i1) {
    int y_low = 255, y_high = 0;
    int x1 = i1 * h < width ? i1 * h : width;
    for (int r = 0; r < luma_rows; r++) sw_extremes(luma[r], i0 * h, x1, &y_low, &y_high);
    int c0 = i0 > 0 ? i0 - 1 : 0, c1 = i1 < chroma_width ? i1 + 1 : chroma_width;
    int cb_low = 255, cb_high = 0, cr_low = 255, cr_high = 0;
    const uint8_t *const cb_rows[3] = {cb->above, cb->current, cb->below};
    const uint8_t *const cr_rows[3] = {cr->above, cr->current, cr->below};
    for (int k = 0; k < 3; k++) {
        sw_extremes(cb_rows[k], c0, c1, &cb_low, &cb_high);
        sw_extremes(cr_rows[k], c0, c1, &cr_low, &cr_high);
    }
    /* In units of 1/65536; R' = Y' + 1.402 Cr, G' = Y' − 0.34414 Cb − 0.71414 Cr, B' = Y' + 1.772 Cb. */
    const long one = 65536, low_limit = -one / 2, high_limit = 255 * one + one / 2 - 1;
    long r_low = y_low * one + (long)SW_FIX(1.40200) * (cr_low - 128);
    long r_high = y_high * one + (long)SW_FIX(1.40200) * (cr_high - 128);
    long b_low = y_low * one + (long)SW_FIX(1.77200) * (cb_low - 128);
    long b_high = y_high * one + (long)SW_FIX(1.77200) * (cb_high - 128);
    long g_low = y_low * one - (long)SW_FIX(0.34414) * (cb_high - 128) - (long)SW_FIX(0.71414) * (cr_high - 128);
    long g_high = y_high * one - (long)SW_FIX(0.34414) * (cb_low - 128) - (long)SW_FIX(0.71414) * (cr_low - 128);
    return r_low >= low_limit && b_low >= low_limit && g_low >= low_limit && r_high <= high_limit &&
           b_high <= high_limit && g_high <= high_limit;
}

static inline int sw_clamp255(int x) { return x < 0 ? 0 : (x > 255 ? 255 : x); }
static inline uint8_t sw_round_byte(float x) { return (uint8_t)sw_clamp255((int)(x + (x < 0 ? -0.5f : 0.5f))); }

/* The chroma the decoder gives pixels [i0·h, i1·h) of luma row r (0 upper, 1 lower) of this chroma row. */
static void sw_upsample_chunk(const sw_chroma_rows *rows, int r, int chroma_width, int h, int v, int i0, int i1,
                              int *out) {
    const uint8_t *neighbour_row = v == 2 ? (r == 0 ? rows->above : rows->below) : rows->current;
    int sums[SW_CHUNK + 2];
    for (int k = -1; k <= i1 - i0; k++) {
        int i = sw_clamp_index(i0 + k, chroma_width);
        sums[k + 1] = 3 * rows->current[i] + neighbour_row[i];
    }
    if (h == 1) {
        for (int k = 0; k < i1 - i0; k++) out[k] = (4 * sums[k + 1] + 8) >> 4;
        return;
    }
    for (int k = 0; k < i1 - i0; k++) {
        out[2 * k] = (3 * sums[k + 1] + sums[k] + 8) >> 4;
        out[2 * k + 1] = (3 * sums[k + 1] + sums[k + 2] + 7) >> 4;
    }
}

static inline float sw_clampf(float x) { return x < 0 ? 0 : (x > 255 ? 255 : x); }

/* Converts chunk [i0, i1) pixel by pixel (branch-free: an in-gamut pixel's correction is 0) and writes its
   corrected luma and chroma to the outputs; returns the pixels that clipped. */
static int sw_correct_chunk(const uint8_t *const luma[2], uint8_t *const luma_out[2], int luma_rows, int width,
                            const sw_chroma_rows *cb, const sw_chroma_rows *cr, uint8_t *cb_out, uint8_t *cr_out,
                            int chroma_width, int h, int v, int i0, int i1) {
    float cb_delta[2 * SW_CHUNK] = {0}, cr_delta[2 * SW_CHUNK] = {0};
    int up_cb[2 * SW_CHUNK], up_cr[2 * SW_CHUNK];
    int clipped = 0;
    int x0 = i0 * h, x1 = i1 * h < width ? i1 * h : width, n = x1 - x0;
    for (int r = 0; r < luma_rows; r++) {
        sw_upsample_chunk(cb, r, chroma_width, h, v, i0, i1, up_cb);
        sw_upsample_chunk(cr, r, chroma_width, h, v, i0, i1, up_cr);
        const uint8_t *in = luma[r] + x0;
        uint8_t *out = luma_out[r] + x0;
        for (int j = 0; j < n; j++) {
            int y = in[j], u = up_cb[j] - 128, w = up_cr[j] - 128;
            int red = y + ((SW_FIX(1.40200) * w + 32768) >> 16);
            int green = y + ((-SW_FIX(0.34414) * u - SW_FIX(0.71414) * w + 32768) >> 16);
            int blue = y + ((SW_FIX(1.77200) * u + 32768) >> 16);
            clipped += ((red | green | blue) & ~255) != 0;
            float dr = (float)(sw_clamp255(red) - red), dg = (float)(sw_clamp255(green) - green);
            float db = (float)(sw_clamp255(blue) - blue);
            out[j] = (uint8_t)(int)(sw_clampf((float)y + 0.299f * dr + 0.587f * dg + 0.114f * db) + 0.5f);
            cb_delta[j] += -0.168736f * dr - 0.331264f * dg + 0.5f * db;
            cr_delta[j] += 0.5f * dr - 0.418688f * dg - 0.081312f * db;
        }
    }
    for (int i = i0; i < i1; i++) {
        int k = i - i0, first = k * h, last = first + h < n ? first + h : n;
        if (first >= last) continue;
        float cb_sum = 0, cr_sum = 0;
        for (int j = first; j < last; j++) {
            cb_sum += cb_delta[j];
            cr_sum += cr_delta[j];
        }
        if (cb_sum == 0 && cr_sum == 0) continue;
        float pixels = (float)((last - first) * luma_rows);
        cb_out[i] = sw_round_byte((float)cb->current[i] + cb_sum / pixels);
        cr_out[i] = sw_round_byte((float)cr->current[i] + cr_sum / pixels);
    }
    return clipped;
}

int sw_ycc_correct_clipping(const uint8_t *const luma[2], uint8_t *const luma_out[2], int luma_rows, int width,
                            const uint8_t *const cb[3], const uint8_t *const cr[3], uint8_t *cb_out, uint8_t *cr_out,
                            int chroma_width, int h, int v) {
    if (luma_rows < 1 || luma_rows > v || h < 1 || h > 2 || v < 1 || v > 2 || width <= 0 || chroma_width <= 0) return 0;
    sw_chroma_rows cb_rows = {cb[0], cb[1], cb[2]}, cr_rows = {cr[0], cr[1], cr[2]};
    memcpy(cb_out, cb[1], (size_t)chroma_width);
    memcpy(cr_out, cr[1], (size_t)chroma_width);
    int clipped = 0, copied = 0;
    /* The whole row first: most rows of most photographs end here. */
    if (sw_chunk_in_gamut(luma, luma_rows, width, &cb_rows, &cr_rows, chroma_width, h, 0, chroma_width)) return 0;
    for (int i0 = 0; i0 < chroma_width; i0 += SW_CHUNK) {
        int i1 = i0 + SW_CHUNK < chroma_width ? i0 + SW_CHUNK : chroma_width;
        if (sw_chunk_in_gamut(luma, luma_rows, width, &cb_rows, &cr_rows, chroma_width, h, i0, i1)) continue;
        if (!copied) {
            for (int r = 0; r < luma_rows; r++) memcpy(luma_out[r], luma[r], (size_t)width);
            copied = 1;
        }
        clipped += sw_correct_chunk(luma, luma_out, luma_rows, width, &cb_rows, &cr_rows, cb_out, cr_out, chroma_width, h, v, i0, i1);
    }
    return clipped;
}
