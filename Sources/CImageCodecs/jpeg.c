/* JPEG decode/encode through libjpeg-turbo. Every libjpeg call happens below a setjmp in this file. */
#include "CImageCodecs.h"
#include "cancellation.h"
#include "metadata.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <jerror.h>

typedef struct sw_jpeg_error {
    struct jpeg_error_mgr base;
    jmp_buf jump;
    char message[JMSG_LENGTH_MAX];
} sw_jpeg_error;

struct sw_jpeg_decoder {
    struct jpeg_decompress_struct cinfo;
    sw_jpeg_error error;
    int cmyk;
    int inverted_cmyk;
    int channels;
    int started;
    int finished;
    int planes;              /* reading raw Y'CbCr planes (sw_jpeg_start_planes) */
    uint8_t *cmyk_row;
    int keep_cmyk;           /* CMYK rows as stored (sw_jpeg_keep_cmyk), for a colour profile to convert */
    uint8_t *icc, *exif, *xmp, *iptc; /* the header's metadata (sw_jpeg_keep_metadata) */
    size_t icc_size, exif_size, xmp_size, iptc_size;
};

/* A growable memory destination. (libjpeg's jpeg_mem_dest replaces its buffer as it grows and says where
   only at the end, so a compression abandoned half-way could not free it.) */
typedef struct sw_jpeg_sink {
    struct jpeg_destination_mgr pub;
    uint8_t *data;
    size_t capacity;
    size_t size;
} sw_jpeg_sink;

static void sw_jpeg_sink_init(j_compress_ptr cinfo) {
    sw_jpeg_sink *sink = (sw_jpeg_sink *)cinfo->dest;
    if (sink->data == NULL) {
        sink->capacity = 65536;
        sink->data = malloc(sink->capacity);
        if (sink->data == NULL) ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 10);
    }
    sink->pub.next_output_byte = sink->data;
    sink->pub.free_in_buffer = sink->capacity;
}

static boolean sw_jpeg_sink_grow(j_compress_ptr cinfo) {
    sw_jpeg_sink *sink = (sw_jpeg_sink *)cinfo->dest;
    size_t used = sink->capacity; /* called when the buffer is full */
    uint8_t *grown = realloc(sink->data, sink->capacity * 2);
    if (grown == NULL) ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 11);
    sink->data = grown;
    sink->capacity *= 2;
    sink->pub.next_output_byte = grown + used;
    sink->pub.free_in_buffer = sink->capacity - used;
    return TRUE;
}

static void sw_jpeg_sink_term(j_compress_ptr cinfo) {
    sw_jpeg_sink *sink = (sw_jpeg_sink *)cinfo->dest;
    sink->size = sink->capacity - sink->pub.free_in_buffer;
}

struct sw_jpeg_encoder {
    struct jpeg_compress_struct cinfo;
    sw_jpeg_error error;
    int channels;            /* of the caller's rows: 1, 3 or 4 (composited over white) */
    sw_jpeg_sink sink;       /* the output, when written to memory */
    uint8_t *rgb_row;        /* one converted row, for 4 channels */
};

static void sw_copy_message(char *err, size_t errlen, const char *message) {
    if (err == NULL || errlen == 0) return;
    snprintf(err, errlen, "%s", message);
}

static void sw_jpeg_error_exit(j_common_ptr cinfo) {
    sw_jpeg_error *error = (sw_jpeg_error *)cinfo->err;
    (*cinfo->err->format_message)(cinfo, error->message);
    longjmp(error->jump, 1);
}

/* Warnings are ignored (real-world files are often slightly off), except a premature end of data:
   libjpeg would fill the missing rows with gray and call it a success. */
static void sw_jpeg_emit_message(j_common_ptr cinfo, int level) {
    if (level == -1 && cinfo->err->msg_code == JWRN_JPEG_EOF) {
        sw_jpeg_error *error = (sw_jpeg_error *)cinfo->err;
        snprintf(error->message, sizeof error->message, "truncated JPEG data (premature end of file)");
        longjmp(error->jump, 1);
    }
}

static void sw_jpeg_output_message(j_common_ptr cinfo) { (void)cinfo; }

/* Sets `error` up as a codec's error manager and returns it for its `cinfo.err` (as jpeg_std_error does): the
   caller's setjmp on `error->jump` is where every libjpeg failure lands. */
static struct jpeg_error_mgr *sw_jpeg_install_errors(sw_jpeg_error *error) {
    jpeg_std_error(&error->base);
    error->base.error_exit = sw_jpeg_error_exit;
    error->base.emit_message = sw_jpeg_emit_message;
    error->base.output_message = sw_jpeg_output_message;
    error->message[0] = 0;
    return &error->base;
}

/* APP1 payloads start with these. */
static const char sw_exif_prefix[6] = {'E', 'x', 'i', 'f', 0, 0};
static const char sw_xmp_prefix[] = "http://ns.adobe.com/xap/1.0/"; /* and its terminating zero */

/* Copies `size` bytes into a new buffer (NULL when empty or out of memory). */
static uint8_t *sw_copy_bytes(const uint8_t *bytes, size_t size) {
    if (size == 0) return NULL;
    uint8_t *copy = malloc(size);
    if (copy != NULL) memcpy(copy, bytes, size);
    return copy;
}

/* Keeps the metadata of the header's saved markers (they are freed with the image): the EXIF and XMP
   APP1 payloads without their prefixes, the ICC profile (APP2, reassembled), the IPTC APP13 payload. */
static void sw_jpeg_keep_metadata(sw_jpeg_decoder *decoder) {
    JOCTET *icc = NULL;
    unsigned int icc_size = 0;
    if (jpeg_read_icc_profile(&decoder->cinfo, &icc, &icc_size)) {
        decoder->icc = icc;
        decoder->icc_size = icc_size;
    }
    size_t xmp_prefix = sizeof sw_xmp_prefix; /* with the zero */
    for (jpeg_saved_marker_ptr m = decoder->cinfo.marker_list; m != NULL; m = m->next) {
        if (m->marker == JPEG_APP0 + 1 && decoder->exif == NULL && m->data_length > 6 &&
            memcmp(m->data, sw_exif_prefix, 6) == 0) {
            decoder->exif_size = m->data_length - 6;
            decoder->exif = sw_copy_bytes(m->data + 6, decoder->exif_size);
        } else if (m->marker == JPEG_APP0 + 1 && decoder->xmp == NULL && m->data_length > xmp_prefix &&
                   memcmp(m->data, sw_xmp_prefix, xmp_prefix) == 0) {
            decoder->xmp_size = m->data_length - xmp_prefix;
            decoder->xmp = sw_copy_bytes(m->data + xmp_prefix, decoder->xmp_size);
        } else if (m->marker == JPEG_APP0 + 13 && decoder->iptc == NULL) {
            decoder->iptc_size = m->data_length;
            decoder->iptc = sw_copy_bytes(m->data, m->data_length);
        }
    }
    if (decoder->exif == NULL) decoder->exif_size = 0;
    if (decoder->xmp == NULL) decoder->xmp_size = 0;
    if (decoder->iptc == NULL) decoder->iptc_size = 0;
}

void sw_jpeg_metadata(const sw_jpeg_decoder *decoder, sw_image_metadata *metadata) {
    sw_metadata_view(metadata, decoder->icc, decoder->icc_size, decoder->exif, decoder->exif_size, decoder->xmp,
                     decoder->xmp_size);
    metadata->iptc = decoder->iptc;
    metadata->iptc_size = decoder->iptc_size;
}

/* Writes `metadata` after the encoder's start: EXIF (its orientation reset to 1: the pixels are upright),
   ICC, XMP, IPTC. A payload too large for one marker is left out. */
static void sw_jpeg_write_metadata(struct jpeg_compress_struct *cinfo, const sw_image_metadata *metadata) {
    if (metadata == NULL) return;
    if (metadata->exif_size > 0 && metadata->exif_size + 6 <= 65533) {
        uint8_t *app1 = malloc(metadata->exif_size + 6);
        if (app1 != NULL) {
            memcpy(app1, sw_exif_prefix, 6);
            memcpy(app1 + 6, metadata->exif, metadata->exif_size);
            sw_exif_reset_orientation(app1 + 6, metadata->exif_size);
            jpeg_write_marker(cinfo, JPEG_APP0 + 1, app1, (unsigned int)(metadata->exif_size + 6));
            free(app1);
        }
    }
    if (metadata->icc_size > 0) jpeg_write_icc_profile(cinfo, metadata->icc, (unsigned int)metadata->icc_size);
    size_t xmp_prefix = sizeof sw_xmp_prefix;
    if (metadata->xmp_size > 0 && metadata->xmp_size + xmp_prefix <= 65533) {
        uint8_t *app1 = malloc(metadata->xmp_size + xmp_prefix);
        if (app1 != NULL) {
            memcpy(app1, sw_xmp_prefix, xmp_prefix);
            memcpy(app1 + xmp_prefix, metadata->xmp, metadata->xmp_size);
            jpeg_write_marker(cinfo, JPEG_APP0 + 1, app1, (unsigned int)(metadata->xmp_size + xmp_prefix));
            free(app1);
        }
    }
    if (metadata->iptc_size > 0 && metadata->iptc_size <= 65533) {
        jpeg_write_marker(cinfo, JPEG_APP0 + 13, metadata->iptc, (unsigned int)metadata->iptc_size);
    }
}

static sw_jpeg_decoder *sw_jpeg_open_source(const uint8_t *data, size_t size, FILE *file, sw_image_info *info,
                                           char *err, size_t errlen) {
    memset(info, 0, sizeof *info);
    sw_jpeg_decoder *decoder = calloc(1, sizeof *decoder);
    if (decoder == NULL) {
        sw_copy_message(err, errlen, "out of memory");
        return NULL;
    }
    if (file == NULL && (size == 0 || size > (size_t)0xFFFFFFFFu)) {
        sw_copy_message(err, errlen, size == 0 ? "empty JPEG data" : "JPEG data larger than 4 GiB");
        free(decoder);
        return NULL;
    }
    decoder->cinfo.err = sw_jpeg_install_errors(&decoder->error);
    if (setjmp(decoder->error.jump)) {
        sw_copy_message(err, errlen, decoder->error.message);
        sw_jpeg_close(decoder);
        return NULL;
    }
    jpeg_create_decompress(&decoder->cinfo);
    if (file != NULL) {
        jpeg_stdio_src(&decoder->cinfo, file);
    } else {
        jpeg_mem_src(&decoder->cinfo, (unsigned char *)data, (unsigned long)size);
    }
    jpeg_save_markers(&decoder->cinfo, JPEG_APP0 + 1, 0xFFFF);
    jpeg_save_markers(&decoder->cinfo, JPEG_APP0 + 2, 0xFFFF);
    jpeg_save_markers(&decoder->cinfo, JPEG_APP0 + 13, 0xFFFF);
    jpeg_read_header(&decoder->cinfo, TRUE);
    sw_jpeg_keep_metadata(decoder);
    int orientation = decoder->exif != NULL ? sw_exif_orientation(decoder->exif, decoder->exif_size) : 1;

    switch (decoder->cinfo.jpeg_color_space) {
    case JCS_GRAYSCALE:
        decoder->cinfo.out_color_space = JCS_GRAYSCALE;
        decoder->channels = 1;
        break;
    case JCS_CMYK:
    case JCS_YCCK:
        decoder->cinfo.out_color_space = JCS_CMYK;
        decoder->cmyk = 1;
        /* Photoshop writes inverted CMYK and says so with an Adobe marker. */
        decoder->inverted_cmyk = decoder->cinfo.saw_Adobe_marker;
        decoder->channels = 3;
        break;
    default:
        decoder->cinfo.out_color_space = JCS_RGB;
        decoder->channels = 3;
        break;
    }
    jpeg_calc_output_dimensions(&decoder->cinfo);

    info->width = (int)decoder->cinfo.output_width;
    info->height = (int)decoder->cinfo.output_height;
    info->channels = decoder->channels;
    info->orientation = orientation;
    info->converted_from_cmyk = decoder->cmyk;
    info->source_bit_depth = 8;
    return decoder;
}

sw_jpeg_decoder *sw_jpeg_open(const uint8_t *data, size_t size, sw_image_info *info, char *err, size_t errlen) {
    return sw_jpeg_open_source(data, size, NULL, info, err, errlen);
}

sw_jpeg_decoder *sw_jpeg_open_file(FILE *file, sw_image_info *info, char *err, size_t errlen) {
    return sw_jpeg_open_source(NULL, 0, file, info, err, errlen);
}

int sw_jpeg_read_rows(sw_jpeg_decoder *decoder, uint8_t *pixels, size_t stride, int rows, const sw_cancellation *cancel,
                      char *err, size_t errlen) {
    if (setjmp(decoder->error.jump)) {
        sw_copy_message(err, errlen, decoder->error.message);
        return SW_CODEC_ERROR;
    }
    struct jpeg_decompress_struct *cinfo = &decoder->cinfo;
    if (!decoder->started) {
        jpeg_start_decompress(cinfo);
        decoder->started = 1;
        if (decoder->cmyk) {
            decoder->cmyk_row = malloc((size_t)cinfo->output_width * 4);
            if (decoder->cmyk_row == NULL) {
                sw_copy_message(err, errlen, "out of memory");
                return SW_CODEC_ERROR;
            }
        }
    }
    for (int i = 0; i < rows && cinfo->output_scanline < cinfo->output_height; i++) {
        if (sw_should_stop(cancel, cinfo->output_scanline)) {
            jpeg_abort_decompress(cinfo);
            return SW_CODEC_CANCELLED;
        }
        uint8_t *row = pixels + (size_t)i * stride;
        if (!decoder->cmyk) {
            JSAMPROW rows_[1] = { row };
            jpeg_read_scanlines(cinfo, rows_, 1);
            continue;
        }
        if (decoder->keep_cmyk) {
            JSAMPROW rows_[1] = { row };
            jpeg_read_scanlines(cinfo, rows_, 1);
            continue;
        }
        uint8_t *cmyk_row = decoder->cmyk_row;
        JSAMPROW rows_[1] = { cmyk_row };
        jpeg_read_scanlines(cinfo, rows_, 1);
        /* A naive CMYK -> RGB conversion (no colour profile): R = (1-C)(1-K), etc. */
        for (JDIMENSION x = 0; x < cinfo->output_width; x++) {
            unsigned c = cmyk_row[4 * x], m = cmyk_row[4 * x + 1], y = cmyk_row[4 * x + 2], k = cmyk_row[4 * x + 3];
            if (!decoder->inverted_cmyk) {
                c = 255 - c; m = 255 - m; y = 255 - y; k = 255 - k;
            }
            row[3 * x] = (uint8_t)((c * k + 127) / 255);
            row[3 * x + 1] = (uint8_t)((m * k + 127) / 255);
            row[3 * x + 2] = (uint8_t)((y * k + 127) / 255);
        }
    }
    if (cinfo->output_scanline >= cinfo->output_height && !decoder->finished) {
        /* Reads to the end of the data: a truncated file fails here too (premature end). */
        jpeg_finish_decompress(cinfo);
        decoder->finished = 1;
    }
    return SW_CODEC_OK;
}

int sw_jpeg_keep_cmyk(sw_jpeg_decoder *decoder) {
    if (!decoder->cmyk || decoder->started) return 0;
    decoder->keep_cmyk = 1;
    return decoder->inverted_cmyk ? 2 : 1;
}

/* MARK: raw Y'CbCr planes */

static void sw_jpeg_fill_planes(const jpeg_component_info *components, int max_h, int max_v, sw_jpeg_planes *planes) {
    planes->max_h = max_h;
    planes->max_v = max_v;
    for (int i = 0; i < 3; i++) {
        const jpeg_component_info *c = &components[i];
        planes->h[i] = c->h_samp_factor;
        planes->v[i] = c->v_samp_factor;
        planes->width[i] = (int)c->downsampled_width;
        planes->height[i] = (int)c->downsampled_height;
        planes->padded_width[i] = (int)c->width_in_blocks * DCTSIZE;
        planes->group_rows[i] = c->v_samp_factor * DCTSIZE;
    }
}

int sw_jpeg_start_planes(sw_jpeg_decoder *decoder, sw_jpeg_planes *planes, char *err, size_t errlen) {
    memset(planes, 0, sizeof *planes);
    struct jpeg_decompress_struct *cinfo = &decoder->cinfo;
    const char *reason = NULL;
    if (decoder->started) reason = "the decoder has started";
    else if (cinfo->jpeg_color_space != JCS_YCbCr || cinfo->num_components != 3) reason = "not 3-component Y'CbCr";
    else if (cinfo->data_precision != 8) reason = "not 8 bits per sample";
    else if (cinfo->arith_code) reason = "arithmetic coding";
    else {
        const jpeg_component_info *c = cinfo->comp_info;
        int luma_ok = c[0].h_samp_factor >= 1 && c[0].h_samp_factor <= 2 && c[0].v_samp_factor >= 1 && c[0].v_samp_factor <= 2;
        int chroma_ok = c[1].h_samp_factor == 1 && c[1].v_samp_factor == 1 && c[2].h_samp_factor == 1 && c[2].v_samp_factor == 1;
        if (!luma_ok || !chroma_ok) reason = "sampling factors other than 4:4:4, 4:2:2, 4:4:0 or 4:2:0";
    }
    if (reason != NULL) {
        sw_copy_message(err, errlen, reason);
        return SW_CODEC_UNSUPPORTED;
    }
    sw_jpeg_fill_planes(cinfo->comp_info, cinfo->max_h_samp_factor, cinfo->max_v_samp_factor, planes);
    cinfo->raw_data_out = TRUE;
    decoder->planes = 1;
    return SW_CODEC_OK;
}

int sw_jpeg_read_planes(sw_jpeg_decoder *decoder, uint8_t *const planes[3], const size_t strides[3],
                        const sw_cancellation *cancel, char *err, size_t errlen) {
    if (setjmp(decoder->error.jump)) {
        sw_copy_message(err, errlen, decoder->error.message);
        return SW_CODEC_ERROR;
    }
    struct jpeg_decompress_struct *cinfo = &decoder->cinfo;
    if (!decoder->planes) {
        sw_copy_message(err, errlen, "sw_jpeg_start_planes was not called");
        return SW_CODEC_ERROR;
    }
    if (!decoder->started) {
        jpeg_start_decompress(cinfo);
        decoder->started = 1;
    }
    if (sw_should_stop(cancel, cinfo->output_scanline)) {
        jpeg_abort_decompress(cinfo);
        return SW_CODEC_CANCELLED;
    }
    JSAMPROW rows[3][4 * DCTSIZE];
    JSAMPARRAY components[3];
    for (int i = 0; i < 3; i++) {
        int count = cinfo->comp_info[i].v_samp_factor * DCTSIZE;
        for (int r = 0; r < count; r++) rows[i][r] = planes[i] + (size_t)r * strides[i];
        components[i] = rows[i];
    }
    if (cinfo->output_scanline < cinfo->output_height) {
        jpeg_read_raw_data(cinfo, components, (JDIMENSION)(cinfo->max_v_samp_factor * DCTSIZE));
    }
    if (cinfo->output_scanline >= cinfo->output_height && !decoder->finished) {
        jpeg_finish_decompress(cinfo);
        decoder->finished = 1;
    }
    return SW_CODEC_OK;
}

void sw_jpeg_close(sw_jpeg_decoder *decoder) {
    if (decoder == NULL) return;
    /* jpeg_destroy never raises an error. */
    jpeg_destroy_decompress(&decoder->cinfo);
    free(decoder->cmyk_row);
    free(decoder->icc);
    free(decoder->exif);
    free(decoder->xmp);
    free(decoder->iptc);
    free(decoder);
}

static sw_jpeg_encoder *sw_jpeg_encoder_open_common(int width, int height, int channels, int quality, FILE *file,
                                                   const sw_jpeg_planes *planes, const sw_image_metadata *metadata,
                                                   char *err, size_t errlen) {
    if (channels != 1 && channels != 3 && channels != 4) {
        sw_copy_message(err, errlen, "JPEG encoding needs 1 (gray), 3 (RGB) or 4 (RGBA) channels");
        return NULL;
    }
    if (width <= 0 || height <= 0 || width > 65500 || height > 65500) {
        sw_copy_message(err, errlen, "JPEG dimensions must be between 1 and 65500 pixels");
        return NULL;
    }
    sw_jpeg_encoder *encoder = calloc(1, sizeof *encoder);
    if (encoder == NULL || (channels == 4 && (encoder->rgb_row = malloc((size_t)width * 3)) == NULL)) {
        free(encoder);
        sw_copy_message(err, errlen, "out of memory");
        return NULL;
    }
    encoder->channels = channels;
    encoder->cinfo.err = sw_jpeg_install_errors(&encoder->error);
    if (setjmp(encoder->error.jump)) {
        sw_copy_message(err, errlen, encoder->error.message);
        sw_jpeg_encoder_close(encoder);
        return NULL;
    }
    jpeg_create_compress(&encoder->cinfo);
    if (file != NULL) {
        jpeg_stdio_dest(&encoder->cinfo, file);
    } else {
        encoder->sink.pub.init_destination = sw_jpeg_sink_init;
        encoder->sink.pub.empty_output_buffer = sw_jpeg_sink_grow;
        encoder->sink.pub.term_destination = sw_jpeg_sink_term;
        encoder->cinfo.dest = &encoder->sink.pub;
    }
    encoder->cinfo.image_width = (JDIMENSION)width;
    encoder->cinfo.image_height = (JDIMENSION)height;
    encoder->cinfo.input_components = channels == 1 ? 1 : 3;
    encoder->cinfo.in_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
    if (planes != NULL) encoder->cinfo.in_color_space = JCS_YCbCr;
    jpeg_set_defaults(&encoder->cinfo);
    if (planes != NULL) {
        /* Raw planes in, with the sampling they were decoded with. */
        encoder->cinfo.raw_data_in = TRUE;
        for (int i = 0; i < 3; i++) {
            encoder->cinfo.comp_info[i].h_samp_factor = planes->h[i];
            encoder->cinfo.comp_info[i].v_samp_factor = planes->v[i];
        }
    }
    jpeg_set_quality(&encoder->cinfo, quality < 1 ? 1 : (quality > 100 ? 100 : quality), TRUE);
    jpeg_start_compress(&encoder->cinfo, TRUE);
    sw_jpeg_write_metadata(&encoder->cinfo, metadata);
    return encoder;
}

sw_jpeg_encoder *sw_jpeg_encoder_open(int width, int height, int channels, int quality, FILE *file,
                                      const sw_image_metadata *metadata, char *err, size_t errlen) {
    return sw_jpeg_encoder_open_common(width, height, channels, quality, file, NULL, metadata, err, errlen);
}

sw_jpeg_encoder *sw_jpeg_encoder_open_planes(int width, int height, const sw_jpeg_planes *planes, int quality, FILE *file,
                                             const sw_image_metadata *metadata, char *err, size_t errlen) {
    return sw_jpeg_encoder_open_common(width, height, 3, quality, file, planes, metadata, err, errlen);
}

int sw_jpeg_encoder_write_planes(sw_jpeg_encoder *encoder, uint8_t *const planes[3], const size_t strides[3],
                                 const sw_cancellation *cancel, char *err, size_t errlen) {
    if (setjmp(encoder->error.jump)) {
        sw_copy_message(err, errlen, encoder->error.message);
        return SW_CODEC_ERROR;
    }
    struct jpeg_compress_struct *cinfo = &encoder->cinfo;
    if (sw_should_stop(cancel, cinfo->next_scanline)) return SW_CODEC_CANCELLED;
    JSAMPROW rows[3][4 * DCTSIZE];
    JSAMPARRAY components[3];
    for (int i = 0; i < 3; i++) {
        int count = cinfo->comp_info[i].v_samp_factor * DCTSIZE;
        for (int r = 0; r < count; r++) rows[i][r] = planes[i] + (size_t)r * strides[i];
        components[i] = rows[i];
    }
    jpeg_write_raw_data(cinfo, components, (JDIMENSION)(cinfo->max_v_samp_factor * DCTSIZE));
    return SW_CODEC_OK;
}

int sw_jpeg_encoder_write(sw_jpeg_encoder *encoder, const uint8_t *pixels, size_t stride, int rows,
                          const sw_cancellation *cancel, char *err, size_t errlen) {
    if (setjmp(encoder->error.jump)) {
        sw_copy_message(err, errlen, encoder->error.message);
        return SW_CODEC_ERROR;
    }
    struct jpeg_compress_struct *cinfo = &encoder->cinfo;
    for (int i = 0; i < rows && cinfo->next_scanline < cinfo->image_height; i++) {
        if (sw_should_stop(cancel, cinfo->next_scanline)) return SW_CODEC_CANCELLED;
        const uint8_t *row = pixels + (size_t)i * stride;
        if (encoder->channels == 4) {
            /* JPEG has no alpha: composite over white. */
            for (JDIMENSION x = 0; x < cinfo->image_width; x++) {
                unsigned a = row[4 * x + 3];
                for (int c = 0; c < 3; c++) {
                    encoder->rgb_row[3 * x + c] = (uint8_t)((row[4 * x + c] * a + 255 * (255 - a) + 127) / 255);
                }
            }
            row = encoder->rgb_row;
        }
        JSAMPROW rows_[1] = { (JSAMPROW)row };
        jpeg_write_scanlines(cinfo, rows_, 1);
    }
    return SW_CODEC_OK;
}

int sw_jpeg_encoder_finish(sw_jpeg_encoder *encoder, uint8_t **out, size_t *out_size, char *err, size_t errlen) {
    *out = NULL;
    *out_size = 0;
    if (setjmp(encoder->error.jump)) {
        sw_copy_message(err, errlen, encoder->error.message);
        return SW_CODEC_ERROR;
    }
    if (encoder->cinfo.next_scanline < encoder->cinfo.image_height) {
        sw_copy_message(err, errlen, "JPEG encoder finished before its last row");
        return SW_CODEC_ERROR;
    }
    jpeg_finish_compress(&encoder->cinfo);
    *out = encoder->sink.data;
    *out_size = encoder->sink.size;
    encoder->sink.data = NULL;
    return SW_CODEC_OK;
}

void sw_jpeg_encoder_close(sw_jpeg_encoder *encoder) {
    if (encoder == NULL) return;
    jpeg_destroy_compress(&encoder->cinfo);
    free(encoder->sink.data);
    free(encoder->rgb_row);
    free(encoder);
}

void sw_codec_free(void *pointer) { free(pointer); }
