#ifndef SHIFTWORK_CTESTSUPPORT_H
#define SHIFTWORK_CTESTSUPPORT_H

/* Test-only C helpers: images and colour profiles the tests make themselves, with the same libraries the
   codecs use (libjpeg-turbo, LittleCMS, libtiff, giflib, libheif). Never linked into the shiftwork binary. */

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

/* MARK: Inputs of the formats only read (and TIFF's variants): written with libtiff, giflib and libheif. */

/** How `sw_test_tiff` lays out its file. */
typedef struct sw_test_tiff_layout {
    int width, height;
    /** Samples a pixel, bits a sample (8 or 16), and libtiff's PHOTOMETRIC_* and COMPRESSION_* values. */
    int samples, bits, photometric, compression;
    /** EXTRASAMPLE_* of the sample after the colours (0: none). */
    int extra_sample;
    /** Tiles of `tile`×`tile` (0: strips of `rows_per_strip` rows, 8 when 0). */
    int tile, rows_per_strip;
    /** The Orientation tag (0: 1), and how many pages (each the same image; 0: 1). */
    int orientation, pages;
    const uint8_t *icc;
    size_t icc_size;
    /** Each sample in a plane of its own (PLANARCONFIG_SEPARATE; strips only), which libtiff's RGBA reader reads. */
    int separate;
} sw_test_tiff_layout;

/** A TIFF of `samples` (interleaved, rows packed; 16-bit samples in the machine's byte order). A malloc'd buffer of
    `*size` bytes (free it with free()); NULL on failure. */
uint8_t *sw_test_tiff(const void *samples, const sw_test_tiff_layout *layout, size_t *size);

/** A GIF of `frames` identical frames of `indices` (one byte a pixel) into `palette` (`colours` RGB triples), with
    `transparent` as its transparent index (-1: none), interlaced or not. Malloc'd, as above. */
uint8_t *sw_test_gif(const uint8_t *indices, int width, int height, const uint8_t *palette, int colours, int transparent,
                     int interlaced, int frames, size_t *size);

/** A HEIC (HEVC by x265, quality 95) of `pixels` (3 or 4 `channels`), with `icc` and `exif` (a TIFF structure, NULL for
    none). Malloc'd, as above; NULL also when libheif has no HEVC encoder. */
uint8_t *sw_test_heic(const uint8_t *pixels, int width, int height, int channels, const uint8_t *icc, size_t icc_size,
                      const uint8_t *exif, size_t exif_size, size_t *size);

/** A 16-bit interlaced (Adam7) PNG of `samples` (host order; 1 to 4 `channels`), through libpng. Malloc'd, as above. */
uint8_t *sw_test_png16_interlaced(const uint16_t *samples, int width, int height, int channels, size_t *size);

#endif
