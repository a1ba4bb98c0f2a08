/* The tilt-shift's per-pixel blend weights for a focus line at an angle (see sw_line_weights). */
#include "CImageCodecs.h"

#include <math.h>

void sw_line_weights(float *out, size_t begin, size_t end, int channels, double x_scale, double x_offset,
                     double sin_angle, double row_term, double extent, double focus, double half_band,
                     double transition) {
    const size_t ch = (size_t)channels;
    size_t j = begin;
    while (j < end) {
        size_t pixel = j / ch;
        double x = (double)pixel * x_scale + x_offset;
        double distance = fabs((x * sin_angle + row_term) / extent - focus) - half_band;
        float m;
        if (distance <= 0) {
            m = 0;
        } else if (transition <= 0) {
            m = 1;
        } else {
            double r = distance / transition;
            m = (float)(r < 1 ? r : 1);
        }
        size_t stop = (pixel + 1) * ch;
        if (stop > end) stop = end;
        for (; j < stop; j++) out[j] = m;
    }
}
