/*
 * libtiff, for reading a stripped TIFF's strips on threads of its own (see
 * Sources/Vips/VipsImage+StripTIFF.swift). libtiff's tag getters take varargs, which Swift
 * cannot call: these shims give them fixed arities. Debian: libtiff-dev (libvips-dev already
 * depends on it).
 */
#ifndef PIPELINE_CTIFF_SHIM_H
#define PIPELINE_CTIFF_SHIM_H

#include <tiffio.h>

/* A 16-bit tag, or its default when the file leaves it out; 0 when it has neither. */
static inline int pl_tiff_u16(TIFF *tiff, uint32_t tag, uint16_t *value) {
    return TIFFGetFieldDefaulted(tiff, tag, value);
}

/* A 32-bit tag, or its default when the file leaves it out; 0 when it has neither. */
static inline int pl_tiff_u32(TIFF *tiff, uint32_t tag, uint32_t *value) {
    return TIFFGetFieldDefaulted(tiff, tag, value);
}

/* The ExtraSamples tag: how many samples besides the colour ones, and what each is. */
static inline int pl_tiff_extra_samples(TIFF *tiff, uint16_t *count, const uint16_t **kinds) {
    uint16_t *values = NULL;
    int found = TIFFGetFieldDefaulted(tiff, TIFFTAG_EXTRASAMPLES, count, &values);
    *kinds = values;
    return found;
}

/* Setters for tests that write TIFFs libvips would not (one row a strip, for example). */
static inline int pl_tiff_set_u16(TIFF *tiff, uint32_t tag, uint16_t value) {
    return TIFFSetField(tiff, tag, value);
}

static inline int pl_tiff_set_u32(TIFF *tiff, uint32_t tag, uint32_t value) {
    return TIFFSetField(tiff, tag, value);
}

static inline int pl_tiff_set_extra_samples(TIFF *tiff, uint16_t count, const uint16_t *kinds) {
    return TIFFSetField(tiff, TIFFTAG_EXTRASAMPLES, count, kinds);
}

#endif
