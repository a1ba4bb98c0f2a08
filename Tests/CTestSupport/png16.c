/* 16-bit PNG inputs the project's own encoders do not write: interlaced (Adam7), with libpng. */
#include "CTestSupport.h"

#include <png.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

typedef struct sw_test_sink {
    uint8_t *data;
    size_t size, capacity;
} sw_test_sink;

static void sw_test_png_write(png_structp png, png_bytep bytes, png_size_t length) {
    sw_test_sink *sink = png_get_io_ptr(png);
    if (sink->size + length > sink->capacity) {
        size_t capacity = sink->capacity ? sink->capacity * 2 : 65536;
        while (capacity < sink->size + length) capacity *= 2;
        uint8_t *grown = realloc(sink->data, capacity);
        if (grown == NULL) png_error(png, "out of memory");
        sink->data = grown;
        sink->capacity = capacity;
    }
    memcpy(sink->data + sink->size, bytes, length);
    sink->size += length;
}

static void sw_test_png_flush(png_structp png) { (void)png; }

uint8_t *sw_test_png16_interlaced(const uint16_t *samples, int width, int height, int channels, size_t *size) {
    static const int types[] = {0, PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA, PNG_COLOR_TYPE_RGB, PNG_COLOR_TYPE_RGB_ALPHA};
    if (channels < 1 || channels > 4 || width <= 0 || height <= 0) return NULL;
    sw_test_sink sink = {0};
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png != NULL ? png_create_info_struct(png) : NULL;
    if (info == NULL) {
        png_destroy_write_struct(&png, NULL);
        return NULL;
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        free(sink.data);
        return NULL;
    }
    png_set_write_fn(png, &sink, sw_test_png_write, sw_test_png_flush);
    png_set_IHDR(png, info, (png_uint_32)width, (png_uint_32)height, 16, types[channels], PNG_INTERLACE_ADAM7,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    png_set_swap(png);
#endif
    int passes = png_set_interlace_handling(png);
    size_t row = (size_t)width * (size_t)channels;
    for (int pass = 0; pass < passes; pass++) {
        for (int y = 0; y < height; y++) png_write_row(png, (png_const_bytep)(const void *)(samples + (size_t)y * row));
    }
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    *size = sink.size;
    return sink.data;
}
