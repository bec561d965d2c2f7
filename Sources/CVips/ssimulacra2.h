/* SSIMULACRA 2's per-pixel steps (Sources/Vips/SSIMULACRA2*.swift), over float planes in memory
 * (bands interleaved, as libvips keeps them). Each is one pass of plain C over every value: as
 * libvips operations the same steps are dozens of passes, each with its own buffers, threads and
 * setup, which is most of a score's time at every scale and all of it at the small ones. The
 * constants come from the Swift side, which documents them. */
#ifndef PIPELINE_CVIPS_SSIMULACRA2_H
#define PIPELINE_CVIPS_SSIMULACRA2_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
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

/* The cube root of `x` (> 0) to within 3 units in the last place: a first guess from the
 * bits of `x` (a third of its exponent), then two steps of Halley's method, each of which
 * triples the correct digits. glibc's `cbrtf` takes the float apart and together again, three
 * calls for each of three values a pixel. */
static inline float pl_ssim2_cbrt(float x) {
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    bits = bits / 3 + 0x2a514067u;
    float y;
    memcpy(&y, &bits, sizeof y);
    for (int step = 0; step < 2; step++) {
        const float cube = y * y * y;
        y = y * (cube + 2.0f * x) / (2.0f * cube + x);
    }
    return y;
}

/* Linear RGB (3 bands) to XYB: the opsin mix (`opsin`, 3 × 3 by rows) plus `bias`, its cube
 * root, then X = 7(L − M) + 0.42, Y = (L + M)/2 + `y_offset`, B = S − (L + M)/2 + 0.55. */
static inline void pl_ssim2_xyb(const float *restrict linear, float *restrict xyb, size_t pixels, const double *opsin, double bias,
                                double y_offset) {
    const float m00 = (float) opsin[0], m01 = (float) opsin[1], m02 = (float) opsin[2];
    const float m10 = (float) opsin[3], m11 = (float) opsin[4], m12 = (float) opsin[5];
    const float m20 = (float) opsin[6], m21 = (float) opsin[7], m22 = (float) opsin[8];
    const float b = (float) bias, y0 = (float) y_offset;
    for (size_t p = 0; p < pixels * 3; p += 3) {
        const float r = linear[p], g = linear[p + 1], bl = linear[p + 2];
        const float l = pl_ssim2_cbrt(m00 * r + m01 * g + m02 * bl + b);
        const float m = pl_ssim2_cbrt(m10 * r + m11 * g + m12 * bl + b);
        const float s = pl_ssim2_cbrt(m20 * r + m21 * g + m22 * bl + b);
        const float mean = 0.5f * (l + m);
        xyb[p] = 7.0f * (l - m) + 0.42f;
        xyb[p + 1] = mean + y0;
        xyb[p + 2] = s - mean + 0.55f;
    }
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

/* Four floats as one value: the blur's loops below are written with it, so that they run four
 * at a time in any build (Swift's compiler does not turn plain C loops into vector code). */
typedef float pl_ssim2_four __attribute__((vector_size(16)));

static inline pl_ssim2_four pl_ssim2_load(const float *at) {
    pl_ssim2_four four;
    memcpy(&four, at, sizeof four);
    return four;
}

/* `to[i]` = the kernel (`k`, centre first) over `rows[0…8][i]` (centre at 4), for `count` values. */
static inline void pl_ssim2_taps(float *restrict to, const float *const rows[9], size_t count, const float k[5]) {
    size_t i = 0;
    for (; i + 4 <= count; i += 4) {
        const pl_ssim2_four sum = k[0] * pl_ssim2_load(rows[4] + i) + k[1] * (pl_ssim2_load(rows[3] + i) + pl_ssim2_load(rows[5] + i)) +
                                  k[2] * (pl_ssim2_load(rows[2] + i) + pl_ssim2_load(rows[6] + i)) +
                                  k[3] * (pl_ssim2_load(rows[1] + i) + pl_ssim2_load(rows[7] + i)) +
                                  k[4] * (pl_ssim2_load(rows[0] + i) + pl_ssim2_load(rows[8] + i));
        memcpy(to + i, &sum, sizeof sum);
    }
    for (; i < count; i++) {
        to[i] = k[0] * rows[4][i] + k[1] * (rows[3][i] + rows[5][i]) + k[2] * (rows[2][i] + rows[6][i]) + k[3] * (rows[1][i] + rows[7][i]) +
                k[4] * (rows[0][i] + rows[8][i]);
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

/* The original's XYB at one scale (`x1`, 3 bands interleaved) to what every score reads, a row
 * at a time, 9 planes a row (`width` values each): μ₁ (the blurred means, X, Y, B), σ₁² (the
 * blurred squares less the squared means) and 1 + |x₁ − μ₁|, worked out as the scores' side
 * is, so that an image scored against itself gives exactly 100. Returns 0, or -1 when memory
 * ran out. */
static inline int pl_ssim2_original_terms(const float *restrict x1, float *restrict terms, int width, int height, const float *kernel) {
    pl_ssim2_window window;
    if (pl_ssim2_window_open(&window, width, height, 6, kernel)) return -1;
    const size_t w = (size_t) width;
    int next = 0;
    for (int y = 0; y < height; y++) {
        for (; next < height && next <= y + 4; next++) {
            const float *row = x1 + (size_t) next * w * 3;
            for (int c = 0; c < 3; c++) {
                float *values = pl_ssim2_window_input(&window, c), *squares = pl_ssim2_window_input(&window, 3 + c);
                for (size_t x = 0; x < w; x++) {
                    const float a = row[x * 3 + c];
                    values[x] = a;
                    squares[x] = a * a;
                }
            }
            pl_ssim2_window_push(&window, next);
        }
        const float *blurred = pl_ssim2_window_row(&window, y);
        const float *row = x1 + (size_t) y * w * 3;
        float *out = terms + (size_t) y * w * 9;
        for (int c = 0; c < 3; c++) {
            const float *mean = blurred + c * w, *square = blurred + (3 + c) * w;
            float *mu = out + c * w, *sigma = out + (3 + c) * w, *edge = out + (6 + c) * w;
            for (size_t x = 0; x < w; x++) {
                mu[x] = mean[x];
                sigma[x] = square[x] - mean[x] * mean[x];
                edge[x] = 1.0f + fabsf(row[x * 3 + c] - mean[x]);
            }
        }
    }
    pl_ssim2_window_close(&window);
    return 0;
}

/* The sums the norms of one scale are made of, `sums[(map × 3 + plane) × 2 + power]`: for the
 * SSIM map (without the luminance denominator), the artifacts and the lost detail (map 0, 1,
 * 2), each plane (X, Y, B), the sum of the map's positive part (power 0) and of its fourth
 * power (1). `x1` and `x2` are the original's and the candidate's XYB (3 bands interleaved),
 * `terms` the original's (`pl_ssim2_original_terms`). The candidate's mean, squares and
 * products with the original are blurred a row at a time. Returns 0, or -1 when memory ran
 * out. */
static inline int pl_ssim2_sums(const float *restrict x1, const float *restrict x2, const float *restrict terms, int width, int height,
                                const float *kernel, double c2, double sums[18]) {
    pl_ssim2_window window;
    if (pl_ssim2_window_open(&window, width, height, 9, kernel)) return -1;
    const size_t w = (size_t) width;
    float *candidate = malloc(w * sizeof(float));
    if (!candidate) {
        pl_ssim2_window_close(&window);
        return -1;
    }
    const float c = (float) c2;
    for (int i = 0; i < 18; i++) sums[i] = 0;
    int next = 0;
    for (int y = 0; y < height; y++) {
        for (; next < height && next <= y + 4; next++) {
            const float *original = x1 + (size_t) next * w * 3, *distorted = x2 + (size_t) next * w * 3;
            for (int p = 0; p < 3; p++) {
                float *values = pl_ssim2_window_input(&window, p), *squares = pl_ssim2_window_input(&window, 3 + p);
                float *products = pl_ssim2_window_input(&window, 6 + p);
                for (size_t x = 0; x < w; x++) {
                    const float a = original[x * 3 + p], b = distorted[x * 3 + p];
                    values[x] = b;
                    squares[x] = b * b;
                    products[x] = a * b;
                }
            }
            pl_ssim2_window_push(&window, next);
        }
        const float *blurred = pl_ssim2_window_row(&window, y);
        const float *own = terms + (size_t) y * w * 9, *distorted = x2 + (size_t) y * w * 3;
        for (int p = 0; p < 3; p++) {
            for (size_t x = 0; x < w; x++) candidate[x] = distorted[x * 3 + p];
            const float *restrict mu1 = own + p * w, *restrict sigma11 = own + (3 + p) * w, *restrict edge1 = own + (6 + p) * w;
            const float *restrict mu2 = blurred + p * w, *restrict sigma22 = blurred + (3 + p) * w;
            const float *restrict sigma12 = blurred + (6 + p) * w;
            double ssim1 = 0, ssim4 = 0, gained1 = 0, gained4 = 0, lost1 = 0, lost4 = 0;
            {
                /* Sums in any order: the maps are floats, and the sums' rounding is far below
                 * what a score shows. */
#pragma clang fp reassociate(on)
                for (size_t x = 0; x < w; x++) {
                    const float difference = mu1[x] - mu2[x];
                    const float mean_term = 1.0f - difference * difference;
                    const float structure = 2.0f * (sigma12[x] - mu1[x] * mu2[x]) + c;
                    const float spread = sigma11[x] + (sigma22[x] - mu2[x] * mu2[x]) + c;
                    const float ssim = 1.0f - mean_term * structure / spread;
                    const float edge = (1.0f + fabsf(candidate[x] - mu2[x])) / edge1[x] - 1.0f;
                    const float positive = ssim > 0 ? ssim : 0, gained = edge > 0 ? edge : 0, lost = edge < 0 ? -edge : 0;
                    ssim1 += positive;
                    ssim4 += (double) ((positive * positive) * (positive * positive));
                    gained1 += gained;
                    gained4 += (double) ((gained * gained) * (gained * gained));
                    lost1 += lost;
                    lost4 += (double) ((lost * lost) * (lost * lost));
                }
            }
            sums[p * 2] += ssim1;
            sums[p * 2 + 1] += ssim4;
            sums[(3 + p) * 2] += gained1;
            sums[(3 + p) * 2 + 1] += gained4;
            sums[(6 + p) * 2] += lost1;
            sums[(6 + p) * 2 + 1] += lost4;
        }
    }
    free(candidate);
    pl_ssim2_window_close(&window);
    return 0;
}

#endif
