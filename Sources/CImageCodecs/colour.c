/* Colour conversion through ICC profiles, with LittleCMS: an input's embedded profile to sRGB. */
#include "CImageCodecs.h"

#include <lcms2.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct sw_colour_transform {
    cmsHTRANSFORM transform;
};

static void sw_colour_quiet(cmsContext context, cmsUInt32Number code, const char *text) {
    (void)context;
    (void)code;
    (void)text; /* a bad profile is reported by a NULL result, with our own message */
}

static pthread_once_t sw_colour_once = PTHREAD_ONCE_INIT;
static void sw_colour_setup(void) { cmsSetLogErrorHandler(sw_colour_quiet); }

static void sw_colour_message(char *err, size_t errlen, const char *message) {
    if (err != NULL && errlen > 0) snprintf(err, errlen, "%s", message);
}

/* The colour space a profile must describe for pixels of `channels`. */
static cmsColorSpaceSignature sw_expected_space(int channels) {
    return channels == 4 ? cmsSigCmykData : (channels == 1 ? cmsSigGrayData : cmsSigRgbData);
}

int sw_icc_check(const uint8_t *icc, size_t size, int channels, char *err, size_t errlen) {
    pthread_once(&sw_colour_once, sw_colour_setup);
    if (size < 132 || size > 0x7FFFFFFF) {
        sw_colour_message(err, errlen, "the embedded ICC profile is too short or too long to be one");
        return SW_CODEC_ERROR;
    }
    cmsHPROFILE profile = cmsOpenProfileFromMem(icc, (cmsUInt32Number)size);
    if (profile == NULL) {
        sw_colour_message(err, errlen, "the embedded ICC profile is malformed");
        return SW_CODEC_ERROR;
    }
    cmsColorSpaceSignature space = cmsGetColorSpace(profile);
    cmsCloseProfile(profile);
    if (space != sw_expected_space(channels)) {
        sw_colour_message(err, errlen, "the embedded ICC profile describes another colour space than the image's");
        return SW_CODEC_ERROR;
    }
    return SW_CODEC_OK;
}

static sw_colour_transform *sw_colour_make(const uint8_t *icc, size_t size, int channels, int inverted_cmyk, int sixteen,
                                           char *err, size_t errlen);

sw_colour_transform *sw_colour_to_srgb(const uint8_t *icc, size_t size, int channels, int inverted_cmyk, char *err,
                                       size_t errlen) {
    return sw_colour_make(icc, size, channels, inverted_cmyk, 0, err, errlen);
}

sw_colour_transform *sw_colour_to_srgb16(const uint8_t *icc, size_t size, char *err, size_t errlen) {
    return sw_colour_make(icc, size, 3, 0, 1, err, errlen);
}

static sw_colour_transform *sw_colour_make(const uint8_t *icc, size_t size, int channels, int inverted_cmyk, int sixteen,
                                           char *err, size_t errlen) {
    pthread_once(&sw_colour_once, sw_colour_setup);
    if (sw_icc_check(icc, size, channels, err, errlen) != SW_CODEC_OK) return NULL;
    if (channels != 3 && channels != 4) {
        sw_colour_message(err, errlen, "only RGB and CMYK images are converted to sRGB");
        return NULL;
    }
    cmsHPROFILE input = cmsOpenProfileFromMem(icc, (cmsUInt32Number)size);
    cmsHPROFILE srgb = cmsCreate_sRGBProfile();
    cmsUInt32Number format = channels == 3 ? TYPE_RGB_8 : (inverted_cmyk ? TYPE_CMYK_8_REV : TYPE_CMYK_8);
    if (sixteen) format = TYPE_RGB_16; /* host-order uint16_t samples */
    cmsHTRANSFORM transform = NULL;
    if (input != NULL && srgb != NULL) {
        transform = cmsCreateTransform(input, format, srgb, sixteen ? TYPE_RGB_16 : TYPE_RGB_8, INTENT_PERCEPTUAL, 0);
    }
    if (input != NULL) cmsCloseProfile(input);
    if (srgb != NULL) cmsCloseProfile(srgb);
    if (transform == NULL) {
        sw_colour_message(err, errlen, "the embedded ICC profile cannot convert to sRGB");
        return NULL;
    }
    sw_colour_transform *result = malloc(sizeof *result);
    if (result == NULL) {
        cmsDeleteTransform(transform);
        sw_colour_message(err, errlen, "out of memory");
        return NULL;
    }
    result->transform = transform;
    return result;
}

void sw_colour_apply(const sw_colour_transform *transform, const uint8_t *input, uint8_t *output, size_t pixels) {
    cmsDoTransform(transform->transform, input, output, (cmsUInt32Number)pixels);
}

void sw_colour_free(sw_colour_transform *transform) {
    if (transform == NULL) return;
    cmsDeleteTransform(transform->transform);
    free(transform);
}
