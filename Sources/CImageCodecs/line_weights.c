/* The tilt-shift's per-pixel blend weights for a focus line at an angle (see sw_line_weights).

   Along a row the distance from the line is linear in the pixel's index: each block of pixels starts from
   its exact value (double; blocks at fixed pixels), and steps from there in float (the error over a block, about 1e-7 of the
   distance, is far below a level's share of a weight), in a loop the compiler vectorises; then the weights
   are spread over the pixels' channels. */
#include "CImageCodecs.h"

#include <math.h>

/* Pixels weighted per block (on the stack). */
#define SW_LINE_BLOCK 256

void sw_line_weights(float *out, size_t begin, size_t end, int channels, double x_scale, double x_offset,
                     double sin_angle, double row_term, double extent, double focus, double half_band,
                     double transition) {
    if (begin >= end) return;
    const size_t ch = (size_t)channels;
    const double step = x_scale * sin_angle / extent;
    const double start = (x_offset * sin_angle + row_term) / extent - focus;
    const int hard = !(transition > 0);
    const float inverse = hard ? 0.0f : (float)(1.0 / transition);
    const float band = (float)half_band, fstep = (float)step;
    float block[SW_LINE_BLOCK];
    size_t first = begin / ch, last = (end - 1) / ch; /* pixels touched, inclusive */
    /* Blocks start at multiples of SW_LINE_BLOCK pixels whatever [begin, end) is, so that a pixel's weight does not
       depend on how the row is split between threads (at 16 bits a weight's last float bit can tip a rounding). */
    for (size_t p0 = first - first % SW_LINE_BLOCK; p0 <= last; p0 += SW_LINE_BLOCK) {
        int count = (int)(last - p0 + 1 < SW_LINE_BLOCK ? last - p0 + 1 : SW_LINE_BLOCK);
        const float origin = (float)(start + (double)p0 * step);
        if (hard) {
            for (int k = 0; k < count; k++) block[k] = fabsf(origin + (float)k * fstep) - band > 0 ? 1.0f : 0.0f;
        } else {
            for (int k = 0; k < count; k++) {
                float m = (fabsf(origin + (float)k * fstep) - band) * inverse;
                m = m < 0 ? 0 : m;
                block[k] = m > 1 ? 1 : m;
            }
        }
        size_t from = p0 * ch < begin ? begin : p0 * ch;
        size_t to = (p0 + (size_t)count) * ch > end ? end : (p0 + (size_t)count) * ch;
        /* Whole pixels in the middle by channel count; the partial ones at the ends sample by sample. */
        size_t whole_from = (from + ch - 1) / ch, whole_to = to / ch;
        for (size_t j = from; j < whole_from * ch && j < to; j++) out[j] = block[j / ch - p0];
        if (whole_from < whole_to) {
            float *o = out + whole_from * ch;
            const float *w = block + (whole_from - p0);
            size_t n = whole_to - whole_from;
            switch (ch) {
            case 1:
                for (size_t i = 0; i < n; i++) o[i] = w[i];
                break;
            case 3:
                for (size_t i = 0; i < n; i++) o[3 * i] = o[3 * i + 1] = o[3 * i + 2] = w[i];
                break;
            case 4:
                for (size_t i = 0; i < n; i++) o[4 * i] = o[4 * i + 1] = o[4 * i + 2] = o[4 * i + 3] = w[i];
                break;
            default:
                for (size_t i = 0; i < n * ch; i++) o[i] = w[i / ch];
            }
        }
        for (size_t j = (whole_to * ch > from ? whole_to * ch : from); j < to; j++) out[j] = block[j / ch - p0];
    }
}
