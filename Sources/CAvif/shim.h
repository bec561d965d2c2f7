#ifndef PIPELINE_CAVIF_SHIM_H
#define PIPELINE_CAVIF_SHIM_H

/* libavif's encoder, for AVIF outputs (see Sources/Vips/VipsImage+AVIF.swift). libvips 8.14
 * writes AVIF through libheif, which reaches only aom; libavif reaches aom, rav1e and
 * SVT-AV1 and their threads and tiles. Debian: libavif-dev. */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <avif/avif.h>

/* How one image is encoded. */
typedef struct {
    avifCodecChoice codec;
    /* The codec's speed, 0 (slowest) – 10; libavif clamps it to what the codec takes. */
    int speed;
    /* AV1's quantizer, 0 (best) – 63, for colour and alpha alike. With aom it is the constant
     * quality level (cq-level) between the widest bounds, as libheif sets it; the other codecs
     * take it as their one quantizer. */
    int quantizer;
    /* Mathematically lossless: RGB kept as it is (identity matrix, 4:4:4), quantizer 0. */
    int lossless;
    /* Colour at full resolution (4:4:4) rather than halved both ways (4:2:0). */
    int full_chroma;
    /* The encoder's threads: they work on tiles, never on rows (see pl_avif_encoder_make). */
    int threads;
    int tile_rows_log2;
    int tile_cols_log2;
    /* The codec's own options as "key=value" pairs separated by commas, or NULL. */
    const char *codec_options;
    /* YUV in limited ("video") range rather than full; not for lossless. Chromium shows an
     * image sequence of full range as if it were limited, with its contrast stretched. */
    int limited_range;
} PlAVIFSettings;

/* Passes each "key=value" of `options` (comma-separated) to the codec. */
static inline void pl_avif_set_codec_options(avifEncoder *encoder, const char *options) {
    char pair[128];
    while (options && *options) {
        size_t length = strcspn(options, ",");
        if (length > 0 && length < sizeof pair) {
            memcpy(pair, options, length);
            pair[length] = 0;
            char *equals = strchr(pair, '=');
            if (equals) {
                *equals = 0;
                avifEncoderSetCodecSpecificOption(encoder, pair, equals + 1);
            }
        }
        options += length + (options[length] == ',');
    }
}

/* Copies libavif's diagnostic, or the result's own text when it has none, into `message`. */
static inline void pl_avif_message(avifResult result, const avifDiagnostics *diag, char *message, size_t message_size) {
    if (!message || message_size == 0) return;
    const char *detail = diag && diag->error[0] ? diag->error : "";
    snprintf(message, message_size, "%s%s%s", avifResultToString(result), detail[0] ? ": " : "", detail);
}

/* An AV1 image of `width` × `height` 8-bit sRGB pixels, `bands` (3: RGB, 4: RGBA, straight alpha)
 * a pixel, rows `row_bytes` apart, in the YUV `settings` ask for, carrying the ICC profile, EXIF
 * and XMP when given (size above 0); NULL with libavif's text in `message` when it cannot be made.
 * `profiled`: its colours are described by a profile (this image's, or, for a later frame of a
 * sequence, the first frame's), not by the colour box. The caller destroys it with
 * avifImageDestroy. */
static inline avifImage *pl_avif_image_make(const uint8_t *pixels, uint32_t width, uint32_t height, uint32_t bands,
                                            uint32_t row_bytes, const PlAVIFSettings *settings, int profiled,
                                            const uint8_t *icc, size_t icc_size, const uint8_t *exif, size_t exif_size,
                                            const uint8_t *xmp, size_t xmp_size, avifResult *failure, char *message,
                                            size_t message_size) {
    if (bands != 3 && bands != 4) {
        pl_avif_message(AVIF_RESULT_INVALID_ARGUMENT, NULL, message, message_size);
        *failure = AVIF_RESULT_INVALID_ARGUMENT;
        return NULL;
    }
    avifPixelFormat format = settings->lossless || settings->full_chroma ? AVIF_PIXEL_FORMAT_YUV444 : AVIF_PIXEL_FORMAT_YUV420;
    avifImage *image = avifImageCreate(width, height, 8, format);
    if (!image) {
        pl_avif_message(AVIF_RESULT_OUT_OF_MEMORY, NULL, message, message_size);
        *failure = AVIF_RESULT_OUT_OF_MEMORY;
        return NULL;
    }
    image->yuvRange = settings->limited_range && !settings->lossless ? AVIF_RANGE_LIMITED : AVIF_RANGE_FULL;
    /* With a profile, the profile says what the colours are: the CICP colour description is
     * left unspecified rather than claiming sRGB for P3 or CMYK-converted pixels. Every frame of
     * a sequence is described alike, as libavif requires, though only the first carries it. */
    image->colorPrimaries = profiled ? AVIF_COLOR_PRIMARIES_UNSPECIFIED : AVIF_COLOR_PRIMARIES_BT709;
    image->transferCharacteristics = profiled ? AVIF_TRANSFER_CHARACTERISTICS_UNSPECIFIED : AVIF_TRANSFER_CHARACTERISTICS_SRGB;
    image->matrixCoefficients = settings->lossless ? AVIF_MATRIX_COEFFICIENTS_IDENTITY : AVIF_MATRIX_COEFFICIENTS_BT601;

    avifRGBImage rgb;
    avifRGBImageSetDefaults(&rgb, image);
    rgb.depth = 8;
    rgb.format = bands == 4 ? AVIF_RGB_FORMAT_RGBA : AVIF_RGB_FORMAT_RGB;
    rgb.pixels = (uint8_t *) pixels;
    rgb.rowBytes = row_bytes;
    avifResult result = avifImageRGBToYUV(image, &rgb);
    if (result != AVIF_RESULT_OK) {
        pl_avif_message(result, NULL, message, message_size);
        avifImageDestroy(image);
        *failure = result;
        return NULL;
    }
    if (icc_size) avifImageSetProfileICC(image, icc, icc_size);
    if (exif_size) {
        avifImageSetMetadataExif(image, exif, exif_size);
        /* libavif turns the EXIF orientation into a rotation for viewers to apply; libheif
         * does not, and the pixels are already upright: the orientation stays in the EXIF only. */
        image->transformFlags &= ~(avifTransformFlags) (AVIF_TRANSFORM_IROT | AVIF_TRANSFORM_IMIR);
    }
    if (xmp_size) avifImageSetMetadataXMP(image, xmp, xmp_size);
    return image;
}

/* An encoder set up as `settings` say, or NULL when libavif has no memory for one. The caller
 * destroys it with avifEncoderDestroy. */
static inline avifEncoder *pl_avif_encoder_make(const PlAVIFSettings *settings) {
    avifEncoder *encoder = avifEncoderCreate();
    if (!encoder) return NULL;
    encoder->codecChoice = settings->codec;
    encoder->speed = settings->speed;
    encoder->maxThreads = settings->threads > 1 ? settings->threads : 1;
    encoder->tileRowsLog2 = settings->tile_rows_log2;
    encoder->tileColsLog2 = settings->tile_cols_log2;
    /* aom's row threads (row-mt, which libavif turns on with more than one thread) code another
     * file than one thread does, and the threads follow how busy the process is: off, the bytes
     * depend only on the pixels and the settings, whatever the threads, which then share the
     * tiles. */
    if (settings->codec == AVIF_CODEC_CHOICE_AOM) avifEncoderSetCodecSpecificOption(encoder, "row-mt", "0");
    if (settings->lossless) {
        encoder->minQuantizer = encoder->maxQuantizer = AVIF_QUANTIZER_LOSSLESS;
        encoder->minQuantizerAlpha = encoder->maxQuantizerAlpha = AVIF_QUANTIZER_LOSSLESS;
    } else if (settings->codec == AVIF_CODEC_CHOICE_AOM) {
        encoder->minQuantizer = encoder->minQuantizerAlpha = AVIF_QUANTIZER_BEST_QUALITY;
        encoder->maxQuantizer = encoder->maxQuantizerAlpha = AVIF_QUANTIZER_WORST_QUALITY;
        char level[8];
        snprintf(level, sizeof level, "%d", settings->quantizer);
        avifEncoderSetCodecSpecificOption(encoder, "cq-level", level);
    } else {
        encoder->minQuantizer = encoder->minQuantizerAlpha = settings->quantizer;
        encoder->maxQuantizer = encoder->maxQuantizerAlpha = settings->quantizer;
    }
    pl_avif_set_codec_options(encoder, settings->codec_options);
    return encoder;
}

/* Encodes `width` × `height` 8-bit sRGB pixels, `bands` (3: RGB, 4: RGBA, straight alpha) a
 * pixel, rows `row_bytes` apart, into `output` (freed by the caller with avifRWDataFree once
 * the result is AVIF_RESULT_OK). The ICC profile, EXIF and XMP are written when given (size
 * above 0). Returns libavif's result, with its text in `message` when it is not OK. */
static inline avifResult pl_avif_encode(const uint8_t *pixels, uint32_t width, uint32_t height, uint32_t bands,
                                        uint32_t row_bytes, const PlAVIFSettings *settings, const uint8_t *icc,
                                        size_t icc_size, const uint8_t *exif, size_t exif_size, const uint8_t *xmp,
                                        size_t xmp_size, avifRWData *output, char *message, size_t message_size) {
    if (message && message_size) message[0] = 0;
    avifResult result = AVIF_RESULT_OK;
    avifImage *image = pl_avif_image_make(pixels, width, height, bands, row_bytes, settings, icc_size > 0, icc, icc_size, exif,
                                          exif_size, xmp, xmp_size, &result, message, message_size);
    if (!image) return result;
    avifEncoder *encoder = pl_avif_encoder_make(settings);
    if (!encoder) {
        avifImageDestroy(image);
        pl_avif_message(AVIF_RESULT_OUT_OF_MEMORY, NULL, message, message_size);
        return AVIF_RESULT_OUT_OF_MEMORY;
    }
    result = avifEncoderWrite(encoder, image, output);
    if (result != AVIF_RESULT_OK) {
        pl_avif_message(result, &encoder->diag, message, message_size);
        avifRWDataFree(output);
    }
    avifEncoderDestroy(encoder);
    avifImageDestroy(image);
    return result;
}

/* An encoder for an image sequence (an animated AVIF) whose frame durations are counted in
 * `timescale` units a second, played `loop` times (0: for ever). libavif before 1.0 writes no
 * repetition count, and players loop such a sequence for ever; from 1.0 the count is written.
 * NULL when libavif has no memory for one. Frames are added with pl_avif_sequence_add, the file
 * made with pl_avif_sequence_finish; the caller destroys the encoder with avifEncoderDestroy. */
static inline avifEncoder *pl_avif_sequence_make(const PlAVIFSettings *settings, uint64_t timescale, int loop) {
    avifEncoder *encoder = pl_avif_encoder_make(settings);
    if (!encoder) return NULL;
    encoder->timescale = timescale;
#if AVIF_VERSION >= 1000000
    encoder->repetitionCount = loop > 0 ? loop - 1 : AVIF_REPETITION_COUNT_INFINITE;
#else
    (void) loop;
#endif
    return encoder;
}

/* Encodes one frame (pixels as pl_avif_encode takes them) shown for `duration` timescale
 * units. The file's ICC profile, EXIF and XMP are the first frame's; `profiled` says, for every
 * frame, whether the first has a profile. Returns libavif's result, with its text in `message`
 * when it is not OK. */
static inline avifResult pl_avif_sequence_add(avifEncoder *encoder, const uint8_t *pixels, uint32_t width, uint32_t height,
                                              uint32_t bands, uint32_t row_bytes, const PlAVIFSettings *settings, int profiled,
                                              const uint8_t *icc, size_t icc_size, const uint8_t *exif, size_t exif_size,
                                              const uint8_t *xmp, size_t xmp_size, uint64_t duration, char *message,
                                              size_t message_size) {
    if (message && message_size) message[0] = 0;
    avifResult result = AVIF_RESULT_OK;
    avifImage *image = pl_avif_image_make(pixels, width, height, bands, row_bytes, settings, profiled, icc, icc_size, exif,
                                          exif_size, xmp, xmp_size, &result, message, message_size);
    if (!image) return result;
    result = avifEncoderAddImage(encoder, image, duration, AVIF_ADD_IMAGE_FLAG_NONE);
    if (result != AVIF_RESULT_OK) pl_avif_message(result, &encoder->diag, message, message_size);
    avifImageDestroy(image);
    return result;
}

/* Writes the sequence's file into `output` (freed by the caller with avifRWDataFree once the
 * result is AVIF_RESULT_OK). Returns libavif's result, with its text in `message` when it is
 * not OK. */
static inline avifResult pl_avif_sequence_finish(avifEncoder *encoder, avifRWData *output, char *message, size_t message_size) {
    if (message && message_size) message[0] = 0;
    avifResult result = avifEncoderFinish(encoder, output);
    if (result != AVIF_RESULT_OK) {
        pl_avif_message(result, &encoder->diag, message, message_size);
        avifRWDataFree(output);
    }
    return result;
}

/* The first image of the AVIF file at `path` (a still, or a sequence's first frame) as 8-bit
 * RGBA rows, 4 × width bytes apart, in `*pixels` (freed with avifFree), for what libvips cannot
 * read: libvips 8.14 reads no AVIF sequence. Images of more than `max_pixels` are refused, and
 * metadata is not read. Returns AVIF_RESULT_OK or why not. */
static inline avifResult pl_avif_first_frame(const char *path, uint32_t max_pixels, uint8_t **pixels, uint32_t *width,
                                             uint32_t *height) {
    *pixels = NULL;
    avifDecoder *decoder = avifDecoderCreate();
    if (!decoder) return AVIF_RESULT_OUT_OF_MEMORY;
    decoder->imageSizeLimit = max_pixels;
    decoder->ignoreExif = AVIF_TRUE;
    decoder->ignoreXMP = AVIF_TRUE;
    avifResult result = avifDecoderSetIOFile(decoder, path);
    if (result == AVIF_RESULT_OK) result = avifDecoderParse(decoder);
    if (result == AVIF_RESULT_OK) result = avifDecoderNextImage(decoder);
    if (result == AVIF_RESULT_OK) {
        avifRGBImage rgb;
        avifRGBImageSetDefaults(&rgb, decoder->image);
        rgb.format = AVIF_RGB_FORMAT_RGBA;
        rgb.depth = 8;
        /* A result in libavif 1.0, nothing before: the pixels tell either way. */
        avifRGBImageAllocatePixels(&rgb);
        result = rgb.pixels ? avifImageYUVToRGB(decoder->image, &rgb) : AVIF_RESULT_OUT_OF_MEMORY;
        if (result == AVIF_RESULT_OK) {
            *pixels = rgb.pixels;
            *width = rgb.width;
            *height = rgb.height;
        } else {
            avifRGBImageFreePixels(&rgb);
        }
    }
    avifDecoderDestroy(decoder);
    return result;
}

/* The colour description (CICP: the `colr` box of type `nclx`) of the AVIF at `path` or, when
 * `path` is NULL, in the `size` bytes at `bytes`, from its container alone: its primaries and
 * transfer characteristics, and whether it has an ICC profile (which then says what the colours
 * are). 1 when the container was parsed, 0 when libavif cannot read it. */
static inline int pl_avif_colour_description(const char *path, const uint8_t *bytes, size_t size, int *primaries,
                                             int *transfer, int *has_icc) {
    avifDecoder *decoder = avifDecoderCreate();
    if (!decoder) return 0;
    decoder->ignoreExif = AVIF_TRUE;
    decoder->ignoreXMP = AVIF_TRUE;
    avifResult result = path ? avifDecoderSetIOFile(decoder, path) : avifDecoderSetIOMemory(decoder, bytes, size);
    if (result == AVIF_RESULT_OK) result = avifDecoderParse(decoder);
    if (result == AVIF_RESULT_OK) {
        *primaries = (int) decoder->image->colorPrimaries;
        *transfer = (int) decoder->image->transferCharacteristics;
        *has_icc = decoder->image->icc.size > 0;
    }
    avifDecoderDestroy(decoder);
    return result == AVIF_RESULT_OK;
}

/* An AVIF image sequence opened for reading its frames one at a time (libvips 8.14's HEIF loader
 * reads no sequence), from the file at `path` or, when `path` is NULL, the `size` bytes at
 * `bytes` (which must outlive the decoder). Only the container is parsed: no frame is decoded
 * yet, so the caller can check the size and frame count before any pixels are made. EXIF and
 * XMP are not read. NULL with libavif's text in `message` when it is not a sequence libavif
 * reads; the caller destroys the decoder with avifDecoderDestroy. */
static inline avifDecoder *pl_avif_sequence_open(const char *path, const uint8_t *bytes, size_t size, char *message,
                                                 size_t message_size) {
    if (message && message_size) message[0] = 0;
    avifDecoder *decoder = avifDecoderCreate();
    if (!decoder) {
        pl_avif_message(AVIF_RESULT_OUT_OF_MEMORY, NULL, message, message_size);
        return NULL;
    }
    decoder->ignoreExif = AVIF_TRUE;
    decoder->ignoreXMP = AVIF_TRUE;
    avifResult result = path ? avifDecoderSetIOFile(decoder, path) : avifDecoderSetIOMemory(decoder, bytes, size);
    if (result == AVIF_RESULT_OK) result = avifDecoderParse(decoder);
    if (result != AVIF_RESULT_OK) {
        pl_avif_message(result, &decoder->diag, message, message_size);
        avifDecoderDestroy(decoder);
        return NULL;
    }
    return decoder;
}

/* How many times the opened sequence plays, as libvips' "loop" field counts (0: for ever).
 * libavif before 1.0 reads no repetition count, and players loop such a sequence for ever. */
static inline int pl_avif_sequence_loop(const avifDecoder *decoder) {
#if AVIF_VERSION >= 1000000
    if (decoder->repetitionCount >= 0 && decoder->repetitionCount < 65535) return decoder->repetitionCount + 1;
#else
    (void) decoder;
#endif
    return 0;
}

/* Decodes the sequence's next frame into `pixels`: `bands` (3: RGB, 4: RGBA) 8-bit samples a
 * pixel, rows width × bands bytes apart, `width` × `height` as the container declared (a frame
 * of another size is refused: the caller's buffer and checks were made for that size). Its
 * duration in seconds goes in `*duration`. Returns libavif's result, with its text in `message`
 * when it is not OK. */
static inline avifResult pl_avif_sequence_next(avifDecoder *decoder, uint8_t *pixels, uint32_t width, uint32_t height,
                                               uint32_t bands, double *duration, char *message, size_t message_size) {
    if (message && message_size) message[0] = 0;
    avifResult result = avifDecoderNextImage(decoder);
    if (result != AVIF_RESULT_OK) {
        pl_avif_message(result, &decoder->diag, message, message_size);
        return result;
    }
    if (decoder->image->width != width || decoder->image->height != height || (bands != 3 && bands != 4)) {
        if (message && message_size)
            snprintf(message, message_size, "frame %u is %ux%u, not the %ux%u the sequence declares", decoder->imageIndex + 1,
                     decoder->image->width, decoder->image->height, width, height);
        return AVIF_RESULT_INVALID_ARGUMENT;
    }
    avifRGBImage rgb;
    avifRGBImageSetDefaults(&rgb, decoder->image);
    rgb.format = bands == 4 ? AVIF_RGB_FORMAT_RGBA : AVIF_RGB_FORMAT_RGB;
    rgb.depth = 8;
    rgb.pixels = pixels;
    rgb.rowBytes = width * bands;
    result = avifImageYUVToRGB(decoder->image, &rgb);
    if (result != AVIF_RESULT_OK) pl_avif_message(result, NULL, message, message_size);
    *duration = decoder->imageTiming.duration;
    return result;
}

#endif
