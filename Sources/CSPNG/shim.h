#ifndef PIPELINE_CSPNG_SHIM_H
#define PIPELINE_CSPNG_SHIM_H

/* libspng's progressive decoder, row by row from the file (or bytes in memory), for the reader
 * that decodes a large PNG's rows ahead of the resize. */

#include <spng.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A PNG being decoded row by row; it can start again from the top (rows decode only in order). */
typedef struct {
    spng_ctx *ctx;
    FILE *file;
    char *path;
    const void *base;
    size_t size;
    int next_row;
} PlPNGRows;

/* (Re)starts decoding at the first row. Critical chunks with a bad CRC fail, as libpng fails on
 * them; ancillary ones are dropped, as libpng drops them. Returns 0 or a libspng error. */
static inline int pl_png_rows_start(PlPNGRows *rows) {
    if (rows->ctx) spng_ctx_free(rows->ctx);
    if (rows->file) fclose(rows->file);
    rows->ctx = NULL;
    rows->file = NULL;
    rows->next_row = 0;
    if (!(rows->ctx = spng_ctx_new(0))) return SPNG_EMEM;
    int error;
    if (rows->path) {
        if (!(rows->file = fopen(rows->path, "rbe"))) return SPNG_EIO;
        error = spng_set_png_file(rows->ctx, rows->file);
    } else {
        error = spng_set_png_buffer(rows->ctx, rows->base, rows->size);
    }
    if (!error) error = spng_set_crc_action(rows->ctx, SPNG_CRC_ERROR, SPNG_CRC_DISCARD);
    if (!error) error = spng_decode_image(rows->ctx, NULL, 0, SPNG_FMT_PNG, SPNG_DECODE_PROGRESSIVE);
    return error;
}

static inline void pl_png_rows_close(PlPNGRows *rows) {
    if (!rows) return;
    if (rows->ctx) spng_ctx_free(rows->ctx);
    if (rows->file) fclose(rows->file);
    free(rows->path);
    free(rows);
}

/* The file at `path`, or (path NULL) `size` bytes at `base` that outlive the handle; NULL when
 * it cannot be opened or its header does not decode. */
static inline PlPNGRows *pl_png_rows_open(const char *path, const void *base, size_t size) {
    PlPNGRows *rows = calloc(1, sizeof(PlPNGRows));
    if (!rows) return NULL;
    if (path && !(rows->path = strdup(path))) { free(rows); return NULL; }
    rows->base = base;
    rows->size = size;
    if (pl_png_rows_start(rows)) { pl_png_rows_close(rows); return NULL; }
    return rows;
}

/* Decodes rows first..<end, row_bytes each, into out; a handle already past `first` starts
 * again from the top, and rows before `first` are decoded into out's first row and dropped.
 * Returns 0, or a libspng error with *failed_row set to the row that did not decode. */
static inline int pl_png_rows_decode(PlPNGRows *rows, int first, int end, uint8_t *out, size_t row_bytes, int *failed_row) {
    int error = 0;
    if (rows->next_row > first || !rows->ctx) error = pl_png_rows_start(rows);
    while (!error && rows->next_row < end) {
        uint8_t *into = rows->next_row < first ? out : out + (size_t)(rows->next_row - first) * row_bytes;
        error = spng_decode_row(rows->ctx, into, row_bytes);
        if (error == 0 || error == SPNG_EOI) {
            /* SPNG_EOI: that was the last row. */
            rows->next_row++;
            if (error == SPNG_EOI && rows->next_row < end) error = SPNG_EOF;
            else error = 0;
        }
    }
    if (error) *failed_row = rows->next_row;
    return error;
}

#endif
