/* Test-only: TIFF, GIF and HEIC files written with libtiff, giflib and libheif (see CTestSupport.h). */
#include "CTestSupport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gif_lib.h>
#include <libheif/heif.h>
#include <tiffio.h>

/* The bytes of a temporary file, malloc'd; NULL on failure. */
static uint8_t *sw_test_slurp(FILE *file, size_t *size) {
    *size = 0;
    if (fseek(file, 0, SEEK_END) != 0) return NULL;
    long length = ftell(file);
    if (length <= 0 || fseek(file, 0, SEEK_SET) != 0) return NULL;
    uint8_t *bytes = malloc((size_t)length);
    if (bytes != NULL && fread(bytes, 1, (size_t)length, file) != (size_t)length) {
        free(bytes);
        return NULL;
    }
    *size = (size_t)length;
    return bytes;
}

uint8_t *sw_test_tiff(const void *samples, const sw_test_tiff_layout *layout, size_t *size) {
    *size = 0;
    FILE *file = tmpfile();
    if (file == NULL) return NULL;
    TIFF *tif = TIFFFdOpen(dup(fileno(file)), "test.tif", "w");
    if (tif == NULL) {
        fclose(file);
        return NULL;
    }
    const int bytes_per_sample = layout->bits / 8;
    const size_t row_bytes = (size_t)layout->width * (size_t)layout->samples * (size_t)bytes_per_sample;
    int ok = 1;
    for (int page = 0; page < (layout->pages > 0 ? layout->pages : 1) && ok; page++) {
        TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, (uint32_t)layout->width);
        TIFFSetField(tif, TIFFTAG_IMAGELENGTH, (uint32_t)layout->height);
        TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, layout->bits);
        TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, layout->samples);
        TIFFSetField(tif, TIFFTAG_PLANARCONFIG, layout->separate ? PLANARCONFIG_SEPARATE : PLANARCONFIG_CONTIG);
        TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, layout->photometric);
        TIFFSetField(tif, TIFFTAG_COMPRESSION, layout->compression);
        TIFFSetField(tif, TIFFTAG_ORIENTATION, layout->orientation > 0 ? layout->orientation : 1);
        if (layout->photometric == PHOTOMETRIC_SEPARATED) TIFFSetField(tif, TIFFTAG_INKSET, INKSET_CMYK);
        if (layout->extra_sample != 0) {
            uint16_t extra = (uint16_t)layout->extra_sample;
            TIFFSetField(tif, TIFFTAG_EXTRASAMPLES, 1, &extra);
        }
        if (layout->icc != NULL) TIFFSetField(tif, TIFFTAG_ICCPROFILE, (uint32_t)layout->icc_size, layout->icc);
        if (page > 0) TIFFSetField(tif, TIFFTAG_SUBFILETYPE, FILETYPE_PAGE);
        if (layout->tile > 0) {
            TIFFSetField(tif, TIFFTAG_TILEWIDTH, (uint32_t)layout->tile);
            TIFFSetField(tif, TIFFTAG_TILELENGTH, (uint32_t)layout->tile);
            const size_t tile_row = (size_t)layout->tile * (size_t)layout->samples * (size_t)bytes_per_sample;
            uint8_t *tile = calloc((size_t)layout->tile, tile_row);
            for (int y = 0; y < layout->height && ok && tile != NULL; y += layout->tile) {
                for (int x = 0; x < layout->width && ok; x += layout->tile) {
                    memset(tile, 0, (size_t)layout->tile * tile_row);
                    for (int r = 0; r < layout->tile && y + r < layout->height; r++) {
                        int columns = layout->width - x < layout->tile ? layout->width - x : layout->tile;
                        memcpy(tile + (size_t)r * tile_row,
                               (const uint8_t *)samples + (size_t)(y + r) * row_bytes +
                                   (size_t)x * (size_t)layout->samples * (size_t)bytes_per_sample,
                               (size_t)columns * (size_t)layout->samples * (size_t)bytes_per_sample);
                    }
                    ok = TIFFWriteTile(tif, tile, (uint32_t)x, (uint32_t)y, 0, 0) >= 0;
                }
            }
            if (tile == NULL) ok = 0;
            free(tile);
        } else {
            TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, (uint32_t)(layout->rows_per_strip > 0 ? layout->rows_per_strip : 8));
            uint8_t *row = malloc(row_bytes);
            for (int y = 0; y < layout->height && ok && row != NULL && !layout->separate; y++) {
                memcpy(row, (const uint8_t *)samples + (size_t)y * row_bytes, row_bytes);
                ok = TIFFWriteScanline(tif, row, (uint32_t)y, 0) >= 0;
            }
            for (int s = 0; layout->separate && s < layout->samples && ok && row != NULL; s++) {
                for (int y = 0; y < layout->height && ok; y++) {
                    for (int x = 0; x < layout->width; x++) {
                        memcpy(row + (size_t)x * (size_t)bytes_per_sample,
                               (const uint8_t *)samples + (size_t)y * row_bytes +
                                   ((size_t)x * (size_t)layout->samples + (size_t)s) * (size_t)bytes_per_sample,
                               (size_t)bytes_per_sample);
                    }
                    ok = TIFFWriteScanline(tif, row, (uint32_t)y, (uint16_t)s) >= 0;
                }
            }
            if (row == NULL) ok = 0;
            free(row);
        }
        if (ok) ok = TIFFWriteDirectory(tif) != 0;
    }
    TIFFClose(tif);
    uint8_t *bytes = ok ? sw_test_slurp(file, size) : NULL;
    fclose(file);
    return bytes;
}

typedef struct {
    uint8_t *bytes;
    size_t size, capacity;
} sw_test_buffer;

static int sw_test_append(sw_test_buffer *buffer, const void *data, size_t size) {
    if (buffer->size + size > buffer->capacity) {
        size_t capacity = buffer->capacity < 4096 ? 4096 : buffer->capacity;
        while (capacity < buffer->size + size) capacity *= 2;
        uint8_t *grown = realloc(buffer->bytes, capacity);
        if (grown == NULL) return 0;
        buffer->bytes = grown;
        buffer->capacity = capacity;
    }
    memcpy(buffer->bytes + buffer->size, data, size);
    buffer->size += size;
    return 1;
}

static int sw_test_gif_output(GifFileType *gif, const GifByteType *data, int size) {
    return sw_test_append(gif->UserData, data, (size_t)size) ? size : 0;
}

uint8_t *sw_test_gif(const uint8_t *indices, int width, int height, const uint8_t *palette, int colours, int transparent,
                     int interlaced, int frames, size_t *size) {
    *size = 0;
    sw_test_buffer buffer = {0};
    int error = 0;
    GifFileType *gif = EGifOpen(&buffer, sw_test_gif_output, &error);
    if (gif == NULL) return NULL;
    int bits = 1;
    while ((1 << bits) < colours) bits++;
    ColorMapObject *map = GifMakeMapObject(1 << bits, NULL);
    int ok = map != NULL;
    for (int i = 0; ok && i < colours; i++) {
        map->Colors[i].Red = palette[3 * i];
        map->Colors[i].Green = palette[3 * i + 1];
        map->Colors[i].Blue = palette[3 * i + 2];
    }
    EGifSetGifVersion(gif, 1);
    ok = ok && EGifPutScreenDesc(gif, width, height, bits, 0, map) == GIF_OK;
    for (int frame = 0; ok && frame < (frames > 0 ? frames : 1); frame++) {
        GraphicsControlBlock control = {.DisposalMode = DISPOSAL_UNSPECIFIED, .UserInputFlag = 0, .DelayTime = 10,
                                        .TransparentColor = transparent};
        GifByteType extension[4];
        size_t length = EGifGCBToExtension(&control, extension);
        ok = EGifPutExtension(gif, GRAPHICS_EXT_FUNC_CODE, (int)length, extension) == GIF_OK;
        ok = ok && EGifPutImageDesc(gif, 0, 0, width, height, interlaced, NULL) == GIF_OK;
        static const int starts[4] = {0, 4, 2, 1}, steps[4] = {8, 8, 4, 2};
        for (int pass = 0; ok && pass < (interlaced ? 4 : 1); pass++) {
            for (int y = interlaced ? starts[pass] : 0; ok && y < height; y += interlaced ? steps[pass] : 1) {
                ok = EGifPutLine(gif, (GifPixelType *)(indices + (size_t)y * (size_t)width), width) == GIF_OK;
            }
        }
    }
    GifFreeMapObject(map);
    if (EGifCloseFile(gif, &error) != GIF_OK) ok = 0;
    if (!ok) {
        free(buffer.bytes);
        return NULL;
    }
    *size = buffer.size;
    return buffer.bytes;
}

static struct heif_error sw_test_heif_write(struct heif_context *context, const void *data, size_t size, void *user) {
    (void)context;
    struct heif_error result = {heif_error_Ok, heif_suberror_Unspecified, "ok"};
    if (!sw_test_append(user, data, size)) result.code = heif_error_Memory_allocation_error;
    return result;
}

uint8_t *sw_test_heic(const uint8_t *pixels, int width, int height, int channels, const uint8_t *icc, size_t icc_size,
                      const uint8_t *exif, size_t exif_size, size_t *size) {
    *size = 0;
    struct heif_context *context = heif_context_alloc();
    struct heif_encoder *encoder = NULL;
    struct heif_image *image = NULL;
    struct heif_image_handle *handle = NULL;
    sw_test_buffer buffer = {0};
    int ok = context != NULL &&
             heif_context_get_encoder_for_format(context, heif_compression_HEVC, &encoder).code == heif_error_Ok;
    if (ok) heif_encoder_set_lossy_quality(encoder, 95);
    ok = ok && heif_image_create(width, height, heif_colorspace_RGB,
                                 channels == 4 ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB, &image)
                       .code == heif_error_Ok;
    ok = ok && heif_image_add_plane(image, heif_channel_interleaved, width, height, 8).code == heif_error_Ok;
    if (ok) {
        int stride = 0;
        uint8_t *plane = heif_image_get_plane(image, heif_channel_interleaved, &stride);
        for (int y = 0; y < height; y++) {
            memcpy(plane + (size_t)y * (size_t)stride, pixels + (size_t)y * (size_t)width * (size_t)channels,
                   (size_t)width * (size_t)channels);
        }
        if (icc != NULL) heif_image_set_raw_color_profile(image, "prof", icc, icc_size);
    }
    ok = ok && heif_context_encode_image(context, image, encoder, NULL, &handle).code == heif_error_Ok;
    if (ok && exif != NULL) ok = heif_context_add_exif_metadata(context, handle, exif, (int)exif_size).code == heif_error_Ok;
    struct heif_writer writer = {.writer_api_version = 1, .write = sw_test_heif_write};
    ok = ok && heif_context_write(context, &writer, &buffer).code == heif_error_Ok;
    if (handle != NULL) heif_image_handle_release(handle);
    if (image != NULL) heif_image_release(image);
    if (encoder != NULL) heif_encoder_release(encoder);
    if (context != NULL) heif_context_free(context);
    if (!ok) {
        free(buffer.bytes);
        return NULL;
    }
    *size = buffer.size;
    return buffer.bytes;
}
