/* Windows BMP input, a reader of our own (Debian has no small BMP library: libvips, ImageMagick and SDL_image are far
   too large for it). Every field of the headers is checked before it is used; the pixels are read a row at a time,
   from the bottom up when the file is stored so (seeking in a file), into the caller's rows. What is read: see
   CImageCodecs.h ("TIFF (libtiff), BMP"). */
#include "CImageCodecs.h"
#include "cancellation.h"
#include "metadata.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define SW_BMP_RGB 0
#define SW_BMP_RLE8 1
#define SW_BMP_RLE4 2
#define SW_BMP_BITFIELDS 3
#define SW_BMP_JPEG 4
#define SW_BMP_PNG 5
#define SW_BMP_ALPHABITFIELDS 6

/** The largest embedded colour profile read. */
#define SW_BMP_MAX_PROFILE ((uint32_t)16 * 1024 * 1024)

/* One colour channel of a 16 or 32-bit pixel: where its bits are, and how many. */
typedef struct {
    uint32_t mask;
    int shift;
    int bits;
} sw_bmp_channel;

struct sw_bmp_decoder {
    const uint8_t *data;
    size_t size;
    FILE *file;
    uint32_t width, height;
    int top_down;
    int bits_per_pixel;
    int channels;
    uint64_t pixel_offset;
    uint64_t stride;
    /* Bytes of a row that hold pixels (the rest is padding, which the last row of a file may lack). */
    uint64_t row_bytes;
    uint8_t palette[256][3];
    int palette_size;
    sw_bmp_channel red, green, blue, alpha;
    uint8_t *row;
    uint8_t *icc;
    uint32_t icc_size;
    uint32_t next_row;
};

static void sw_bmp_message(char *err, size_t errlen, const char *message) {
    if (err != NULL && errlen > 0) snprintf(err, errlen, "%s", message);
}

static uint32_t sw_bmp_u32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint16_t sw_bmp_u16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

/* Reads `count` bytes at `offset`; the number read (fewer at the end of the data). */
static size_t sw_bmp_read_at(const sw_bmp_decoder *decoder, uint64_t offset, uint8_t *buffer, size_t count) {
    if (decoder->file != NULL) {
        if (offset > (uint64_t)INT64_MAX || fseeko(decoder->file, (off_t)offset, SEEK_SET) != 0) return 0;
        return fread(buffer, 1, count, decoder->file);
    }
    if (offset >= decoder->size) return 0;
    size_t available = decoder->size - (size_t)offset;
    size_t n = count < available ? count : available;
    memcpy(buffer, decoder->data + offset, n);
    return n;
}

/* The size of the data (a file's from fstat; UINT64_MAX when unknown). */
static uint64_t sw_bmp_total(const sw_bmp_decoder *decoder) {
    if (decoder->file == NULL) return decoder->size;
    struct stat status;
    if (fstat(fileno(decoder->file), &status) != 0 || status.st_size < 0) return UINT64_MAX;
    return (uint64_t)status.st_size;
}

/* Sets `channel` from a mask; 0 when the mask's bits are not one run. */
static int sw_bmp_channel_from(sw_bmp_channel *channel, uint32_t mask) {
    memset(channel, 0, sizeof *channel);
    if (mask == 0) return 1;
    int shift = 0;
    while (((mask >> shift) & 1u) == 0) shift++;
    uint64_t run = (uint64_t)(mask >> shift);
    if ((run & (run + 1)) != 0) return 0;
    int bits = 0;
    while (run != 0) {
        bits++;
        run >>= 1;
    }
    channel->mask = mask;
    channel->shift = shift;
    channel->bits = bits;
    return 1;
}

/* A channel's value of `pixel`, scaled to 8 bits (rounded). */
static inline uint8_t sw_bmp_extract(const sw_bmp_channel *channel, uint32_t pixel) {
    if (channel->bits == 0) return 0;
    uint32_t value = (pixel & channel->mask) >> channel->shift;
    if (channel->bits == 8) return (uint8_t)value;
    uint64_t max = ((uint64_t)1 << channel->bits) - 1;
    return (uint8_t)(((uint64_t)value * 255u + max / 2) / max);
}

static sw_bmp_decoder *sw_bmp_fail(sw_bmp_decoder *decoder, char *err, size_t errlen, const char *message) {
    sw_bmp_message(err, errlen, message);
    sw_bmp_close(decoder);
    return NULL;
}

static sw_bmp_decoder *sw_bmp_open_source(sw_bmp_decoder *decoder, sw_image_info *info, char *err, size_t errlen) {
    uint8_t head[14 + 124 + 16];
    memset(head, 0, sizeof head);
    size_t got = sw_bmp_read_at(decoder, 0, head, 18);
    if (got < 18 || head[0] != 'B' || head[1] != 'M') return sw_bmp_fail(decoder, err, errlen, "not a BMP file (too short, or no 'BM')");
    const uint32_t header_size = sw_bmp_u32(head + 14);
    if (header_size != 12 && header_size != 40 && header_size != 52 && header_size != 56 && header_size != 108 &&
        header_size != 124) {
        char message[160];
        snprintf(message, sizeof message,
                 "BMP with a %u-byte header (OS/2 2.x or unknown) is not supported: convert it to PNG", header_size);
        return sw_bmp_fail(decoder, err, errlen, message);
    }
    /* A 40-byte header with bit fields keeps its masks after it (12 bytes, 16 with alpha). */
    const size_t wanted = 14 + (size_t)header_size + (header_size == 40 ? 16 : 0);
    got = sw_bmp_read_at(decoder, 0, head, wanted);
    if (got < 14 + (size_t)header_size) return sw_bmp_fail(decoder, err, errlen, "the BMP is truncated inside its header");
    const uint8_t *h = head + 14;
    int64_t width, height;
    int planes, bits, compression = SW_BMP_RGB;
    uint32_t colours_used = 0;
    if (header_size == 12) {
        width = sw_bmp_u16(h + 4);
        height = sw_bmp_u16(h + 6);
        planes = sw_bmp_u16(h + 8);
        bits = sw_bmp_u16(h + 10);
    } else {
        width = (int32_t)sw_bmp_u32(h + 4);
        height = (int32_t)sw_bmp_u32(h + 8);
        planes = sw_bmp_u16(h + 12);
        bits = sw_bmp_u16(h + 14);
        compression = (int)sw_bmp_u32(h + 16);
        colours_used = sw_bmp_u32(h + 32);
    }
    if (width <= 0 || height == 0 || height == INT32_MIN) return sw_bmp_fail(decoder, err, errlen, "the BMP's width or height is invalid");
    if (planes != 1) return sw_bmp_fail(decoder, err, errlen, "the BMP's plane count is not 1");
    decoder->top_down = height < 0;
    decoder->width = (uint32_t)width;
    decoder->height = (uint32_t)(height < 0 ? -height : height);
    decoder->bits_per_pixel = bits;
    switch (compression) {
    case SW_BMP_RGB: break;
    case SW_BMP_BITFIELDS:
    case SW_BMP_ALPHABITFIELDS:
        if (bits != 16 && bits != 32) return sw_bmp_fail(decoder, err, errlen, "BMP bit fields need 16 or 32 bits a pixel");
        break;
    case SW_BMP_RLE8:
    case SW_BMP_RLE4:
        return sw_bmp_fail(decoder, err, errlen, "RLE-compressed BMP is not supported: save it uncompressed or as PNG");
    case SW_BMP_JPEG:
    case SW_BMP_PNG:
        return sw_bmp_fail(decoder, err, errlen, "a BMP that holds a JPEG or PNG is not supported: use the JPEG or PNG itself");
    default: return sw_bmp_fail(decoder, err, errlen, "the BMP's compression is unknown");
    }
    if (bits != 1 && bits != 4 && bits != 8 && bits != 16 && bits != 24 && bits != 32) {
        return sw_bmp_fail(decoder, err, errlen, "the BMP's bits per pixel are not 1, 4, 8, 16, 24 or 32");
    }
    uint32_t masks[4] = {0, 0, 0, 0};
    size_t after_header = 14 + (size_t)header_size;
    if (compression == SW_BMP_BITFIELDS || compression == SW_BMP_ALPHABITFIELDS) {
        if (header_size >= 52) {
            for (int k = 0; k < 3; k++) masks[k] = sw_bmp_u32(h + 40 + 4 * k);
            if (header_size >= 56) masks[3] = sw_bmp_u32(h + 52);
        } else {
            int count = compression == SW_BMP_ALPHABITFIELDS ? 4 : 3;
            if (got < after_header + 4 * (size_t)count) return sw_bmp_fail(decoder, err, errlen, "the BMP is truncated inside its colour masks");
            for (int k = 0; k < count; k++) masks[k] = sw_bmp_u32(head + after_header + 4 * k);
            after_header += 4 * (size_t)count;
        }
    } else if (bits == 16) {
        masks[0] = 0x7C00;
        masks[1] = 0x03E0;
        masks[2] = 0x001F;
    } else if (bits == 32) {
        masks[0] = 0x00FF0000;
        masks[1] = 0x0000FF00;
        masks[2] = 0x000000FF;
    }
    if (bits == 16 || bits == 32) {
        for (int k = 0; k < 4; k++) {
            if (bits == 16 && masks[k] > 0xFFFF) return sw_bmp_fail(decoder, err, errlen, "a BMP colour mask is wider than its 16-bit pixels");
        }
        if (!sw_bmp_channel_from(&decoder->red, masks[0]) || !sw_bmp_channel_from(&decoder->green, masks[1]) ||
            !sw_bmp_channel_from(&decoder->blue, masks[2]) || !sw_bmp_channel_from(&decoder->alpha, masks[3])) {
            return sw_bmp_fail(decoder, err, errlen, "the BMP's colour masks are not runs of bits");
        }
    }
    decoder->pixel_offset = sw_bmp_u32(head + 10);
    if (decoder->pixel_offset < after_header) return sw_bmp_fail(decoder, err, errlen, "the BMP's pixels start inside its header");
    if (bits <= 8) {
        uint32_t entries = (uint32_t)1 << bits;
        if (colours_used != 0 && colours_used < entries) entries = colours_used;
        const size_t entry_size = header_size == 12 ? 3 : 4;
        uint8_t table[256 * 4];
        if (after_header + entries * entry_size > decoder->pixel_offset) {
            /* Some writers leave out part of the palette: take what is there before the pixels. */
            entries = (uint32_t)((decoder->pixel_offset - after_header) / entry_size);
        }
        if (entries == 0) return sw_bmp_fail(decoder, err, errlen, "the BMP has no colour table");
        if (sw_bmp_read_at(decoder, after_header, table, entries * entry_size) < entries * entry_size) {
            return sw_bmp_fail(decoder, err, errlen, "the BMP is truncated inside its colour table");
        }
        for (uint32_t i = 0; i < entries; i++) {
            decoder->palette[i][0] = table[i * entry_size + 2];
            decoder->palette[i][1] = table[i * entry_size + 1];
            decoder->palette[i][2] = table[i * entry_size];
        }
        decoder->palette_size = (int)entries;
    }
    decoder->channels = (bits == 16 || bits == 32) && decoder->alpha.bits > 0 ? 4 : 3;
    decoder->stride = ((uint64_t)decoder->width * (uint64_t)bits + 31) / 32 * 4;
    decoder->row_bytes = ((uint64_t)decoder->width * (uint64_t)bits + 7) / 8;
    /* A V5 header may embed an ICC profile (its offset counts from the header's start). */
    if (header_size == 124 && sw_bmp_u32(h + 56) == 0x4D424544 /* 'MBED' */) {
        const uint64_t offset = 14 + (uint64_t)sw_bmp_u32(h + 112);
        const uint32_t size = sw_bmp_u32(h + 116);
        if (size > 0 && size <= SW_BMP_MAX_PROFILE && offset + size <= sw_bmp_total(decoder)) {
            decoder->icc = malloc(size);
            if (decoder->icc != NULL && sw_bmp_read_at(decoder, offset, decoder->icc, size) == size) {
                decoder->icc_size = size;
            } else {
                free(decoder->icc);
                decoder->icc = NULL;
            }
        }
    }
    memset(info, 0, sizeof *info);
    info->width = (int)decoder->width;
    info->height = (int)decoder->height;
    info->channels = decoder->channels;
    info->orientation = 1;
    info->source_bit_depth = bits <= 8 ? bits : 8;
    return decoder;
}

sw_bmp_decoder *sw_bmp_open(const uint8_t *data, size_t size, sw_image_info *info, char *err, size_t errlen) {
    sw_bmp_decoder *decoder = calloc(1, sizeof *decoder);
    if (decoder == NULL) {
        sw_bmp_message(err, errlen, "out of memory");
        return NULL;
    }
    decoder->data = data;
    decoder->size = size;
    return sw_bmp_open_source(decoder, info, err, errlen);
}

sw_bmp_decoder *sw_bmp_open_file(FILE *file, sw_image_info *info, char *err, size_t errlen) {
    sw_bmp_decoder *decoder = calloc(1, sizeof *decoder);
    if (decoder == NULL) {
        sw_bmp_message(err, errlen, "out of memory");
        return NULL;
    }
    decoder->file = file;
    return sw_bmp_open_source(decoder, info, err, errlen);
}

static void sw_bmp_convert_row(const sw_bmp_decoder *decoder, const uint8_t *row, uint8_t *out) {
    const uint32_t width = decoder->width;
    const int channels = decoder->channels;
    switch (decoder->bits_per_pixel) {
    case 1:
    case 4:
    case 8: {
        const int bits = decoder->bits_per_pixel;
        const int per_byte = 8 / bits;
        const unsigned mask = (1u << bits) - 1;
        for (uint32_t x = 0; x < width; x++) {
            unsigned byte = row[x / (unsigned)per_byte];
            unsigned shift = (unsigned)(8 - bits * (int)(x % (unsigned)per_byte + 1));
            unsigned index = (byte >> shift) & mask;
            /* An index past the colour table is black (the table is zeroed). */
            if (index < (unsigned)decoder->palette_size) memcpy(out + 3 * (size_t)x, decoder->palette[index], 3);
            else memset(out + 3 * (size_t)x, 0, 3);
        }
        break;
    }
    case 24:
        for (uint32_t x = 0; x < width; x++) {
            out[3 * (size_t)x] = row[3 * (size_t)x + 2];
            out[3 * (size_t)x + 1] = row[3 * (size_t)x + 1];
            out[3 * (size_t)x + 2] = row[3 * (size_t)x];
        }
        break;
    case 16:
    case 32:
        for (uint32_t x = 0; x < width; x++) {
            uint32_t pixel = decoder->bits_per_pixel == 16 ? sw_bmp_u16(row + 2 * (size_t)x) : sw_bmp_u32(row + 4 * (size_t)x);
            uint8_t *o = out + (size_t)channels * x;
            o[0] = sw_bmp_extract(&decoder->red, pixel);
            o[1] = sw_bmp_extract(&decoder->green, pixel);
            o[2] = sw_bmp_extract(&decoder->blue, pixel);
            if (channels == 4) o[3] = sw_bmp_extract(&decoder->alpha, pixel);
        }
        break;
    }
}

int sw_bmp_read_rows(sw_bmp_decoder *decoder, uint8_t *pixels, size_t stride, int rows, const sw_cancellation *cancel,
                     char *err, size_t errlen) {
    if (rows < 0 || (uint64_t)decoder->next_row + (uint64_t)rows > decoder->height) {
        sw_bmp_message(err, errlen, "more rows read than the image has");
        return SW_CODEC_ERROR;
    }
    if (decoder->row == NULL) {
        if (decoder->row_bytes > SIZE_MAX / 2) {
            sw_bmp_message(err, errlen, "the BMP's rows are too long");
            return SW_CODEC_ERROR;
        }
        decoder->row = malloc((size_t)decoder->row_bytes);
        if (decoder->row == NULL) {
            sw_bmp_message(err, errlen, "out of memory for a BMP row");
            return SW_CODEC_ERROR;
        }
    }
    for (int r = 0; r < rows; r++) {
        const uint32_t row = decoder->next_row;
        if (sw_should_stop(cancel, row)) return SW_CODEC_CANCELLED;
        const uint64_t stored = decoder->top_down ? row : decoder->height - 1 - row;
        const uint64_t offset = decoder->pixel_offset + stored * decoder->stride;
        if (sw_bmp_read_at(decoder, offset, decoder->row, (size_t)decoder->row_bytes) < decoder->row_bytes) {
            char message[160];
            snprintf(message, sizeof message, "the BMP is truncated: row %u of %u is missing", row + 1, decoder->height);
            sw_bmp_message(err, errlen, message);
            return SW_CODEC_ERROR;
        }
        sw_bmp_convert_row(decoder, decoder->row, pixels + (size_t)r * stride);
        decoder->next_row++;
    }
    return SW_CODEC_OK;
}

void sw_bmp_metadata(const sw_bmp_decoder *decoder, sw_image_metadata *metadata) {
    sw_metadata_view(metadata, decoder->icc, decoder->icc_size, NULL, 0, NULL, 0);
}

void sw_bmp_close(sw_bmp_decoder *decoder) {
    if (decoder == NULL) return;
    free(decoder->row);
    free(decoder->icc);
    free(decoder);
}
