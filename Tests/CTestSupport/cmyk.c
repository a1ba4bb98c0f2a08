/* Test-only: a CMYK profile made with LittleCMS and a CMYK JPEG written with libjpeg-turbo (see CTestSupport.h). */
#include "CTestSupport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <lcms2.h>

/* CMYK (16 bits each) to sRGB through the swapped inks, then to Lab (D50) through LittleCMS's own sRGB, encoded
   as an ICC v2 lut16 stores Lab. */
static int sw_test_sampler(const cmsUInt16Number in[], cmsUInt16Number out[], void *cargo) {
    cmsHTRANSFORM to_lab = (cmsHTRANSFORM)cargo;
    double c = in[0] / 65535.0, m = in[1] / 65535.0, y = in[2] / 65535.0, k = in[3] / 65535.0;
    cmsFloat64Number rgb[3] = { (1.0 - y) * (1.0 - k), (1.0 - m) * (1.0 - k), (1.0 - c) * (1.0 - k) };
    cmsCIELab lab;
    cmsDoTransform(to_lab, rgb, &lab, 1);
    cmsFloat2LabEncodedV2(out, &lab);
    return 1;
}

uint8_t *sw_test_swapped_cmyk_profile(size_t *size) {
    *size = 0;
    cmsHPROFILE srgb = cmsCreate_sRGBProfile();
    cmsHPROFILE lab = cmsCreateLab4Profile(NULL);
    cmsHTRANSFORM to_lab = cmsCreateTransform(srgb, TYPE_RGB_DBL, lab, TYPE_Lab_DBL, INTENT_RELATIVE_COLORIMETRIC, 0);
    cmsCloseProfile(srgb);
    cmsCloseProfile(lab);
    if (to_lab == NULL) return NULL;
    cmsHPROFILE profile = cmsCreateProfilePlaceholder(NULL);
    cmsSetProfileVersion(profile, 2.1);
    cmsSetDeviceClass(profile, cmsSigOutputClass);
    cmsSetColorSpace(profile, cmsSigCmykData);
    cmsSetPCS(profile, cmsSigLabData);
    cmsPipeline *pipeline = cmsPipelineAlloc(NULL, 4, 3);
    cmsStage *clut = cmsStageAllocCLut16bit(NULL, 5, 4, 3, NULL);
    int ok = pipeline != NULL && clut != NULL && cmsStageSampleCLut16bit(clut, sw_test_sampler, to_lab, 0)
             && cmsPipelineInsertStage(pipeline, cmsAT_END, clut);
    if (!ok && clut != NULL) cmsStageFree(clut);
    cmsMLU *description = cmsMLUalloc(NULL, 1);
    cmsMLUsetASCII(description, "en", "US", "Swapped-ink CMYK, made by the Shiftwork tests");
    ok = ok && cmsWriteTag(profile, cmsSigProfileDescriptionTag, description)
         && cmsWriteTag(profile, cmsSigMediaWhitePointTag, cmsD50_XYZ())
         && cmsWriteTag(profile, cmsSigAToB0Tag, pipeline);
    cmsMLUfree(description);
    if (pipeline != NULL) cmsPipelineFree(pipeline);
    cmsDeleteTransform(to_lab);
    cmsUInt32Number bytes = 0;
    uint8_t *result = NULL;
    if (ok && cmsSaveProfileToMem(profile, NULL, &bytes) && bytes > 0 && (result = malloc(bytes)) != NULL) {
        if (cmsSaveProfileToMem(profile, result, &bytes)) {
            *size = bytes;
        } else {
            free(result);
            result = NULL;
        }
    }
    cmsCloseProfile(profile);
    return result;
}

uint8_t *sw_test_cmyk_jpeg(const uint8_t *cmyk, int width, int height, const uint8_t *icc, size_t icc_size,
                           size_t *size) {
    struct jpeg_compress_struct cinfo;
    struct jpeg_error_mgr error;
    cinfo.err = jpeg_std_error(&error); /* test input only: libjpeg's default handler exits on error */
    jpeg_create_compress(&cinfo);
    unsigned char *buffer = NULL;
    unsigned long length = 0;
    jpeg_mem_dest(&cinfo, &buffer, &length);
    cinfo.image_width = (JDIMENSION)width;
    cinfo.image_height = (JDIMENSION)height;
    cinfo.input_components = 4;
    cinfo.in_color_space = JCS_CMYK;
    jpeg_set_defaults(&cinfo);
    jpeg_set_colorspace(&cinfo, JCS_CMYK);
    jpeg_set_quality(&cinfo, 98, TRUE);
    jpeg_start_compress(&cinfo, TRUE);
    if (icc != NULL && icc_size > 0) jpeg_write_icc_profile(&cinfo, icc, (unsigned int)icc_size);
    while (cinfo.next_scanline < cinfo.image_height) {
        JSAMPROW row = (JSAMPROW)(cmyk + (size_t)cinfo.next_scanline * (size_t)width * 4);
        jpeg_write_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_compress(&cinfo);
    jpeg_destroy_compress(&cinfo);
    uint8_t *result = malloc(length);
    if (result != NULL) {
        memcpy(result, buffer, length);
        *size = length;
    }
    free(buffer);
    return result;
}
