/* The tilt-shift's per-pixel blend weights for a focus line at an angle (see sw_line_weights).

   Along a row the distance from the line is linear in the pixel's index, so it is start + i step (in double,
   no division per pixel), and the weights of a block of pixels are computed in one loop the compiler
   vectorises, then spread over the pixels' channels. */
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
    const double inverse = transition > 0 ? 1.0 / transition : 0;
    const int hard = !(transition > 0);
    float block[SW_LINE_BLOCK];
    size_t first = begin / ch, last = (end - 1) / ch; /* pixels touched, inclusive */
    for (size_t p0 = first; p0 <= last; p0 += SW_LINE_BLOCK) {
        size_t count = last - p0 + 1;
        if (count > SW_LINE_BLOCK) count = SW_LINE_BLOCK;
        for (size_t k = 0; k < count; k++) {
            double distance = fabs(start + (double)(p0 + k) * step) - half_band;
            double m = hard ? (distance > 0 ? 1.0 : 0.0) : distance * inverse;
            m = m < 0 ? 0 : (m > 1 ? 1 : m);
            block[k] = (float)m;
        }
        size_t from = p0 * ch < begin ? begin : p0 * ch;
        size_t to = (p0 + count) * ch > end ? end : (p0 + count) * ch;
        size_t k = from / ch - p0, c = from % ch;
        for (size_t j = from; j < to; j++) {
            out[j] = block[k];
            if (++c == ch) { c = 0; k++; }
        }
    }
}
