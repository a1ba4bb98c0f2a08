/* GIF input through giflib: the first frame, composed on the logical screen; see CImageCodecs.h ("GIF (giflib),
   HEIF/HEIC"). giflib reports errors by return values: nothing here jumps. The encoded data is read as giflib
   asks for it (a file is not read whole first); the frame's rows (interlaced or not) are decoded one at a time
   into the caller's picture. */
#include "CImageCodecs.h"
#include "cancellation.h"
#include "metadata.h"

#include <gif_lib.h>
#include <stdlib.h>
#include <string.h>

struct sw_gif_decoder {
    GifFileType *gif;
    /* Where the bytes come from: memory (data, size, position) or a file (at most max_bytes of it). */
    const uint8_t *data;
    size_t size, position;
    FILE *file;
    size_t max_bytes, read;
    int over_limit;
    int screen_width, screen_height;
    int left, top, frame_width, frame_height, interlaced;
    int transparent;
    int channels;
    int more_frames;
    const ColorMapObject *colours;
};

static void sw_gif_message(char *err, size_t errlen, const char *what, int code) {
    if (err == NULL || errlen == 0) return;
    const char *detail = code != 0 ? GifErrorString(code) : NULL;
    if (detail != NULL) snprintf(err, errlen, "%s: %s", what, detail);
    else snprintf(err, errlen, "%s", what);
}

static int sw_gif_input(GifFileType *gif, GifByteType *buffer, int count) {
    sw_gif_decoder *decoder = gif->UserData;
    if (count <= 0) return 0;
    if (decoder->file != NULL) {
        size_t n = fread(buffer, 1, (size_t)count, decoder->file);
        decoder->read += n;
        if (decoder->read > decoder->max_bytes) {
            decoder->over_limit = 1;
            return 0;
        }
        return (int)n;
    }
    size_t available = decoder->size - decoder->position;
    size_t n = (size_t)count < available ? (size_t)count : available;
    memcpy(buffer, decoder->data + decoder->position, n);
    decoder->position += n;
    return (int)n;
}

/* Skips an extension's data blocks (after DGifGetExtension). 0 on error. */
static int sw_gif_skip_extension(GifFileType *gif, GifByteType *block) {
    while (block != NULL) {
        if (DGifGetExtensionNext(gif, &block) == GIF_ERROR) return 0;
    }
    return 1;
}

static sw_gif_decoder *sw_gif_fail(sw_gif_decoder *decoder, char *err, size_t errlen, const char *what, int code) {
    if (decoder->over_limit) sw_gif_message(err, errlen, "the file is larger than the byte limit", 0);
    else sw_gif_message(err, errlen, what, code);
    sw_gif_close(decoder);
    return NULL;
}

static sw_gif_decoder *sw_gif_open_source(sw_gif_decoder *decoder, sw_image_info *info, char *err, size_t errlen) {
    int code = 0;
    decoder->transparent = -1;
    decoder->gif = DGifOpen(decoder, sw_gif_input, &code);
    if (decoder->gif == NULL) return sw_gif_fail(decoder, err, errlen, "not a readable GIF", code);
    GifFileType *gif = decoder->gif;
    decoder->screen_width = gif->SWidth;
    decoder->screen_height = gif->SHeight;
    /* Up to the first frame's descriptor: its graphic control (transparency) on the way. */
    for (;;) {
        GifRecordType type;
        if (DGifGetRecordType(gif, &type) == GIF_ERROR) return sw_gif_fail(decoder, err, errlen, "cannot read the GIF", gif->Error);
        if (type == TERMINATE_RECORD_TYPE) return sw_gif_fail(decoder, err, errlen, "the GIF holds no image", 0);
        if (type == EXTENSION_RECORD_TYPE) {
            int function = 0;
            GifByteType *block = NULL;
            if (DGifGetExtension(gif, &function, &block) == GIF_ERROR) {
                return sw_gif_fail(decoder, err, errlen, "cannot read the GIF", gif->Error);
            }
            if (function == GRAPHICS_EXT_FUNC_CODE && block != NULL && block[0] == 4) {
                GraphicsControlBlock control;
                if (DGifExtensionToGCB(block[0], block + 1, &control) == GIF_OK) decoder->transparent = control.TransparentColor;
            }
            if (!sw_gif_skip_extension(gif, block)) return sw_gif_fail(decoder, err, errlen, "cannot read the GIF", gif->Error);
            continue;
        }
        if (type == IMAGE_DESC_RECORD_TYPE) {
            if (DGifGetImageDesc(gif) == GIF_ERROR) return sw_gif_fail(decoder, err, errlen, "cannot read the GIF", gif->Error);
            break;
        }
    }
    decoder->left = gif->Image.Left;
    decoder->top = gif->Image.Top;
    decoder->frame_width = gif->Image.Width;
    decoder->frame_height = gif->Image.Height;
    decoder->interlaced = gif->Image.Interlace;
    /* A screen of 0×0 (some writers) takes the frame's size. */
    if (decoder->screen_width == 0 || decoder->screen_height == 0) {
        decoder->screen_width = decoder->left + decoder->frame_width;
        decoder->screen_height = decoder->top + decoder->frame_height;
    }
    if (decoder->screen_width <= 0 || decoder->screen_height <= 0 || decoder->frame_width <= 0 || decoder->frame_height <= 0) {
        return sw_gif_fail(decoder, err, errlen, "the GIF's width or height is 0", 0);
    }
    decoder->colours = gif->Image.ColorMap != NULL ? gif->Image.ColorMap : gif->SColorMap;
    if (decoder->colours == NULL || decoder->colours->Colors == NULL) {
        return sw_gif_fail(decoder, err, errlen, "the GIF has no colour table", 0);
    }
    const int covers = decoder->left == 0 && decoder->top == 0 && decoder->frame_width >= decoder->screen_width &&
                       decoder->frame_height >= decoder->screen_height;
    decoder->channels = decoder->transparent >= 0 || !covers ? 4 : 3;
    memset(info, 0, sizeof *info);
    info->width = decoder->screen_width;
    info->height = decoder->screen_height;
    info->channels = decoder->channels;
    info->orientation = 1;
    info->source_bit_depth = 8;
    return decoder;
}

sw_gif_decoder *sw_gif_open(const uint8_t *data, size_t size, sw_image_info *info, char *err, size_t errlen) {
    sw_gif_decoder *decoder = calloc(1, sizeof *decoder);
    if (decoder == NULL) {
        sw_gif_message(err, errlen, "out of memory", 0);
        return NULL;
    }
    decoder->data = data;
    decoder->size = size;
    return sw_gif_open_source(decoder, info, err, errlen);
}

sw_gif_decoder *sw_gif_open_file(FILE *file, size_t max_bytes, sw_image_info *info, char *err, size_t errlen) {
    sw_gif_decoder *decoder = calloc(1, sizeof *decoder);
    if (decoder == NULL) {
        sw_gif_message(err, errlen, "out of memory", 0);
        return NULL;
    }
    decoder->file = file;
    decoder->max_bytes = max_bytes;
    return sw_gif_open_source(decoder, info, err, errlen);
}

int sw_gif_read(sw_gif_decoder *decoder, uint8_t *pixels, size_t stride, const sw_cancellation *cancel, char *err,
                size_t errlen) {
    const int channels = decoder->channels;
    if (channels == 4) {
        for (int y = 0; y < decoder->screen_height; y++) memset(pixels + (size_t)y * stride, 0, (size_t)decoder->screen_width * 4);
    }
    GifPixelType *line = malloc((size_t)decoder->frame_width);
    if (line == NULL) {
        sw_gif_message(err, errlen, "out of memory for a GIF row", 0);
        return SW_CODEC_ERROR;
    }
    static const int starts[4] = {0, 4, 2, 1}, steps[4] = {8, 8, 4, 2};
    const int passes = decoder->interlaced ? 4 : 1;
    const ColorMapObject *colours = decoder->colours;
    unsigned decoded = 0;
    for (int pass = 0; pass < passes; pass++) {
        const int start = decoder->interlaced ? starts[pass] : 0, step = decoder->interlaced ? steps[pass] : 1;
        for (int y = start; y < decoder->frame_height; y += step) {
            if (sw_should_stop(cancel, decoded++)) {
                free(line);
                return SW_CODEC_CANCELLED;
            }
            if (DGifGetLine(decoder->gif, line, decoder->frame_width) == GIF_ERROR) {
                free(line);
                if (decoder->over_limit) sw_gif_message(err, errlen, "the file is larger than the byte limit", 0);
                else sw_gif_message(err, errlen, "the GIF is truncated or corrupt", decoder->gif->Error);
                return SW_CODEC_ERROR;
            }
            const int row = decoder->top + y;
            if (row >= decoder->screen_height) continue;
            uint8_t *out = pixels + (size_t)row * stride;
            for (int x = 0; x < decoder->frame_width; x++) {
                const int column = decoder->left + x;
                if (column >= decoder->screen_width) break;
                const int index = line[x];
                uint8_t *o = out + (size_t)column * (size_t)channels;
                if (index == decoder->transparent) continue; /* stays transparent (0, 0, 0, 0) */
                if (index < colours->ColorCount) {
                    o[0] = colours->Colors[index].Red;
                    o[1] = colours->Colors[index].Green;
                    o[2] = colours->Colors[index].Blue;
                } else {
                    o[0] = o[1] = o[2] = 0; /* an index past the colour table is black */
                }
                if (channels == 4) o[3] = 255;
            }
        }
    }
    free(line);
    /* Whether another frame follows (a broken tail after the first frame is not an error: it is not read). */
    for (;;) {
        GifRecordType type;
        if (DGifGetRecordType(decoder->gif, &type) == GIF_ERROR || type == TERMINATE_RECORD_TYPE) break;
        if (type == IMAGE_DESC_RECORD_TYPE) {
            decoder->more_frames = 1;
            break;
        }
        if (type == EXTENSION_RECORD_TYPE) {
            int function = 0;
            GifByteType *block = NULL;
            if (DGifGetExtension(decoder->gif, &function, &block) == GIF_ERROR || !sw_gif_skip_extension(decoder->gif, block)) break;
        }
    }
    return SW_CODEC_OK;
}

int sw_gif_more_frames(const sw_gif_decoder *decoder) { return decoder->more_frames; }

void sw_gif_metadata(const sw_gif_decoder *decoder, sw_image_metadata *metadata) {
    (void)decoder;
    sw_metadata_view(metadata, NULL, 0, NULL, 0, NULL, 0);
}

void sw_gif_close(sw_gif_decoder *decoder) {
    if (decoder == NULL) return;
    if (decoder->gif != NULL) {
        int code = 0;
        DGifCloseFile(decoder->gif, &code);
    }
    free(decoder);
}
