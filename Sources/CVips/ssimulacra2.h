/* SSIMULACRA 2's per-pixel steps (Sources/Vips/SSIMULACRA2*.swift), over float planes in memory:
 * linear RGB with its bands interleaved, as libvips keeps them, then XYB and the original's
 * terms row by row, plane after plane, as the blur takes them. Each is one pass of plain C over
 * every value: as libvips operations the same steps are dozens of passes, each with its own
 * buffers, threads and setup, which is most of a score's time at every scale and all of it at
 * the small ones. The constants come from the Swift side, which documents them. */
#ifndef PIPELINE_CVIPS_SSIMULACRA2_H
#define PIPELINE_CVIPS_SSIMULACRA2_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <vips/vips.h>

#include "shim.h"

/* The same floats whatever the compiler may fuse: an image against itself scores exactly 100. */
#pragma STDC FP_CONTRACT OFF

/* A new float image in memory of width × height × bands, its values not yet set. */
static inline VipsImage *pl_new_float_image(int width, int height, int bands) {
    VipsImage *out = vips_image_new_memory();
    vips_image_init_fields(out, width, height, bands, VIPS_FORMAT_FLOAT, VIPS_CODING_NONE, VIPS_INTERPRETATION_MULTIBAND, 1, 1);
    if (vips_image_write_prepare(out)) {
        g_object_unref(out);
        return NULL;
    }
    /* Huge pages where the kernel gives them on request, for planes of a huge page or more
     * (mapped for themselves, above the allocator's mmap threshold): a score's planes are new
     * and short-lived, and their first touch would otherwise fault once every 4 KB. */
    const size_t size = VIPS_IMAGE_SIZEOF_IMAGE(out), page = 4096;
    if (size >= (2 << 20)) {
        const uintptr_t start = ((uintptr_t) out->data + page - 1) & ~(uintptr_t) (page - 1);
        const uintptr_t end = ((uintptr_t) out->data + size) & ~(uintptr_t) (page - 1);
        madvise((void *) start, end - start, MADV_HUGEPAGE);
    }
    return out;
}

/* The first value of a float image whose pixels are in memory, or NULL for any other image. */
static inline float *pl_float_values(VipsImage *image) {
    if (image->BandFmt != VIPS_FORMAT_FLOAT || !pl_image_is_in_memory(image)) return NULL;
    return (float *) VIPS_IMAGE_ADDR(image, 0, 0);
}

/* The first value of an 8-bit image whose pixels are in memory, or NULL for any other image. */
static inline const uint8_t *pl_uchar_values(VipsImage *image) {
    if (image->BandFmt != VIPS_FORMAT_UCHAR || !pl_image_is_in_memory(image)) return NULL;
    return (const uint8_t *) VIPS_IMAGE_ADDR(image, 0, 0);
}

/* 8-bit colour (`bands` 1 or 3 a pixel) through `table` (256 values) into 3 float bands a
 * pixel, grey copied into all three. */
static inline void pl_ssim2_lookup(const uint8_t *restrict in, int bands, const float *restrict table, float *restrict out, size_t pixels) {
    for (size_t p = 0; p < pixels; p++) {
        for (int c = 0; c < 3; c++) out[p * 3 + c] = table[in[p * bands + (bands == 3 ? c : 0)]];
    }
}

/* Planes (3 bands, width × height) halved by 2×2 means into `out` ((width + 1) / 2 ×
 * (height + 1) / 2), the last row or column repeated on an odd side. */
static inline void pl_ssim2_halve(const float *restrict in, float *restrict out, int width, int height) {
    const int half_width = (width + 1) / 2, half_height = (height + 1) / 2;
    for (int y = 0; y < half_height; y++) {
        const float *top = in + (size_t) (2 * y) * width * 3;
        const float *bottom = in + (size_t) VIPS_MIN(2 * y + 1, height - 1) * width * 3;
        float *to = out + (size_t) y * half_width * 3;
        for (int x = 0; x < half_width; x++) {
            const int left = 2 * x * 3, right = VIPS_MIN(2 * x + 1, width - 1) * 3;
            for (int c = 0; c < 3; c++) {
                to[x * 3 + c] = 0.25f * ((top[left + c] + top[right + c]) + (bottom[left + c] + bottom[right + c]));
            }
        }
    }
}

/* Four floats as one value: the loops below are written with it, so that they run four at a
 * time in any build (Swift's compiler does not turn plain C loops into vector code). */
typedef float pl_ssim2_four __attribute__((vector_size(16)));
/* The same, at any float's address: for loads and stores within rows. */
typedef float pl_ssim2_four_anywhere __attribute__((vector_size(16), aligned(4)));
/* The bits of four floats, for the steps that work on them (a cast between the two keeps the
 * bits). */
typedef uint32_t pl_ssim2_bits __attribute__((vector_size(16)));

/* The small steps on four values are inlined in any build: a debug build would otherwise call
 * a function for every four values. */
#define PL_SSIM2_STEP static inline __attribute__((always_inline))

PL_SSIM2_STEP pl_ssim2_four pl_ssim2_load(const float *at) {
    return *(const pl_ssim2_four_anywhere *) at;
}

PL_SSIM2_STEP void pl_ssim2_store(float *at, pl_ssim2_four four) {
    *(pl_ssim2_four_anywhere *) at = four;
}

/* The first `count` (at most 4) values at `at`, and `fill` in the lanes after them: what the
 * steps below take at a row's end, so that one vector loop does the whole row. */
PL_SSIM2_STEP pl_ssim2_four pl_ssim2_load_some(const float *at, size_t count, float fill) {
    if (count >= 4) return pl_ssim2_load(at);
    pl_ssim2_four four = { fill, fill, fill, fill };
    for (size_t i = 0; i < count; i++) four[i] = at[i];
    return four;
}

/* Writes the first `count` (at most 4) lanes of `four` to `at`. */
PL_SSIM2_STEP void pl_ssim2_store_some(float *at, pl_ssim2_four four, size_t count) {
    if (count >= 4) {
        pl_ssim2_store(at, four);
        return;
    }
    for (size_t i = 0; i < count; i++) at[i] = four[i];
}

/* |x| of each lane: the sign bit cleared. */
PL_SSIM2_STEP pl_ssim2_four pl_ssim2_abs(pl_ssim2_four x) {
    return (pl_ssim2_four) ((pl_ssim2_bits) x & 0x7fffffffu);
}

/* max(x, 0) of each lane. */
PL_SSIM2_STEP pl_ssim2_four pl_ssim2_positive(pl_ssim2_four x) {
    return (pl_ssim2_four) ((pl_ssim2_bits) x & (pl_ssim2_bits) (x > 0));
}

/* The sum of the four lanes, each taken as a double. */
PL_SSIM2_STEP double pl_ssim2_total(pl_ssim2_four four) {
    return ((double) four[0] + (double) four[1]) + ((double) four[2] + (double) four[3]);
}

/* The cube root of each lane of `x` (> 0) to within 3 units in the last place: a first guess
 * from the bits of `x` (a third of its exponent), then two steps of Halley's method, each of
 * which triples the correct digits. glibc's `cbrtf` takes the float apart and together again,
 * three calls for each of three values a pixel. */
PL_SSIM2_STEP pl_ssim2_four pl_ssim2_cbrt(pl_ssim2_four x) {
    pl_ssim2_four y = (pl_ssim2_four) ((pl_ssim2_bits) x / 3 + 0x2a514067u);
    for (int step = 0; step < 2; step++) {
        const pl_ssim2_four cube = y * y * y;
        y = y * (cube + 2.0f * x) / (2.0f * cube + x);
    }
    return y;
}

/* Linear RGB (3 bands interleaved, width × height) turned into XYB in place, each row then
 * plane after plane (X, Y and B, `width` values each), as the blur takes them: the opsin mix
 * (`opsin`, 3 × 3 by rows) plus `bias`, its cube root, then X = 7(L − M) + 0.42,
 * Y = (L + M)/2 + `y_offset`, B = S − (L + M)/2 + 0.55. Returns 0, or -1 when memory ran out. */
static inline int pl_ssim2_xyb(float *planes, int width, int height, const double *opsin, double bias, double y_offset) {
    const size_t w = (size_t) width;
    float *rgb = malloc(w * 3 * sizeof(float));
    if (!rgb) return -1;
    const float m00 = (float) opsin[0], m01 = (float) opsin[1], m02 = (float) opsin[2];
    const float m10 = (float) opsin[3], m11 = (float) opsin[4], m12 = (float) opsin[5];
    const float m20 = (float) opsin[6], m21 = (float) opsin[7], m22 = (float) opsin[8];
    const float b = (float) bias, y0 = (float) y_offset;
    for (int y = 0; y < height; y++) {
        float *row = planes + (size_t) y * w * 3;
        memcpy(rgb, row, w * 3 * sizeof(float));
        for (size_t x = 0; x < w; x += 4) {
            const size_t count = w - x < 4 ? w - x : 4;
            const float *p = rgb + x * 3;
            pl_ssim2_four r = { 0 }, g = { 0 }, bl = { 0 };
            if (count == 4) {
                r = (pl_ssim2_four) { p[0], p[3], p[6], p[9] };
                g = (pl_ssim2_four) { p[1], p[4], p[7], p[10] };
                bl = (pl_ssim2_four) { p[2], p[5], p[8], p[11] };
            } else {
                for (size_t i = 0; i < count; i++) {
                    r[i] = p[i * 3];
                    g[i] = p[i * 3 + 1];
                    bl[i] = p[i * 3 + 2];
                }
            }
            const pl_ssim2_four l = pl_ssim2_cbrt(m00 * r + m01 * g + m02 * bl + b);
            const pl_ssim2_four m = pl_ssim2_cbrt(m10 * r + m11 * g + m12 * bl + b);
            const pl_ssim2_four s = pl_ssim2_cbrt(m20 * r + m21 * g + m22 * bl + b);
            const pl_ssim2_four mean = 0.5f * (l + m);
            pl_ssim2_store_some(row + x, 7.0f * (l - m) + 0.42f, count);
            pl_ssim2_store_some(row + w + x, mean + y0, count);
            pl_ssim2_store_some(row + 2 * w + x, s - mean + 0.55f, count);
        }
    }
    free(rgb);
    return 0;
}

/* `to[i]` = `a[i]` × `b[i]`, for `count` values. */
static inline void pl_ssim2_multiply(float *restrict to, const float *a, const float *b, size_t count) {
    size_t i = 0;
    for (; i + 4 <= count; i += 4) {
        pl_ssim2_store(to + i, pl_ssim2_load(a + i) * pl_ssim2_load(b + i));
    }
    for (; i < count; i++) to[i] = a[i] * b[i];
}

/* A window of 9 rows for blurring planes by the symmetric 9-tap kernel along rows, then
 * columns, with zeros beyond the edges, a row at a time: rows go in from the top, each blurred
 * along itself into a ring of the last 9, and row y comes out blurred once rows y + 4 are in.
 * The planes never exist whole, so the blur reads and writes what the cache holds. A row is
 * kept plane after plane (`width` values each), so that the blur's taps are neighbouring values,
 * taken four at a time (`pl_ssim2_four`). */
typedef struct {
    int width, height, planes;
    float k0, k1, k2, k3, k4;
    /* One row as it goes in: each plane with 4 zeros either side. */
    float *padded;
    /* Rows blurred along themselves; row r in slot r % 9. */
    float *ring;
    /* A row of zeros, for the rows beyond the top and bottom edges. */
    float *zeros;
    /* The row that comes out. */
    float *out;
} pl_ssim2_window;

static inline void pl_ssim2_window_close(pl_ssim2_window *window) {
    free(window->padded);
    free(window->ring);
    free(window->zeros);
    free(window->out);
}

/* Returns 0, or -1 when memory ran out. `kernel` holds the 9 taps, centre at 4. */
static inline int pl_ssim2_window_open(pl_ssim2_window *window, int width, int height, int planes, const float *kernel) {
    const size_t line = (size_t) width * planes;
    *window = (pl_ssim2_window) {
        .width = width, .height = height, .planes = planes,
        .k0 = kernel[4], .k1 = kernel[5], .k2 = kernel[6], .k3 = kernel[7], .k4 = kernel[8],
        .padded = calloc((size_t) (width + 8) * planes, sizeof(float)), .ring = malloc(9 * line * sizeof(float)),
        .zeros = calloc(line, sizeof(float)), .out = malloc(line * sizeof(float)),
    };
    if (window->padded && window->ring && window->zeros && window->out) return 0;
    pl_ssim2_window_close(window);
    return -1;
}

/* Where the caller writes plane `plane` of the next row (`width` values). */
static inline float *pl_ssim2_window_input(pl_ssim2_window *window, int plane) {
    return window->padded + (size_t) plane * (window->width + 8) + 4;
}

/* `to[i]` = the kernel (`k`, centre first) over `rows[0…8][i]` (centre at 4), for `count` values. */
static inline void pl_ssim2_taps(float *restrict to, const float *const rows[9], size_t count, const float k[5]) {
    const float *r0 = rows[0], *r1 = rows[1], *r2 = rows[2], *r3 = rows[3], *r4 = rows[4];
    const float *r5 = rows[5], *r6 = rows[6], *r7 = rows[7], *r8 = rows[8];
    const pl_ssim2_four k0 = { k[0], k[0], k[0], k[0] }, k1 = { k[1], k[1], k[1], k[1] }, k2 = { k[2], k[2], k[2], k[2] };
    const pl_ssim2_four k3 = { k[3], k[3], k[3], k[3] }, k4 = { k[4], k[4], k[4], k[4] };
    size_t i = 0;
    for (; i + 4 <= count; i += 4) {
        pl_ssim2_store(to + i, k0 * pl_ssim2_load(r4 + i) + k1 * (pl_ssim2_load(r3 + i) + pl_ssim2_load(r5 + i)) +
                                   k2 * (pl_ssim2_load(r2 + i) + pl_ssim2_load(r6 + i)) + k3 * (pl_ssim2_load(r1 + i) + pl_ssim2_load(r7 + i)) +
                                   k4 * (pl_ssim2_load(r0 + i) + pl_ssim2_load(r8 + i)));
    }
    for (; i < count; i++) {
        to[i] = k[0] * r4[i] + k[1] * (r3[i] + r5[i]) + k[2] * (r2[i] + r6[i]) + k[3] * (r1[i] + r7[i]) + k[4] * (r0[i] + r8[i]);
    }
}

/* Blurs the row just written along itself, as row `row` of the planes. */
static inline void pl_ssim2_window_push(pl_ssim2_window *window, int row) {
    const size_t width = (size_t) window->width;
    const float k[5] = { window->k0, window->k1, window->k2, window->k3, window->k4 };
    float *to = window->ring + (size_t) (row % 9) * width * window->planes;
    for (int plane = 0; plane < window->planes; plane++) {
        const float *centre = pl_ssim2_window_input(window, plane);
        const float *const neighbours[9] = { centre - 4, centre - 3, centre - 2, centre - 1, centre, centre + 1, centre + 2, centre + 3, centre + 4 };
        pl_ssim2_taps(to + plane * width, neighbours, width, k);
    }
}

/* Row `y` blurred both ways, plane after plane; rows up to y + 4 (or the last) must be in.
 * Rows beyond the edges are zeros, which is what the kernel sees there. */
static inline const float *pl_ssim2_window_row(pl_ssim2_window *window, int y) {
    const size_t line = (size_t) window->width * window->planes;
    const float *rows[9];
    for (int j = -4; j <= 4; j++) {
        const int at = y + j;
        rows[j + 4] = at < 0 || at >= window->height ? window->zeros : window->ring + (size_t) (at % 9) * line;
    }
    const float k[5] = { window->k0, window->k1, window->k2, window->k3, window->k4 };
    pl_ssim2_taps(window->out, rows, line, k);
    return window->out;
}

/* 1 + |x − μ| of four values and their blurred means: the edge term, worked out by the same
 * steps for the original and the candidate, so that an image scored against itself gives
 * exactly 100. */
PL_SSIM2_STEP pl_ssim2_four pl_ssim2_edge(pl_ssim2_four x, pl_ssim2_four mean) {
    return 1.0f + pl_ssim2_abs(x - mean);
}

/* The original's XYB at one scale (`x1`, each row plane after plane, as `pl_ssim2_xyb` leaves
 * it) to what every score reads besides it, a row at a time, 6 planes a row (`width` values
 * each): μ₁ (the blurred means, X, Y, B) and σ₁² (the blurred squares less the squared means).
 * Returns 0, or -1 when memory ran out. */
static inline int pl_ssim2_original_terms(const float *restrict x1, float *restrict terms, int width, int height, const float *kernel) {
    pl_ssim2_window window;
    if (pl_ssim2_window_open(&window, width, height, 6, kernel)) return -1;
    const size_t w = (size_t) width;
    int next = 0;
    for (int y = 0; y < height; y++) {
        for (; next < height && next <= y + 4; next++) {
            const float *row = x1 + (size_t) next * w * 3;
            for (int c = 0; c < 3; c++) {
                const float *values = row + c * w;
                memcpy(pl_ssim2_window_input(&window, c), values, w * sizeof(float));
                pl_ssim2_multiply(pl_ssim2_window_input(&window, 3 + c), values, values, w);
            }
            pl_ssim2_window_push(&window, next);
        }
        const float *blurred = pl_ssim2_window_row(&window, y);
        float *out = terms + (size_t) y * w * 6;
        for (int c = 0; c < 3; c++) {
            const float *mean = blurred + c * w, *square = blurred + (3 + c) * w;
            float *mu = out + c * w, *sigma = out + (3 + c) * w;
            memcpy(mu, mean, w * sizeof(float));
            for (size_t x = 0; x < w; x += 4) {
                const size_t count = w - x < 4 ? w - x : 4;
                const pl_ssim2_four m = pl_ssim2_load_some(mean + x, count, 0);
                pl_ssim2_store_some(sigma + x, pl_ssim2_load_some(square + x, count, 0) - m * m, count);
            }
        }
    }
    pl_ssim2_window_close(&window);
    return 0;
}

/* The sums the norms of one scale are made of, `sums[(map × 3 + plane) × 2 + power]`: for the
 * SSIM map (without the luminance denominator), the artifacts and the lost detail (map 0, 1,
 * 2), each plane (X, Y, B), the sum of the map's positive part (power 0) and of its fourth
 * power (1). `x1` and `x2` are the original's and the candidate's XYB (each row plane after
 * plane), `terms` the original's means and variances (`pl_ssim2_original_terms`). The
 * candidate's mean, squares and products with the original are blurred a row at a time. Each
 * row's sums are taken in floats, four lanes at a time, then added up in doubles: their
 * rounding is far below what a score shows. Returns 0, or -1 when memory ran out. */
static inline int pl_ssim2_sums(const float *restrict x1, const float *restrict x2, const float *restrict terms, int width, int height,
                                const float *kernel, double c2, double sums[18]) {
    pl_ssim2_window window;
    if (pl_ssim2_window_open(&window, width, height, 9, kernel)) return -1;
    const size_t w = (size_t) width;
    const float c = (float) c2;
    for (int i = 0; i < 18; i++) sums[i] = 0;
    int next = 0;
    for (int y = 0; y < height; y++) {
        for (; next < height && next <= y + 4; next++) {
            const float *original = x1 + (size_t) next * w * 3, *distorted = x2 + (size_t) next * w * 3;
            for (int p = 0; p < 3; p++) {
                const float *values = distorted + p * w;
                memcpy(pl_ssim2_window_input(&window, p), values, w * sizeof(float));
                pl_ssim2_multiply(pl_ssim2_window_input(&window, 3 + p), values, values, w);
                pl_ssim2_multiply(pl_ssim2_window_input(&window, 6 + p), original + p * w, values, w);
            }
            pl_ssim2_window_push(&window, next);
        }
        const float *blurred = pl_ssim2_window_row(&window, y);
        const float *own = terms + (size_t) y * w * 6, *original = x1 + (size_t) y * w * 3, *distorted = x2 + (size_t) y * w * 3;
        for (int p = 0; p < 3; p++) {
            const float *source = original + p * w, *candidate = distorted + p * w;
            const float *mu1 = own + p * w, *sigma11 = own + (3 + p) * w;
            const float *mu2 = blurred + p * w, *sigma22 = blurred + (3 + p) * w, *sigma12 = blurred + (6 + p) * w;
            pl_ssim2_four ssim1 = { 0 }, ssim4 = { 0 }, gained1 = { 0 }, gained4 = { 0 }, lost1 = { 0 }, lost4 = { 0 };
            for (size_t x = 0; x < w; x += 4) {
                /* Lanes past the row's end hold values whose maps are 0. */
                const size_t count = w - x < 4 ? w - x : 4;
                const pl_ssim2_four m1 = pl_ssim2_load_some(mu1 + x, count, 0), m2 = pl_ssim2_load_some(mu2 + x, count, 0);
                const pl_ssim2_four difference = m1 - m2;
                const pl_ssim2_four mean_term = 1.0f - difference * difference;
                const pl_ssim2_four structure = 2.0f * (pl_ssim2_load_some(sigma12 + x, count, 0) - m1 * m2) + c;
                const pl_ssim2_four spread = pl_ssim2_load_some(sigma11 + x, count, 0) + (pl_ssim2_load_some(sigma22 + x, count, 0) - m2 * m2) + c;
                const pl_ssim2_four ssim = 1.0f - mean_term * structure / spread;
                const pl_ssim2_four edge = pl_ssim2_edge(pl_ssim2_load_some(candidate + x, count, 0), m2) /
                                               pl_ssim2_edge(pl_ssim2_load_some(source + x, count, 0), m1) - 1.0f;
                const pl_ssim2_four positive = pl_ssim2_positive(ssim), gained = pl_ssim2_positive(edge), lost = pl_ssim2_positive(-edge);
                ssim1 += positive;
                ssim4 += (positive * positive) * (positive * positive);
                gained1 += gained;
                gained4 += (gained * gained) * (gained * gained);
                lost1 += lost;
                lost4 += (lost * lost) * (lost * lost);
            }
            sums[p * 2] += pl_ssim2_total(ssim1);
            sums[p * 2 + 1] += pl_ssim2_total(ssim4);
            sums[(3 + p) * 2] += pl_ssim2_total(gained1);
            sums[(3 + p) * 2 + 1] += pl_ssim2_total(gained4);
            sums[(6 + p) * 2] += pl_ssim2_total(lost1);
            sums[(6 + p) * 2 + 1] += pl_ssim2_total(lost4);
        }
    }
    pl_ssim2_window_close(&window);
    return 0;
}

#endif
