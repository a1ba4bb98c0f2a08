/* Halving and doubling rows for the decimated blur (DecimatedStripBlender): a 2x2 box average down, a bilinear
   doubling up. Each function is compiled for AVX2 and for the baseline x86-64, chosen at load time
   (target_clones), so that the compiler's vectorised loops use the wider registers where the CPU has them. */
#include "CImageCodecs.h"

#include <string.h>

#if defined(__x86_64__) && defined(__linux__)
#define SW_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define SW_CLONES
#endif

SW_CLONES
void sw_decimate_rows(const uint8_t *above, const uint8_t *below, uint8_t *out, int width, int channels) {
    const int ch = channels, pairs = width / 2;
    const size_t even = (size_t)pairs * 2 * (size_t)ch;
    if (ch == 1) {
        for (int i = 0; i < pairs; i++) {
            unsigned sum = (unsigned)above[2 * i] + above[2 * i + 1] + below[2 * i] + below[2 * i + 1];
            out[i] = (uint8_t)((sum + 2) >> 2);
        }
    } else {
        for (int i = 0; i < pairs; i++) {
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

SW_CLONES
void sw_double_row(const uint8_t *above, const uint8_t *below, float below_share, int half_width, int width,
                   int channels, float *vertical, float *out) {
    const int ch = channels;
    const size_t half_samples = (size_t)half_width * (size_t)ch;
    const float t = below_share;
    for (size_t s = 0; s < half_samples; s++) {
        float a = (float)above[s];
        vertical[s] = a + t * ((float)below[s] - a);
    }
    /* The right edge repeats. */
    for (int c = 0; c < ch; c++) vertical[half_samples + (size_t)c] = vertical[half_samples - (size_t)ch + (size_t)c];
    /* Pixel 0 sits a quarter of a half pixel left of half pixel 0: the edge repeats. */
    for (int c = 0; c < ch; c++) out[c] = vertical[c];
    /* Pixels 2i + 1 and 2i + 2 sit at half pixel i + 1/4 and i + 3/4. */
    const int pairs = (width - 1) / 2;
    if (ch == 1) {
        for (int i = 0; i < pairs; i++) {
            float p = vertical[i], q = vertical[i + 1];
            out[2 * i + 1] = 0.75f * p + 0.25f * q;
            out[2 * i + 2] = 0.25f * p + 0.75f * q;
        }
    } else {
        for (int i = 0; i < pairs; i++) {
            const float *p = vertical + (size_t)i * (size_t)ch;
            float *o = out + (size_t)(2 * i + 1) * (size_t)ch;
            for (int c = 0; c < ch; c++) {
                o[c] = 0.75f * p[c] + 0.25f * p[c + ch];
                o[c + ch] = 0.25f * p[c] + 0.75f * p[c + ch];
            }
        }
    }
    if ((width - 1) % 2) {
        /* An even width: the last pixel, 2 pairs + 1, at half pixel pairs + 1/4 (the edge repeats beyond). */
        const float *p = vertical + (size_t)pairs * (size_t)ch;
        float *o = out + (size_t)(2 * pairs + 1) * (size_t)ch;
        for (int c = 0; c < ch; c++) o[c] = 0.75f * p[c] + 0.25f * p[c + ch];
    }
}
