/*
 * libtiff, for reading a stripped TIFF's strips on threads of its own (see
 * Sources/Vips/VipsImage+StripTIFF.swift). libtiff's tag getters take varargs, which Swift
 * cannot call: these shims give them fixed arities. Debian: libtiff-dev (libvips-dev already
 * depends on it).
 */
#ifndef PIPELINE_CTIFF_SHIM_H
#define PIPELINE_CTIFF_SHIM_H

#include <stdlib.h>
#include <string.h>
#include <stdio.h>
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

/* A libtiff handle on bytes in memory, which must outlive it. libtiff reads them through the
 * read procedure, not in place ("m"), as libvips' loader reads a file: what libtiff tolerates
 * then (a strip byte count past the end, cut to it) it tolerates here. Each handle has its own
 * position, so each thread may have one. */
typedef struct { const unsigned char *base; toff_t size; toff_t offset; } PlTIFFMemory;

static inline tmsize_t pl_tiff_memory_read(thandle_t handle, void *buffer, tmsize_t count) {
    PlTIFFMemory *memory = (PlTIFFMemory *) handle;
    if (count < 0 || memory->offset >= memory->size) return 0;
    toff_t left = memory->size - memory->offset;
    toff_t taken = (toff_t) count < left ? (toff_t) count : left;
    memcpy(buffer, memory->base + memory->offset, (size_t) taken);
    memory->offset += taken;
    return (tmsize_t) taken;
}

static inline tmsize_t pl_tiff_memory_write(thandle_t handle, void *buffer, tmsize_t count) {
    (void) handle; (void) buffer; (void) count;
    return 0;
}

static inline toff_t pl_tiff_memory_seek(thandle_t handle, toff_t offset, int whence) {
    PlTIFFMemory *memory = (PlTIFFMemory *) handle;
    toff_t from = whence == SEEK_CUR ? memory->offset : whence == SEEK_END ? memory->size : 0;
    /* libtiff passes negative offsets as wrapped unsigned values: keep to the bytes. */
    toff_t target = from + offset;
    memory->offset = target > memory->size ? memory->size : target;
    return memory->offset;
}

static inline int pl_tiff_memory_close(thandle_t handle) {
    free(handle);
    return 0;
}

static inline toff_t pl_tiff_memory_size(thandle_t handle) {
    return ((PlTIFFMemory *) handle)->size;
}

static inline int pl_tiff_memory_map(thandle_t handle, void **base, toff_t *size) {
    PlTIFFMemory *memory = (PlTIFFMemory *) handle;
    *base = (void *) memory->base;
    *size = memory->size;
    return 1;
}

static inline void pl_tiff_memory_unmap(thandle_t handle, void *base, toff_t size) {
    (void) handle; (void) base; (void) size;
}

static inline TIFF *pl_tiff_open_memory(const void *base, size_t size) {
    PlTIFFMemory *memory = malloc(sizeof(PlTIFFMemory));
    if (!memory) return NULL;
    memory->base = base;
    memory->size = size;
    memory->offset = 0;
    TIFF *tiff = TIFFClientOpen("memory", "rm", (thandle_t) memory, pl_tiff_memory_read, pl_tiff_memory_write,
                                pl_tiff_memory_seek, pl_tiff_memory_close, pl_tiff_memory_size,
                                pl_tiff_memory_map, pl_tiff_memory_unmap);
    /* A handle that failed to open was not closed: the caller frees what it was given (as
     * TIFFOpen closes its descriptor). */
    if (!tiff) free(memory);
    return tiff;
}

/* The size of the file or bytes a handle reads (0 if its client cannot say). */
static inline uint64_t pl_tiff_file_size(TIFF *tiff) {
    TIFFSizeProc size = TIFFGetSizeProc(tiff);
    return size ? (uint64_t)size(TIFFClientdata(tiff)) : 0;
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
