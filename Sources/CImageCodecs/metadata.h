/* Internal: what every decoder's *_metadata function does: hand out the metadata it holds. */
#ifndef SHIFTWORK_METADATA_H
#define SHIFTWORK_METADATA_H

#include "CImageCodecs.h"

/** Fills `metadata` with the given parts (NULL and 0 for one a format or image lacks); IPTC is left empty. */
void sw_metadata_view(sw_image_metadata *metadata, const uint8_t *icc, size_t icc_size, const uint8_t *exif,
                      size_t exif_size, const uint8_t *xmp, size_t xmp_size);

#endif
