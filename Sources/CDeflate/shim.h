/*
 * libdeflate: whole-buffer DEFLATE, zlib and CRC-32, two to four times faster than zlib's
 * inflate on the PNG data it was measured on. pipeline reads common PNGs with it (see
 * Sources/Vips/VipsImage+WholePNG.swift). Debian: libdeflate-dev (libtiff-dev, and so
 * libvips-dev, already depends on it).
 */
#ifndef PIPELINE_CDEFLATE_SHIM_H
#define PIPELINE_CDEFLATE_SHIM_H

#include <libdeflate.h>

#endif
