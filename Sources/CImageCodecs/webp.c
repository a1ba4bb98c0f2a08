/* WebP decode/encode through libwebp (with libwebpdemux for the metadata chunks of an input and libwebpmux to
   write them into an output). libwebp reports errors by status codes: nothing here jumps.

   Decoding reads the whole input (from memory, or a file read into memory up to the byte limit) and decodes
   it incrementally into the caller's pixels, a slice of the input at a time, asking the caller between slices
   whether to stop. Encoding needs the whole picture (libwebp's encoder takes a complete WebPPicture): the
   rows are collected first (sw_whole_image), converted to the picture's Y'CbCr, freed, then encoded, with the
   caller asked whether to stop through libwebp's progress hook. */
#include "CImageCodecs.h"
#include "metadata.h"
#include "whole_image.h"
#include "cancellation.h"

#include <stdlib.h>
#include <string.h>

#include <webp/decode.h>
#include <webp/demux.h>
#include <webp/encode.h>
#include <webp/mux.h>

struct sw_webp_decoder {
    const uint8_t *data;
    size_t size;
    uint8_t *owned;          /* the file's bytes, when read from a file */
    int width, height, channels;
    uint8_t *icc, *exif, *xmp;
    size_t icc_size, exif_size, xmp_size;
};

/* Input is handed to the incremental decoder this many bytes at a time, with a cancellation check between. */
#define SW_WEBP_SLICE (256 * 1024)

static uint8_t *sw_webp_chunk(WebPDemuxer *demux, const char fourcc[4], size_t *size) {
    WebPChunkIterator iterator;
    *size = 0;
    if (!WebPDemuxGetChunk(demux, fourcc, 1, &iterator)) return NULL;
    const uint8_t *bytes = iterator.chunk.bytes;
    size_t count = iterator.chunk.size;
    /* Some writers keep JPEG's "Exif\0\0" prefix in the EXIF chunk: the metadata struct holds the TIFF only. */
    if (memcmp(fourcc, "EXIF", 4) == 0 && count >= 6 && memcmp(bytes, "Exif\0\0", 6) == 0) {
        bytes += 6;
        count -= 6;
    }
    uint8_t *copy = sw_whole_copy(bytes, count);
    if (copy != NULL) *size = count;
    WebPDemuxReleaseChunkIterator(&iterator);
    return copy;
}

/* Opens the `size` bytes at `data`; `owned` (the same bytes, read from a file, or NULL) is the decoder's from here on:
   freed with it, or at once when it cannot be opened. */
static sw_webp_decoder *sw_webp_open_bytes(const uint8_t *data, size_t size, uint8_t *owned, sw_image_info *info,
                                           char *err, size_t errlen) {
    sw_webp_decoder *decoder = calloc(1, sizeof *decoder);
    if (decoder == NULL) {
        free(owned);
        sw_whole_message(err, errlen, "out of memory");
        return NULL;
    }
    decoder->owned = owned;
    decoder->data = data;
    decoder->size = size;
    WebPBitstreamFeatures features;
    VP8StatusCode status = WebPGetFeatures(decoder->data, decoder->size, &features);
    if (status != VP8_STATUS_OK) {
        sw_whole_message(err, errlen, status == VP8_STATUS_NOT_ENOUGH_DATA ? "truncated WebP data"
                                                                          : "not a readable WebP image (bad header)");
        sw_webp_close(decoder);
        return NULL;
    }
    if (features.has_animation) {
        sw_whole_message(err, errlen, "animated WebP images are not supported (only still images)");
        sw_webp_close(decoder);
        return NULL;
    }
    decoder->width = features.width;
    decoder->height = features.height;
    decoder->channels = features.has_alpha ? 4 : 3;
    WebPData whole = { decoder->data, decoder->size };
    WebPDemuxer *demux = WebPDemux(&whole);
    if (demux != NULL) {
        decoder->icc = sw_webp_chunk(demux, "ICCP", &decoder->icc_size);
        decoder->exif = sw_webp_chunk(demux, "EXIF", &decoder->exif_size);
        decoder->xmp = sw_webp_chunk(demux, "XMP ", &decoder->xmp_size);
        WebPDemuxDelete(demux);
    }
    memset(info, 0, sizeof *info);
    info->width = decoder->width;
    info->height = decoder->height;
    info->channels = decoder->channels;
    info->orientation = decoder->exif ? sw_exif_orientation(decoder->exif, decoder->exif_size) : 1;
    info->source_bit_depth = 8;
    return decoder;
}

sw_webp_decoder *sw_webp_open(const uint8_t *data, size_t size, sw_image_info *info, char *err, size_t errlen) {
    return sw_webp_open_bytes(data, size, NULL, info, err, errlen);
}

sw_webp_decoder *sw_webp_open_file(FILE *file, size_t max_bytes, sw_image_info *info, char *err, size_t errlen) {
    size_t size = 0;
    uint8_t *bytes = sw_whole_read_file(file, max_bytes, &size, err, errlen);
    return bytes != NULL ? sw_webp_open_bytes(bytes, size, bytes, info, err, errlen) : NULL;
}

int sw_webp_read(sw_webp_decoder *decoder, uint8_t *pixels, size_t stride, const sw_cancellation *cancel, char *err,
                 size_t errlen) {
    WebPDecoderConfig config;
    if (!WebPInitDecoderConfig(&config)) {
        sw_whole_message(err, errlen, "libwebp version mismatch");
        return SW_CODEC_ERROR;
    }
    config.output.colorspace = decoder->channels == 4 ? MODE_RGBA : MODE_RGB;
    config.output.is_external_memory = 1;
    config.output.u.RGBA.rgba = pixels;
    config.output.u.RGBA.stride = (int)stride;
    config.output.u.RGBA.size = stride * (size_t)decoder->height;
    WebPIDecoder *incremental = WebPIDecode(NULL, 0, &config);
    if (incremental == NULL) {
        sw_whole_message(err, errlen, "out of memory for the WebP decoder");
        return SW_CODEC_ERROR;
    }
    VP8StatusCode status = VP8_STATUS_SUSPENDED;
    size_t given = 0;
    while (status == VP8_STATUS_SUSPENDED && given < decoder->size) {
        if (sw_should_stop_now(cancel)) {
            WebPIDelete(incremental);
            return SW_CODEC_CANCELLED;
        }
        given = decoder->size - given > SW_WEBP_SLICE ? given + SW_WEBP_SLICE : decoder->size;
        status = WebPIUpdate(incremental, decoder->data, given);
    }
    WebPIDelete(incremental);
    WebPFreeDecBuffer(&config.output);
    if (status == VP8_STATUS_OK) return SW_CODEC_OK;
    sw_whole_message(err, errlen, status == VP8_STATUS_SUSPENDED || status == VP8_STATUS_NOT_ENOUGH_DATA
                                      ? "truncated WebP data"
                                      : "corrupt WebP data");
    return SW_CODEC_ERROR;
}

void sw_webp_metadata(const sw_webp_decoder *decoder, sw_image_metadata *metadata) {
    sw_metadata_view(metadata, decoder->icc, decoder->icc_size, decoder->exif, decoder->exif_size, decoder->xmp,
                     decoder->xmp_size);
}

void sw_webp_close(sw_webp_decoder *decoder) {
    if (decoder == NULL) return;
    free(decoder->owned);
    free(decoder->icc);
    free(decoder->exif);
    free(decoder->xmp);
    free(decoder);
}

/* MARK: Encoding */

/* The collected rows and settings (the struct is its sw_whole_image: see sw_whole_image_new). */
struct sw_webp_encoder {
    sw_whole_image image;
};

sw_webp_encoder *sw_webp_encoder_open(int width, int height, int channels, int quality, FILE *file,
                                      const sw_image_metadata *metadata, char *err, size_t errlen) {
    if (width > WEBP_MAX_DIMENSION || height > WEBP_MAX_DIMENSION) {
        char message[200];
        snprintf(message, sizeof message,
                 "WebP images are at most %d pixels wide and high (this one is %dx%d): choose another format",
                 WEBP_MAX_DIMENSION, width, height);
        sw_whole_message(err, errlen, message);
        return NULL;
    }
    return (sw_webp_encoder *)sw_whole_image_new(width, height, channels, quality, file, metadata, err, errlen);
}

int sw_webp_encoder_write(sw_webp_encoder *encoder, const uint8_t *pixels, size_t stride, int rows,
                          const sw_cancellation *cancel, char *err, size_t errlen) {
    return sw_whole_image_append(&encoder->image, pixels, stride, rows, cancel, err, errlen);
}

static int sw_webp_progress(int percent, const WebPPicture *picture) {
    (void)percent;
    return sw_should_stop_now((const sw_cancellation *)picture->user_data) ? 0 : 1;
}

/* Puts the ICC profile, EXIF and XMP of `image` around the encoded bitstream `encoded` (a VP8X container). */
static int sw_webp_mux(const sw_whole_image *image, const WebPData *encoded, WebPData *assembled, char *err,
                       size_t errlen) {
    WebPMux *mux = WebPMuxNew();
    int ok = mux != NULL && WebPMuxSetImage(mux, encoded, 0) == WEBP_MUX_OK;
    struct { const char *fourcc; const uint8_t *bytes; size_t size; } chunks[3] = {
        { "ICCP", image->icc, image->icc_size }, { "EXIF", image->exif, image->exif_size },
        { "XMP ", image->xmp, image->xmp_size },
    };
    for (int i = 0; ok && i < 3; i++) {
        if (chunks[i].size == 0) continue;
        WebPData chunk = { chunks[i].bytes, chunks[i].size };
        ok = WebPMuxSetChunk(mux, chunks[i].fourcc, &chunk, 0) == WEBP_MUX_OK;
    }
    ok = ok && WebPMuxAssemble(mux, assembled) == WEBP_MUX_OK;
    WebPMuxDelete(mux);
    if (!ok) sw_whole_message(err, errlen, "cannot add the metadata to the WebP image");
    return ok ? SW_CODEC_OK : SW_CODEC_ERROR;
}

int sw_webp_encoder_finish(sw_webp_encoder *encoder, const sw_cancellation *cancel, uint8_t **out, size_t *out_size,
                           char *err, size_t errlen) {
    sw_whole_image *image = &encoder->image;
    if (sw_whole_image_complete(image, out, out_size, err, errlen) != SW_CODEC_OK) return SW_CODEC_ERROR;
    WebPConfig config;
    WebPPicture picture;
    if (!WebPConfigPreset(&config, WEBP_PRESET_PHOTO, (float)image->quality) || !WebPPictureInit(&picture)) {
        sw_whole_message(err, errlen, "libwebp version mismatch");
        return SW_CODEC_ERROR;
    }
    picture.width = image->width;
    picture.height = image->height;
    int stride = image->width * image->channels;
    int imported = image->channels == 4 ? WebPPictureImportRGBA(&picture, image->pixels, stride)
                                        : WebPPictureImportRGB(&picture, image->pixels, stride);
    /* The picture now holds its own Y'CbCr copy: the rows are no longer needed. */
    free(image->pixels);
    image->pixels = NULL;
    if (!imported) {
        WebPPictureFree(&picture);
        sw_whole_message(err, errlen, "out of memory for the WebP picture");
        return SW_CODEC_ERROR;
    }
    WebPMemoryWriter writer;
    WebPMemoryWriterInit(&writer);
    picture.writer = WebPMemoryWrite;
    picture.custom_ptr = &writer;
    picture.progress_hook = sw_webp_progress;
    picture.user_data = (void *)cancel;
    int encoded = WebPEncode(&config, &picture);
    WebPEncodingError error = picture.error_code;
    WebPPictureFree(&picture);
    if (!encoded) {
        WebPMemoryWriterClear(&writer);
        if (error == VP8_ENC_ERROR_USER_ABORT) return SW_CODEC_CANCELLED;
        char message[120];
        snprintf(message, sizeof message, "libwebp failed to encode (error %d)", (int)error);
        sw_whole_message(err, errlen, message);
        return SW_CODEC_ERROR;
    }
    int status;
    if (image->icc_size + image->exif_size + image->xmp_size > 0) {
        WebPData bitstream = { writer.mem, writer.size }, assembled = { NULL, 0 };
        status = sw_webp_mux(image, &bitstream, &assembled, err, errlen);
        if (status == SW_CODEC_OK) status = sw_whole_output(assembled.bytes, assembled.size, image->file, out, out_size, err, errlen);
        WebPDataClear(&assembled);
    } else {
        status = sw_whole_output(writer.mem, writer.size, image->file, out, out_size, err, errlen);
    }
    WebPMemoryWriterClear(&writer);
    return status;
}

void sw_webp_encoder_close(sw_webp_encoder *encoder) {
    if (encoder != NULL) sw_whole_image_delete(&encoder->image);
}
