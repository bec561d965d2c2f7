#ifndef PIPELINE_CWEBP_SHIM_H
#define PIPELINE_CWEBP_SHIM_H

/* libwebp's decoder, called straight for still images: libvips' WebP loader decodes through
 * RGBA into a frame it then copies, with libwebp's extra filtering thread (the pipeline keeps
 * the cores busy with images already). */

#include <stddef.h>
#include <stdint.h>
#include <webp/decode.h>
#include <webp/demux.h>

/* Decodes a still WebP into `out` as `bands` bytes a pixel (3: RGB, 4: RGBA), rows packed,
 * width × height, scaling while decoding when that is not the image's own size (libwebp's
 * rescaler, as libvips' loader asks for with its scale). As libvips' loader does, the file is
 * parsed with the demuxer and its frame's bytes decoded, alpha kept as the file's flags say:
 * libwebp then accepts and rejects what it does there. The file must be `canvas_width` ×
 * `canvas_height`, not animated, with `bands` as its flags give. On one thread.
 * Returns a VP8StatusCode: 0 when decoded. */
static inline int pl_webp_decode(const uint8_t *data, size_t size, int canvas_width, int canvas_height,
                                 int width, int height, int bands, uint8_t *out, size_t out_size) {
    WebPData webp = { data, size };
    WebPDemuxer *demux = WebPDemux(&webp);
    if (!demux) return (int) VP8_STATUS_BITSTREAM_ERROR;
    int status = (int) VP8_STATUS_UNSUPPORTED_FEATURE;
    uint32_t flags = WebPDemuxGetI(demux, WEBP_FF_FORMAT_FLAGS);
    WebPIterator frame;
    if (!(flags & ANIMATION_FLAG) && (flags & ALPHA_FLAG ? 4 : 3) == bands
        && (int) WebPDemuxGetI(demux, WEBP_FF_CANVAS_WIDTH) == canvas_width
        && (int) WebPDemuxGetI(demux, WEBP_FF_CANVAS_HEIGHT) == canvas_height
        && WebPDemuxGetFrame(demux, 1, &frame)) {
        WebPDecoderConfig config;
        if (frame.x_offset == 0 && frame.y_offset == 0 && frame.width == canvas_width && frame.height == canvas_height
            && WebPInitDecoderConfig(&config)) {
            if (width != canvas_width || height != canvas_height) {
                config.options.use_scaling = 1;
                config.options.scaled_width = width;
                config.options.scaled_height = height;
            }
            config.options.use_threads = 0;
            config.output.colorspace = bands == 4 ? MODE_RGBA : MODE_RGB;
            config.output.is_external_memory = 1;
            config.output.u.RGBA.rgba = out;
            config.output.u.RGBA.stride = width * bands;
            config.output.u.RGBA.size = out_size;
            status = (int) WebPDecode(frame.fragment.bytes, frame.fragment.size, &config);
            WebPFreeDecBuffer(&config.output);
        }
        WebPDemuxReleaseIterator(&frame);
    }
    WebPDemuxDelete(demux);
    return status;
}

#endif
