/* TIFF input through libtiff, streamed: see CImageCodecs.h ("TIFF (libtiff), BMP"). libtiff reports errors by
   return values (its messages are caught per handle, tiff_io.c): nothing here jumps.

   Three ways to read the first page, chosen at open:
   - strips of 8 or 16-bit gray, RGB or CMYK samples, interleaved: TIFFReadScanline, one row at a time;
   - tiles of the same: a row of tiles at a time (tile height × image width) into a band, rows served from it;
   - anything else libtiff reads (palette, bilevel, YCbCr, separate planes, Lab …): its RGBA reader
     (TIFFRGBAImageGet), a strip or a row of tiles at a time (16-bit samples are truncated to 8 bits there,
     as libtiff does). */
#include "CImageCodecs.h"
#include "cancellation.h"
#include "metadata.h"
#include "tiff_io.h"

#include <stdlib.h>
#include <string.h>

enum sw_tiff_mode { SW_TIFF_SCANLINES, SW_TIFF_TILES, SW_TIFF_RGBA };

/* What the samples of a pixel are, on the two native paths. */
enum sw_tiff_colour { SW_TIFF_GRAY, SW_TIFF_GRAY_INVERTED, SW_TIFF_RGB, SW_TIFF_CMYK };

struct sw_tiff_decoder {
    sw_tiff_io io;
    TIFF *tif;
    enum sw_tiff_mode mode;
    enum sw_tiff_colour colour;
    uint32_t width, height;
    uint16_t samples, bits;
    /* The sample that holds alpha (0: none), and whether colours are premultiplied by it. */
    uint16_t alpha_sample;
    int premultiplied;
    int channels;
    int keep_cmyk;
    /* 16-bit samples handed out as 16 bits (host order) instead of rounded to 8 (sw_tiff_keep_16). */
    int keep16;
    /* Rows handed out so far. */
    uint32_t next_row;
    /* One native row (scanlines), or a band of rows (tiles: `band_rows` rows of `band_row_bytes`; RGBA: uint32
       pixels) that starts at row `band_start` and holds `band_filled` rows. */
    uint8_t *line;
    uint8_t *band;
    uint8_t *tile;
    size_t band_row_bytes;
    uint32_t band_rows, band_start, band_filled;
    uint32_t tile_width, tile_height;
    TIFFRGBAImage rgba;
    int rgba_started;
    /* Metadata, pointing into libtiff's directory (valid while the handle is open). */
    const uint8_t *icc, *xmp;
    uint32_t icc_size, xmp_size;
};

static void sw_tiff_message(char *err, size_t errlen, const char *what, const sw_tiff_decoder *decoder) {
    if (err == NULL || errlen == 0) return;
    if (decoder != NULL && decoder->io.message[0] != 0) snprintf(err, errlen, "%s: %s", what, decoder->io.message);
    else snprintf(err, errlen, "%s", what);
}

/* The name libtiff gives a compression scheme ("LZW", "JPEG"), or "unknown". */
static const char *sw_tiff_compression_name(const sw_tiff_functions *lib, uint16_t scheme) {
    const TIFFCodec *codec = lib->TIFFFindCODEC(scheme);
    return codec != NULL && codec->name != NULL ? codec->name : "unknown";
}

/* Chooses how to read the page and what comes out; 0 with the reason when libtiff cannot read it at all. */
static int sw_tiff_plan(sw_tiff_decoder *decoder, char *err, size_t errlen) {
    TIFF *tif = decoder->tif;
    const sw_tiff_functions *lib = decoder->io.lib;
    (void)lib;
    uint16_t photometric = 0, planar = PLANARCONFIG_CONTIG, format = SAMPLEFORMAT_UINT, compression = 1, inkset = INKSET_CMYK;
    uint16_t extra_count = 0;
    uint16_t *extra = NULL;
    decoder->io.lib->TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &decoder->samples);
    decoder->io.lib->TIFFGetFieldDefaulted(tif, TIFFTAG_BITSPERSAMPLE, &decoder->bits);
    decoder->io.lib->TIFFGetFieldDefaulted(tif, TIFFTAG_PLANARCONFIG, &planar);
    decoder->io.lib->TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLEFORMAT, &format);
    decoder->io.lib->TIFFGetFieldDefaulted(tif, TIFFTAG_COMPRESSION, &compression);
    decoder->io.lib->TIFFGetFieldDefaulted(tif, TIFFTAG_EXTRASAMPLES, &extra_count, &extra);
    if (!decoder->io.lib->TIFFGetField(tif, TIFFTAG_PHOTOMETRIC, &photometric)) photometric = decoder->samples >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK;
    decoder->io.lib->TIFFGetFieldDefaulted(tif, TIFFTAG_INKSET, &inkset);
    if (!decoder->io.lib->TIFFIsCODECConfigured(compression)) {
        if (err != NULL && errlen > 0) {
            snprintf(err, errlen,
                     "the TIFF's compression, %s (%u), cannot be read by this libtiff: convert the file to an "
                     "uncompressed, LZW or Deflate TIFF",
                     sw_tiff_compression_name(decoder->io.lib, compression), (unsigned)compression);
        }
        return 0;
    }
    if (decoder->samples == 0 || decoder->samples > 16) {
        if (err != NULL && errlen > 0) snprintf(err, errlen, "the TIFF claims %u samples a pixel (1...16 are read)", decoder->samples);
        return 0;
    }
    int colour_samples = 0;
    if (photometric == PHOTOMETRIC_MINISBLACK || photometric == PHOTOMETRIC_MINISWHITE) {
        decoder->colour = photometric == PHOTOMETRIC_MINISBLACK ? SW_TIFF_GRAY : SW_TIFF_GRAY_INVERTED;
        colour_samples = 1;
    } else if (photometric == PHOTOMETRIC_RGB) {
        decoder->colour = SW_TIFF_RGB;
        colour_samples = 3;
    } else if (photometric == PHOTOMETRIC_SEPARATED && inkset == INKSET_CMYK) {
        decoder->colour = SW_TIFF_CMYK;
        colour_samples = 4;
    }
    int native = colour_samples > 0 && decoder->samples >= colour_samples && planar == PLANARCONFIG_CONTIG &&
                 format == SAMPLEFORMAT_UINT && (decoder->bits == 8 || decoder->bits == 16);
    if (native) {
        /* The first extra sample after the colours may be alpha (CMYK's is dropped: the output is RGB). */
        int extra_index = 0;
        if (decoder->samples > colour_samples && extra_count > 0 && extra != NULL && decoder->colour != SW_TIFF_CMYK) {
            if (extra[extra_index] == EXTRASAMPLE_ASSOCALPHA || extra[extra_index] == EXTRASAMPLE_UNASSALPHA) {
                decoder->alpha_sample = (uint16_t)colour_samples;
                decoder->premultiplied = extra[extra_index] == EXTRASAMPLE_ASSOCALPHA;
            }
        }
        if (decoder->colour == SW_TIFF_CMYK) decoder->channels = 3;
        else if (decoder->alpha_sample != 0) decoder->channels = 4;
        else decoder->channels = colour_samples;
        decoder->mode = decoder->io.lib->TIFFIsTiled(tif) ? SW_TIFF_TILES : SW_TIFF_SCANLINES;
    } else {
        char reason[1024] = "";
        if (!decoder->io.lib->TIFFRGBAImageOK(tif, reason)) {
            if (err != NULL && errlen > 0) snprintf(err, errlen, "cannot read this TIFF: %s", reason);
            return 0;
        }
        decoder->mode = SW_TIFF_RGBA;
        decoder->colour = SW_TIFF_RGB;
        uint16_t has_alpha = 0;
        for (uint16_t i = 0; extra != NULL && i < extra_count; i++) {
            if (extra[i] == EXTRASAMPLE_ASSOCALPHA || extra[i] == EXTRASAMPLE_UNASSALPHA) has_alpha = 1;
        }
        decoder->channels = has_alpha ? 4 : 3;
    }
    if (decoder->io.lib->TIFFIsTiled(tif)) {
        decoder->io.lib->TIFFGetField(tif, TIFFTAG_TILEWIDTH, &decoder->tile_width);
        decoder->io.lib->TIFFGetField(tif, TIFFTAG_TILELENGTH, &decoder->tile_height);
        if (decoder->tile_width == 0 || decoder->tile_height == 0 || decoder->tile_width > 65536 ||
            decoder->tile_height > 65536) {
            if (err != NULL && errlen > 0) {
                snprintf(err, errlen, "the TIFF's tiles are %u×%u pixels (1...65536 a side are read)",
                         decoder->tile_width, decoder->tile_height);
            }
            return 0;
        }
    }
    return 1;
}

static sw_tiff_decoder *sw_tiff_open_io(sw_tiff_decoder *decoder, sw_image_info *info, char *err, size_t errlen) {
    decoder->tif = sw_tiff_io_open(&decoder->io, "r");
    if (decoder->tif == NULL) {
        sw_tiff_message(err, errlen, "not a readable TIFF", decoder);
        sw_tiff_close(decoder);
        return NULL;
    }
    TIFF *tif = decoder->tif;
    if (!decoder->io.lib->TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &decoder->width) || !decoder->io.lib->TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &decoder->height) ||
        decoder->width == 0 || decoder->height == 0 || decoder->width > INT32_MAX || decoder->height > INT32_MAX) {
        sw_tiff_message(err, errlen, "the TIFF has no valid width and height", decoder);
        sw_tiff_close(decoder);
        return NULL;
    }
    if (!sw_tiff_plan(decoder, err, errlen)) {
        sw_tiff_close(decoder);
        return NULL;
    }
    uint16_t orientation = ORIENTATION_TOPLEFT;
    decoder->io.lib->TIFFGetFieldDefaulted(tif, TIFFTAG_ORIENTATION, &orientation);
    void *icc = NULL, *xmp = NULL;
    if (decoder->io.lib->TIFFGetField(tif, TIFFTAG_ICCPROFILE, &decoder->icc_size, &icc) && icc != NULL) decoder->icc = icc;
    else decoder->icc_size = 0;
    if (decoder->io.lib->TIFFGetField(tif, TIFFTAG_XMLPACKET, &decoder->xmp_size, &xmp) && xmp != NULL) decoder->xmp = xmp;
    else decoder->xmp_size = 0;
    /* Counting the pages walks the chain of directories (libtiff stops at a loop); the current one stays. */
    tdir_t pages = decoder->io.lib->TIFFNumberOfDirectories(tif);
    memset(info, 0, sizeof *info);
    info->width = (int)decoder->width;
    info->height = (int)decoder->height;
    info->channels = decoder->channels;
    info->orientation = orientation >= 1 && orientation <= 8 ? orientation : 1;
    info->converted_from_cmyk = decoder->colour == SW_TIFF_CMYK;
    info->source_bit_depth = decoder->bits;
    info->more_frames = pages > 1 ? (int)(pages - 1) : 0;
    return decoder;
}

sw_tiff_decoder *sw_tiff_open(const uint8_t *data, size_t size, sw_image_info *info, char *err, size_t errlen) {
    sw_tiff_decoder *decoder = calloc(1, sizeof *decoder);
    if (decoder == NULL) {
        sw_tiff_message(err, errlen, "out of memory", NULL);
        return NULL;
    }
    decoder->io.data = data;
    decoder->io.size = size;
    return sw_tiff_open_io(decoder, info, err, errlen);
}

sw_tiff_decoder *sw_tiff_open_file(FILE *file, sw_image_info *info, char *err, size_t errlen) {
    sw_tiff_decoder *decoder = calloc(1, sizeof *decoder);
    if (decoder == NULL) {
        sw_tiff_message(err, errlen, "out of memory", NULL);
        return NULL;
    }
    decoder->io.file = file;
    return sw_tiff_open_io(decoder, info, err, errlen);
}

int sw_tiff_keep_cmyk(sw_tiff_decoder *decoder) {
    if (decoder->colour != SW_TIFF_CMYK || decoder->mode == SW_TIFF_RGBA || decoder->next_row != 0) return 0;
    decoder->keep_cmyk = 1;
    decoder->channels = 4;
    return 1;
}

int sw_tiff_keep_16(sw_tiff_decoder *decoder) {
    if (decoder->bits != 16 || decoder->colour == SW_TIFF_CMYK || decoder->mode == SW_TIFF_RGBA || decoder->next_row != 0) {
        return 0;
    }
    decoder->keep16 = 1;
    return 1;
}

/* Undoes premultiplication by alpha, at 16 bits. */
static inline uint16_t sw_tiff_unpremultiply16(uint16_t c, uint16_t a) {
    if (a == 0) return 0;
    uint64_t v = ((uint64_t)c * 65535u + a / 2u) / a;
    return (uint16_t)(v > 65535 ? 65535 : v);
}

/* One native row of 16-bit gray or RGB samples (host order, as libtiff hands them) into an output row of 16-bit
   samples (sw_tiff_keep_16). */
static void sw_tiff_convert_row16(const sw_tiff_decoder *decoder, const uint8_t *row8, uint8_t *out8) {
    const size_t spp = decoder->samples;
    const int c = decoder->channels;
    for (uint32_t x = 0; x < decoder->width; x++) {
        uint16_t in[5] = {0, 0, 0, 0, 0};
        size_t s = (size_t)x * spp;
        size_t wanted = decoder->alpha_sample != 0 ? (size_t)decoder->alpha_sample + 1 : (decoder->colour == SW_TIFF_RGB ? 3 : 1);
        memcpy(in, row8 + s * 2, wanted * 2);
        uint16_t px[4];
        uint16_t a = decoder->alpha_sample != 0 ? in[decoder->alpha_sample] : 65535;
        if (decoder->colour == SW_TIFF_RGB) {
            for (int k = 0; k < 3; k++) px[k] = in[k];
        } else {
            uint16_t g = decoder->colour == SW_TIFF_GRAY_INVERTED ? (uint16_t)(65535 - in[0]) : in[0];
            px[0] = px[1] = px[2] = g;
        }
        if (decoder->premultiplied) {
            for (int k = 0; k < 3; k++) px[k] = sw_tiff_unpremultiply16(px[k], a);
        }
        px[3] = a;
        memcpy(out8 + (size_t)x * (size_t)c * 2, px, (size_t)c * 2);
    }
}

/* A 16-bit sample rounded to 8 bits: round(v × 255 / 65535). */
static inline uint8_t sw_tiff_round16(uint16_t v) { return (uint8_t)(((uint32_t)v * 255u + 32767u) / 65535u); }

static inline uint8_t sw_tiff_sample(const uint8_t *row, int bits, size_t index) {
    if (bits == 8) return row[index];
    uint16_t v;
    memcpy(&v, row + index * 2, 2);
    return sw_tiff_round16(v);
}

/* Undoes premultiplication by alpha. */
static inline uint8_t sw_tiff_unpremultiply(uint8_t c, uint8_t a) {
    if (a == 0) return 0;
    unsigned v = ((unsigned)c * 255u + a / 2u) / a;
    return (uint8_t)(v > 255 ? 255 : v);
}

/* One native row (samples as stored) into an output row. */
static void sw_tiff_convert_row(const sw_tiff_decoder *decoder, const uint8_t *row, uint8_t *out) {
    if (decoder->keep16) {
        sw_tiff_convert_row16(decoder, row, out);
        return;
    }
    const int bits = decoder->bits;
    const size_t spp = decoder->samples;
    for (uint32_t x = 0; x < decoder->width; x++) {
        size_t s = (size_t)x * spp;
        switch (decoder->colour) {
        case SW_TIFF_GRAY:
        case SW_TIFF_GRAY_INVERTED: {
            uint8_t g = sw_tiff_sample(row, bits, s);
            if (decoder->colour == SW_TIFF_GRAY_INVERTED) g = (uint8_t)(255 - g);
            if (decoder->channels == 1) {
                out[x] = g;
            } else {
                uint8_t a = sw_tiff_sample(row, bits, s + decoder->alpha_sample);
                if (decoder->premultiplied) g = sw_tiff_unpremultiply(g, a);
                out[4 * x] = out[4 * x + 1] = out[4 * x + 2] = g;
                out[4 * x + 3] = a;
            }
            break;
        }
        case SW_TIFF_RGB: {
            int c = decoder->channels;
            uint8_t a = c == 4 ? sw_tiff_sample(row, bits, s + decoder->alpha_sample) : 255;
            for (int k = 0; k < 3; k++) {
                uint8_t v = sw_tiff_sample(row, bits, s + (size_t)k);
                out[(size_t)c * x + (size_t)k] = decoder->premultiplied ? sw_tiff_unpremultiply(v, a) : v;
            }
            if (c == 4) out[4 * x + 3] = a;
            break;
        }
        case SW_TIFF_CMYK: {
            uint8_t cmyk[4];
            for (int k = 0; k < 4; k++) cmyk[k] = sw_tiff_sample(row, bits, s + (size_t)k);
            if (decoder->keep_cmyk) {
                memcpy(out + 4 * (size_t)x, cmyk, 4);
            } else {
                unsigned white = 255u - cmyk[3];
                for (int k = 0; k < 3; k++) out[3 * (size_t)x + (size_t)k] = (uint8_t)(((255u - cmyk[k]) * white + 127u) / 255u);
            }
            break;
        }
        }
    }
}

/* Reads the row of tiles that holds row `row` into the band. */
static int sw_tiff_fill_tiles(sw_tiff_decoder *decoder, uint32_t row, char *err, size_t errlen) {
    const size_t pixel_bytes = (size_t)decoder->samples * (decoder->bits / 8);
    const size_t tile_row_bytes = (size_t)decoder->tile_width * pixel_bytes;
    const uint32_t start = row - row % decoder->tile_height;
    const uint32_t rows = decoder->height - start < decoder->tile_height ? decoder->height - start : decoder->tile_height;
    for (uint32_t x = 0; x < decoder->width; x += decoder->tile_width) {
        if (decoder->io.lib->TIFFReadTile(decoder->tif, decoder->tile, x, start, 0, 0) < 0) {
            sw_tiff_message(err, errlen, "cannot read a TIFF tile", decoder);
            return SW_CODEC_ERROR;
        }
        const uint32_t columns = decoder->width - x < decoder->tile_width ? decoder->width - x : decoder->tile_width;
        for (uint32_t y = 0; y < rows; y++) {
            memcpy(decoder->band + (size_t)y * decoder->band_row_bytes + (size_t)x * pixel_bytes,
                   decoder->tile + (size_t)y * tile_row_bytes, (size_t)columns * pixel_bytes);
        }
    }
    decoder->band_start = start;
    decoder->band_filled = rows;
    return SW_CODEC_OK;
}

/* Reads the strip or row of tiles that holds row `row` through libtiff's RGBA reader into the band. */
static int sw_tiff_fill_rgba(sw_tiff_decoder *decoder, uint32_t row, char *err, size_t errlen) {
    const uint32_t start = row - row % decoder->band_rows;
    const uint32_t rows = decoder->height - start < decoder->band_rows ? decoder->height - start : decoder->band_rows;
    decoder->rgba.row_offset = (int)start;
    decoder->rgba.col_offset = 0;
    if (!decoder->io.lib->TIFFRGBAImageGet(&decoder->rgba, (uint32_t *)(void *)decoder->band, decoder->width, rows)) {
        sw_tiff_message(err, errlen, "cannot read the TIFF's pixels", decoder);
        return SW_CODEC_ERROR;
    }
    decoder->band_start = start;
    decoder->band_filled = rows;
    return SW_CODEC_OK;
}

/* Allocates what the reads need, on the first one (after the caller checked the image's size). */
static int sw_tiff_prepare(sw_tiff_decoder *decoder, char *err, size_t errlen) {
    TIFF *tif = decoder->tif;
    const uint64_t max_band = (uint64_t)1 << 30;
    switch (decoder->mode) {
    case SW_TIFF_SCANLINES: {
        uint64_t size = decoder->io.lib->TIFFScanlineSize64(tif);
        if (size == 0 || size > max_band) {
            sw_tiff_message(err, errlen, "the TIFF's rows have an invalid size", decoder);
            return SW_CODEC_ERROR;
        }
        decoder->line = malloc((size_t)size);
        break;
    }
    case SW_TIFF_TILES: {
        uint64_t tile_size = decoder->io.lib->TIFFTileSize64(tif);
        const uint64_t pixel_bytes = (uint64_t)decoder->samples * (decoder->bits / 8);
        const uint64_t across = ((uint64_t)decoder->width + decoder->tile_width - 1) / decoder->tile_width;
        decoder->band_row_bytes = (size_t)(across * decoder->tile_width * pixel_bytes);
        decoder->band_rows = decoder->tile_height;
        if (tile_size == 0 || tile_size != (uint64_t)decoder->tile_width * decoder->tile_height * pixel_bytes ||
            (uint64_t)decoder->band_row_bytes * decoder->band_rows > max_band) {
            sw_tiff_message(err, errlen, "the TIFF's tiles have an invalid size", decoder);
            return SW_CODEC_ERROR;
        }
        decoder->tile = malloc((size_t)tile_size);
        decoder->band = malloc(decoder->band_row_bytes * decoder->band_rows);
        break;
    }
    case SW_TIFF_RGBA: {
        char reason[1024] = "";
        if (!decoder->io.lib->TIFFRGBAImageBegin(&decoder->rgba, tif, 1, reason)) {
            if (err != NULL && errlen > 0) snprintf(err, errlen, "cannot read this TIFF: %s", reason);
            return SW_CODEC_ERROR;
        }
        decoder->rgba_started = 1;
        /* Rows as stored: the caller applies the Orientation tag, as for the other paths. */
        decoder->rgba.req_orientation = decoder->rgba.orientation;
        uint32_t band = decoder->tile_height;
        if (!decoder->io.lib->TIFFIsTiled(tif)) {
            band = 0;
            decoder->io.lib->TIFFGetFieldDefaulted(tif, TIFFTAG_ROWSPERSTRIP, &band);
        }
        if (band == 0 || band > decoder->height) band = decoder->height;
        decoder->band_rows = band;
        decoder->band_row_bytes = (size_t)decoder->width * 4;
        if ((uint64_t)decoder->band_row_bytes * band > max_band * 2) {
            sw_tiff_message(err, errlen, "the TIFF's strips are too large to read", decoder);
            return SW_CODEC_ERROR;
        }
        decoder->band = malloc(decoder->band_row_bytes * band);
        break;
    }
    }
    if ((decoder->mode == SW_TIFF_SCANLINES && decoder->line == NULL) ||
        (decoder->mode != SW_TIFF_SCANLINES && decoder->band == NULL) || (decoder->mode == SW_TIFF_TILES && decoder->tile == NULL)) {
        sw_tiff_message(err, errlen, "out of memory for the TIFF's rows", NULL);
        return SW_CODEC_ERROR;
    }
    return SW_CODEC_OK;
}

int sw_tiff_read_rows(sw_tiff_decoder *decoder, uint8_t *pixels, size_t stride, int rows, const sw_cancellation *cancel,
                      char *err, size_t errlen) {
    if (rows < 0 || (uint64_t)decoder->next_row + (uint64_t)rows > decoder->height) {
        sw_tiff_message(err, errlen, "more rows read than the image has", NULL);
        return SW_CODEC_ERROR;
    }
    if (decoder->line == NULL && decoder->band == NULL) {
        int status = sw_tiff_prepare(decoder, err, errlen);
        if (status != SW_CODEC_OK) return status;
    }
    for (int r = 0; r < rows; r++) {
        const uint32_t row = decoder->next_row;
        if (sw_should_stop(cancel, row)) return SW_CODEC_CANCELLED;
        uint8_t *out = pixels + (size_t)r * stride;
        if (decoder->mode == SW_TIFF_SCANLINES) {
            if (decoder->io.lib->TIFFReadScanline(decoder->tif, decoder->line, row, 0) < 0) {
                sw_tiff_message(err, errlen, "cannot read a TIFF row", decoder);
                return SW_CODEC_ERROR;
            }
            sw_tiff_convert_row(decoder, decoder->line, out);
        } else {
            if (row < decoder->band_start || row >= decoder->band_start + decoder->band_filled || decoder->band_filled == 0) {
                int status = decoder->mode == SW_TIFF_TILES ? sw_tiff_fill_tiles(decoder, row, err, errlen)
                                                            : sw_tiff_fill_rgba(decoder, row, err, errlen);
                if (status != SW_CODEC_OK) return status;
            }
            const uint8_t *band_row = decoder->band + (size_t)(row - decoder->band_start) * decoder->band_row_bytes;
            if (decoder->mode == SW_TIFF_TILES) {
                sw_tiff_convert_row(decoder, band_row, out);
            } else {
                /* libtiff's RGBA pixels: R, G, B, A in a uint32 (low byte first), premultiplied when there is alpha. */
                const uint32_t *pixel = (const uint32_t *)(const void *)band_row;
                for (uint32_t x = 0; x < decoder->width; x++) {
                    uint32_t p = pixel[x];
                    uint8_t a = (uint8_t)TIFFGetA(p);
                    uint8_t rgb[3] = {(uint8_t)TIFFGetR(p), (uint8_t)TIFFGetG(p), (uint8_t)TIFFGetB(p)};
                    if (decoder->channels == 4) {
                        for (int k = 0; k < 3; k++) out[4 * (size_t)x + (size_t)k] = sw_tiff_unpremultiply(rgb[k], a);
                        out[4 * (size_t)x + 3] = a;
                    } else {
                        memcpy(out + 3 * (size_t)x, rgb, 3);
                    }
                }
            }
        }
        decoder->next_row++;
    }
    return SW_CODEC_OK;
}

void sw_tiff_metadata(const sw_tiff_decoder *decoder, sw_image_metadata *metadata) {
    sw_metadata_view(metadata, decoder->icc, decoder->icc_size, NULL, 0, decoder->xmp, decoder->xmp_size);
}

void sw_tiff_close(sw_tiff_decoder *decoder) {
    if (decoder == NULL) return;
    if (decoder->rgba_started) decoder->io.lib->TIFFRGBAImageEnd(&decoder->rgba);
    if (decoder->tif != NULL) decoder->io.lib->TIFFClose(decoder->tif);
    free(decoder->line);
    free(decoder->band);
    free(decoder->tile);
    free(decoder);
}

/* MARK: Encoder */

struct sw_tiff_encoder {
    sw_tiff_io io;
    TIFF *tif;
    int width, height, channels, depth;
    int rows;
    /* A copy of the row being written: libtiff's predictor changes the row it is given. */
    uint8_t *row;
};

sw_tiff_encoder *sw_tiff_encoder_open(int width, int height, int channels, int lzw, FILE *file,
                                      const sw_image_metadata *metadata, char *err, size_t errlen) {
    return sw_tiff_encoder_open_depth(width, height, channels, 8, lzw, file, metadata, err, errlen);
}

sw_tiff_encoder *sw_tiff_encoder_open_depth(int width, int height, int channels, int depth, int lzw, FILE *file,
                                            const sw_image_metadata *metadata, char *err, size_t errlen) {
    if (width <= 0 || height <= 0 || (channels != 1 && channels != 3 && channels != 4) || (depth != 8 && depth != 16)) {
        sw_tiff_message(err, errlen, "invalid image size or channel count", NULL);
        return NULL;
    }
    sw_tiff_encoder *encoder = calloc(1, sizeof *encoder);
    if (encoder == NULL) {
        sw_tiff_message(err, errlen, "out of memory", NULL);
        return NULL;
    }
    encoder->width = width;
    encoder->height = height;
    encoder->channels = channels;
    encoder->depth = depth;
    encoder->io.file = file;
    encoder->io.writing_memory = file == NULL;
    encoder->row = malloc((size_t)width * (size_t)channels * (size_t)(depth / 8));
    /* BigTIFF ("w8") only when classic TIFF's 4 GiB offsets might not do (uncompressed size as the bound). */
    uint64_t raw = (uint64_t)width * (uint64_t)height * (uint64_t)channels * (uint64_t)(depth / 8);
    encoder->tif = encoder->row != NULL ? sw_tiff_io_open(&encoder->io, raw > ((uint64_t)3 << 30) ? "w8" : "w") : NULL;
    if (encoder->tif == NULL) {
        if (err != NULL && errlen > 0) {
            snprintf(err, errlen, "cannot start the TIFF: %s", encoder->io.message[0] != 0 ? encoder->io.message : "out of memory");
        }
        sw_tiff_encoder_close(encoder);
        return NULL;
    }
    TIFF *tif = encoder->tif;
    encoder->io.lib->TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, (uint32_t)width);
    encoder->io.lib->TIFFSetField(tif, TIFFTAG_IMAGELENGTH, (uint32_t)height);
    encoder->io.lib->TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, depth);
    encoder->io.lib->TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, channels);
    encoder->io.lib->TIFFSetField(tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
    encoder->io.lib->TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, channels == 1 ? PHOTOMETRIC_MINISBLACK : PHOTOMETRIC_RGB);
    encoder->io.lib->TIFFSetField(tif, TIFFTAG_ORIENTATION, ORIENTATION_TOPLEFT);
    encoder->io.lib->TIFFSetField(tif, TIFFTAG_COMPRESSION, lzw ? COMPRESSION_LZW : COMPRESSION_ADOBE_DEFLATE);
    encoder->io.lib->TIFFSetField(tif, TIFFTAG_PREDICTOR, PREDICTOR_HORIZONTAL);
    /* Deflate's fastest level: at zlib's default (6) a 144-megapixel image took 44 s of CPU to write, ten times
       its filter; level 1 costs a few per cent in size (as the fast PNG levels do). */
    if (!lzw) encoder->io.lib->TIFFSetField(tif, TIFFTAG_ZIPQUALITY, 1);
    encoder->io.lib->TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, 16);
    if (channels == 4) {
        uint16_t extra = EXTRASAMPLE_UNASSALPHA;
        encoder->io.lib->TIFFSetField(tif, TIFFTAG_EXTRASAMPLES, 1, &extra);
    }
    if (metadata != NULL && metadata->icc != NULL && metadata->icc_size > 0 && metadata->icc_size <= UINT32_MAX) {
        encoder->io.lib->TIFFSetField(tif, TIFFTAG_ICCPROFILE, (uint32_t)metadata->icc_size, metadata->icc);
    }
    if (metadata != NULL && metadata->xmp != NULL && metadata->xmp_size > 0 && metadata->xmp_size <= UINT32_MAX) {
        encoder->io.lib->TIFFSetField(tif, TIFFTAG_XMLPACKET, (uint32_t)metadata->xmp_size, metadata->xmp);
    }
    return encoder;
}

int sw_tiff_encoder_write(sw_tiff_encoder *encoder, const uint8_t *pixels, size_t stride, int rows,
                          const sw_cancellation *cancel, char *err, size_t errlen) {
    if (rows < 0 || rows > encoder->height - encoder->rows) {
        sw_tiff_message(err, errlen, "more rows written than the image has", NULL);
        return SW_CODEC_ERROR;
    }
    const size_t row_bytes = (size_t)encoder->width * (size_t)encoder->channels * (size_t)(encoder->depth / 8);
    for (int r = 0; r < rows; r++) {
        if (sw_should_stop(cancel, (unsigned)encoder->rows)) return SW_CODEC_CANCELLED;
        memcpy(encoder->row, pixels + (size_t)r * stride, row_bytes);
        if (encoder->io.lib->TIFFWriteScanline(encoder->tif, encoder->row, (uint32_t)encoder->rows, 0) < 0) {
            if (err != NULL && errlen > 0) snprintf(err, errlen, "cannot write a TIFF row: %s", encoder->io.message);
            return SW_CODEC_ERROR;
        }
        encoder->rows++;
    }
    return SW_CODEC_OK;
}

int sw_tiff_encoder_finish(sw_tiff_encoder *encoder, const sw_cancellation *cancel, uint8_t **out, size_t *out_size,
                           char *err, size_t errlen) {
    (void)cancel;
    *out = NULL;
    *out_size = 0;
    if (encoder->rows != encoder->height) {
        sw_tiff_message(err, errlen, "the image ended before its last row", NULL);
        return SW_CODEC_ERROR;
    }
    TIFF *tif = encoder->tif;
    encoder->tif = NULL;
    /* TIFFClose writes the directory; its failure shows as an error message on the handle. */
    encoder->io.lib->TIFFClose(tif);
    if (encoder->io.message[0] != 0) {
        if (err != NULL && errlen > 0) snprintf(err, errlen, "cannot finish the TIFF: %s", encoder->io.message);
        return SW_CODEC_ERROR;
    }
    if (encoder->io.file != NULL) {
        if (fflush(encoder->io.file) != 0) {
            sw_tiff_message(err, errlen, "cannot write the TIFF file", NULL);
            return SW_CODEC_ERROR;
        }
        return SW_CODEC_OK;
    }
    *out = encoder->io.out;
    *out_size = encoder->io.size;
    encoder->io.out = NULL;
    return SW_CODEC_OK;
}

void sw_tiff_encoder_close(sw_tiff_encoder *encoder) {
    if (encoder == NULL) return;
    if (encoder->tif != NULL) encoder->io.lib->TIFFCleanup(encoder->tif);
    free(encoder->io.out);
    free(encoder->row);
    free(encoder);
}
