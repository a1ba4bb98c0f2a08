/* Metadata carried from an input to its output: the parts a decoder hands out, and the EXIF orientation tag,
   read and reset. */
#include "CImageCodecs.h"
#include "metadata.h"

#include <string.h>

static unsigned sw_read16(const uint8_t *p, int little) {
    return little ? (unsigned)(p[0] | (p[1] << 8)) : (unsigned)((p[0] << 8) | p[1]);
}

static uint32_t sw_read32(const uint8_t *p, int little) {
    return little ? ((uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24))
                  : (((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3]);
}

/* The offset of IFD0's orientation entry (tag 0x0112, type SHORT) in a TIFF structure, or 0 when there is
   none or the structure is malformed; `*little` receives the byte order. */
static size_t sw_orientation_entry(const uint8_t *tiff, size_t size, int *little) {
    if (size < 8) return 0;
    if (tiff[0] == 'I' && tiff[1] == 'I') *little = 1;
    else if (tiff[0] == 'M' && tiff[1] == 'M') *little = 0;
    else return 0;
    if (sw_read16(tiff + 2, *little) != 42) return 0;
    uint32_t ifd = sw_read32(tiff + 4, *little);
    if ((size_t)ifd + 2 > size) return 0;
    unsigned count = sw_read16(tiff + ifd, *little);
    for (unsigned i = 0; i < count; i++) {
        size_t entry = (size_t)ifd + 2 + (size_t)i * 12;
        if (entry + 12 > size) return 0;
        if (sw_read16(tiff + entry, *little) == 0x0112) return sw_read16(tiff + entry + 2, *little) == 3 ? entry : 0;
    }
    return 0;
}

int sw_exif_orientation(const uint8_t *tiff, size_t size) {
    int little = 0;
    size_t entry = sw_orientation_entry(tiff, size, &little);
    if (entry == 0) return 1;
    unsigned value = sw_read16(tiff + entry + 8, little);
    return (value >= 1 && value <= 8) ? (int)value : 1;
}

int sw_exif_reset_orientation(uint8_t *tiff, size_t size) {
    int little = 0;
    size_t entry = sw_orientation_entry(tiff, size, &little);
    if (entry == 0) return 0;
    tiff[entry + 8] = little ? 1 : 0;
    tiff[entry + 9] = little ? 0 : 1;
    return 1;
}

void sw_metadata_view(sw_image_metadata *metadata, const uint8_t *icc, size_t icc_size, const uint8_t *exif,
                      size_t exif_size, const uint8_t *xmp, size_t xmp_size) {
    memset(metadata, 0, sizeof *metadata);
    metadata->icc = icc;
    metadata->icc_size = icc_size;
    metadata->exif = exif;
    metadata->exif_size = exif_size;
    metadata->xmp = xmp;
    metadata->xmp_size = xmp_size;
}
