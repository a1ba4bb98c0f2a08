#ifndef SHIFTWORK_CTESTSUPPORT_H
#define SHIFTWORK_CTESTSUPPORT_H

/* Test-only C helpers: images and colour profiles the tests make themselves, with the same libraries the
   codecs use (libjpeg-turbo, LittleCMS). Never linked into the shiftwork binary. */

#include <stddef.h>
#include <stdint.h>

/** A CMYK output profile (ICC v2, PCS Lab, a lut16 A2B0) whose inks are deliberately not the usual ones: cyan ink absorbs
    blue and yellow absorbs red (R = (1-Y)(1-K), G = (1-M)(1-K), B = (1-C)(1-K) in sRGB), so that a converter that
    ignores the profile (R = (1-C)(1-K)...) gives visibly other colours. A malloc'd buffer of `*size` bytes
    (free it with free()); NULL on failure. */
uint8_t *sw_test_swapped_cmyk_profile(size_t *size);

/** A baseline CMYK JPEG of `width` x `height` pixels from `cmyk` (4 bytes a pixel, written as given: with
    libjpeg's Adobe marker, readers take them as Adobe's inverted CMYK), with `icc` embedded (APP2) when not
    NULL. A malloc'd buffer of `*size` bytes (free it with free()); NULL on failure. */
uint8_t *sw_test_cmyk_jpeg(const uint8_t *cmyk, int width, int height, const uint8_t *icc, size_t icc_size,
                           size_t *size);

#endif
