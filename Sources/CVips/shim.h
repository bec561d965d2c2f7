/*
 * Fixed-arity wrappers for the libvips calls pipeline makes.
 *
 * Swift cannot call C varargs functions such as vips_resize(in, &out, scale, ...),
 * so each call is pinned here to the arguments we pass, with the NULL that ends
 * the varargs list written on the C side.
 */
#ifndef PIPELINE_CVIPS_SHIM_H
#define PIPELINE_CVIPS_SHIM_H

#include <vips/vips.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdint.h>

static void pl_ignore_log(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data) {
    (void)domain; (void)level; (void)message; (void)data;
}

/* libvips reports decoder warnings through GLib logging; the fail_on load option,
 * not stderr noise, decides whether a warning fails an item. A hostile file's values out of
 * range for an image's properties (an SVG's side over libvips' largest) are GObject's
 * warnings, which the decoder's own checks turn into the item's failure. */
static inline void pl_silence_warnings(void) {
    g_log_set_handler("VIPS", G_LOG_LEVEL_WARNING, pl_ignore_log, NULL);
    g_log_set_handler("GLib-GObject", G_LOG_LEVEL_WARNING, pl_ignore_log, NULL);
}

/* --- the allocator -------------------------------------------------------- */

#include <malloc.h>

/* glibc gives each thread that contends for the heap an arena of its own (up to 8 per core)
 * and keeps freed memory in them: a long multi-threaded libvips batch then looks like a leak.
 * mallopt is the in-process equivalent of MALLOC_ARENA_MAX, MALLOC_MMAP_THRESHOLD_ and
 * MALLOC_TRIM_THRESHOLD_;
 * 0 leaves a setting as it is. Returns 0 when glibc refused one. */
/* Flushes standard output's stdio stream (what Swift's `print` writes), and gives the error
 * of that write, -1 for an earlier one whose code is gone, or 0: Swift 6 cannot read C's
 * `stdout`, a mutable global. */
static inline int pl_flush_standard_output(void) {
    errno = 0;
    if (fflush(stdout) != 0) return errno != 0 ? errno : -1;
    return ferror(stdout) ? -1 : 0;
}

static inline int pl_tune_allocator(int max_arenas, int mmap_threshold, int trim_threshold) {
    int ok = 1;
    if (max_arenas > 0) ok &= mallopt(M_ARENA_MAX, max_arenas);
    if (mmap_threshold > 0) ok &= mallopt(M_MMAP_THRESHOLD, mmap_threshold);
    if (trim_threshold > 0) ok &= mallopt(M_TRIM_THRESHOLD, trim_threshold);
    return ok ? 0 : -1;
}

/* Gives the pages of free blocks inside the arenas back to the system (malloc_trim walks
 * every arena; the heap's top alone is what glibc trims by itself). */
static inline void pl_release_free_memory(void) {
    malloc_trim(0);
}

/* The stack size threads get when their creator does not choose one (libvips' workers, the
 * stage queues' threads), as glibc's pthread_setattr_default_np sets it. Returns 0 on success. */
#include <pthread.h>
int pthread_setattr_default_np(const pthread_attr_t *attr);
static inline int pl_set_default_thread_stack(size_t bytes) {
    pthread_attr_t attr;
    if (pthread_attr_init(&attr)) return -1;
    int result = pthread_attr_setstacksize(&attr, bytes);
    if (!result) result = pthread_setattr_default_np(&attr);
    pthread_attr_destroy(&attr);
    return result;
}

/* --- loading ------------------------------------------------------------ */

/* One loader class's test of a source, for pl_find_permitted_loader: as libvips' own search
 * (source loaders only, the source rewound before each test), but a blocked loader is not
 * asked. libvips 8.14 asks every loader, blocked or not, and OpenSlide's test opens the file
 * with SQLite, several times over, for every input of every format. */
static void *pl_find_permitted_loader_sub(void *item, void *a, void *b) {
    (void)b;
    VipsObjectClass *object_class = VIPS_OBJECT_CLASS(item);
    VipsForeignLoadClass *load_class = VIPS_FOREIGN_LOAD_CLASS(item);
    VipsSource *source = VIPS_SOURCE(a);
    if (VIPS_OPERATION_CLASS(item)->flags & VIPS_OPERATION_BLOCKED) return NULL;
    if (!vips_ispostfix(object_class->nickname, "_source") || !load_class->is_a_source) return NULL;
    (void)vips_source_rewind(source);
    return load_class->is_a_source(source) ? load_class : NULL;
}

/* The class name of the first loader, by libvips' priority, that is not blocked and reads
 * `source`; NULL when none does. Writes nothing to the error buffer. */
static inline const char *pl_find_permitted_loader(VipsSource *source) {
    VipsForeignLoadClass *load_class =
        (VipsForeignLoadClass *)vips_foreign_map("VipsForeignLoad", pl_find_permitted_loader_sub, source, NULL);
    (void)vips_source_rewind(source);
    return load_class ? G_OBJECT_CLASS_NAME(load_class) : NULL;
}

/* Calls `loader` on `source` with `option_string`; the variadic tail ends libvips' list of
 * optional arguments. */
static inline int pl_call_loader(const char *loader, const char *option_string, VipsSource *source, VipsImage **out, ...) {
    va_list optional;
    va_start(optional, out);
    int result = vips_call_split_option_string(loader, option_string, optional, source, out);
    va_end(optional);
    return result;
}

/* vips_image_new_from_source, with `loader` (a class name or nickname, such as an image's
 * "vips-loader"), or when it is NULL the one pl_find_permitted_loader finds. */
static inline VipsImage *pl_load_source(VipsSource *source, const char *option_string, const char *loader) {
    if (!loader) loader = pl_find_permitted_loader(source);
    if (!loader) {
        vips_error("VipsForeignLoad", "%s", "source is not in a known format");
        return NULL;
    }
    VipsImage *image = NULL;
    if (pl_call_loader(loader, option_string, source, &image, NULL)) return NULL;
    return image;
}

/* Opens a file through a VipsSource so that file names are never parsed for
 * "[option]" suffixes; options go in option_string ("shrink=2,fail_on=error"); `loader` as
 * for pl_load_source. */
static inline VipsImage *pl_load_file(const char *path, const char *option_string, const char *loader) {
    VipsSource *source = vips_source_new_from_file(path);
    if (!source) return NULL;
    VipsImage *image = pl_load_source(source, option_string, loader);
    g_object_unref(source);
    return image;
}

/* Loads from a blob, which the image's source holds a reference to: several images may be
 * opened from one copy of the bytes. */
static inline VipsImage *pl_load_blob(VipsBlob *blob, const char *option_string, const char *loader) {
    VipsSource *source = vips_source_new_from_blob(blob);
    if (!source) return NULL;
    VipsImage *image = pl_load_source(source, option_string, loader);
    g_object_unref(source);
    return image;
}

/* Loads from a copy of the bytes, so the caller may free its buffer at once. */
static inline VipsImage *pl_load_buffer(const void *data, size_t length, const char *option_string) {
    VipsBlob *blob = vips_blob_copy(data, length);
    VipsImage *image = pl_load_blob(blob, option_string, NULL);
    vips_area_unref(VIPS_AREA(blob));
    return image;
}

static inline VipsBlob *pl_blob_copy(const void *data, size_t length) {
    return vips_blob_copy(data, length);
}

static inline const void *pl_blob_data(VipsBlob *blob) {
    size_t length = 0;
    return vips_blob_get(blob, &length);
}

static inline void pl_blob_unref(VipsBlob *blob) {
    vips_area_unref(VIPS_AREA(blob));
}

/* The loader libvips would pick for a file or buffer, blocked or not, or NULL when no loader
 * knows the format. Judged by the return value, not the error buffer, which other threads
 * share. */
static inline const char *pl_find_loader_file(const char *path) {
    return vips_foreign_find_load(path);
}

static inline const char *pl_find_loader_buffer(const void *data, size_t length) {
    return vips_foreign_find_load_buffer(data, length);
}

/* pl_find_permitted_loader for a file, or a blob; NULL also when the file cannot be opened. */
static inline const char *pl_find_permitted_loader_file(const char *path) {
    VipsSource *source = vips_source_new_from_file(path);
    if (!source) return NULL;
    const char *loader = pl_find_permitted_loader(source);
    g_object_unref(source);
    return loader;
}

static inline const char *pl_find_permitted_loader_blob(VipsBlob *blob) {
    VipsSource *source = vips_source_new_from_blob(blob);
    if (!source) return NULL;
    const char *loader = pl_find_permitted_loader(source);
    g_object_unref(source);
    return loader;
}

static inline const char *pl_loader_name(VipsImage *image) {
    const char *name = NULL;
    if (vips_image_get_typeof(image, "vips-loader") == 0) return NULL;
    if (vips_image_get_string(image, "vips-loader", &name)) return NULL;
    return name;
}

#include <sys/mman.h>

/* A large buffer mapped for itself and given back whole when unmapped, in transparent huge
 * pages where the kernel allows them, so a large buffer takes a few page faults rather than one
 * for every small page. NULL when the kernel refuses. */
static inline void *pl_map_buffer(size_t length) {
    void *buffer = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (buffer == MAP_FAILED) return NULL;
    (void) madvise(buffer, length, MADV_HUGEPAGE);
    return buffer;
}

static inline void pl_unmap_buffer(void *buffer, size_t length) {
    (void) munmap(buffer, length);
}

typedef struct { void *buffer; size_t length; } PlMappedBuffer;

static void pl_unmap_owned_pixels(VipsImage *image, gpointer data) {
    (void)image;
    PlMappedBuffer *mapped = data;
    pl_unmap_buffer(mapped->buffer, mapped->length);
    g_free(mapped);
}

/* An 8-bit image over the first width × height × bands bytes of a buffer from
 * pl_map_buffer(mapped_length), which the image unmaps when it closes. On failure the buffer
 * is unmapped too. */
static inline VipsImage *pl_image_taking_buffer(void *buffer, size_t mapped_length, int width, int height, int bands) {
    VipsImage *image = vips_image_new_from_memory(buffer, mapped_length, width, height, bands, VIPS_FORMAT_UCHAR);
    if (!image) {
        pl_unmap_buffer(buffer, mapped_length);
        return NULL;
    }
    PlMappedBuffer *mapped = g_new(PlMappedBuffer, 1);
    mapped->buffer = buffer;
    mapped->length = mapped_length;
    g_signal_connect(image, "postclose", G_CALLBACK(pl_unmap_owned_pixels), mapped);
    return image;
}

/* Gives `to` what the loader put in `from`'s header besides the pixels: every metadata field
 * (ICC profile, EXIF, XMP, comments, the loader's name), the interpretation and the resolution,
 * and no other. Setting "exif-data" makes libvips parse it again, which would bring back the
 * orientation autorotation removed (savers then write it, and browsers turn the image again):
 * fields `from` lacks are removed. Only for an image no other thread can see yet. */
static inline void pl_take_metadata(VipsImage *to, VipsImage *from) {
    /* vips_image_get_fields lists the header's own fields too; those are copied below. */
    static const char *const header_fields[] = {
        "width", "height", "bands", "format", "coding", "interpretation",
        "xoffset", "yoffset", "xres", "yres", "filename", NULL,
    };
    gchar **fields = vips_image_get_fields(from);
    for (int i = 0; fields[i]; i++) {
        if (g_strv_contains((const gchar * const *) header_fields, fields[i])) continue;
        GValue value = G_VALUE_INIT;
        if (vips_image_get(from, fields[i], &value)) continue;
        vips_image_set(to, fields[i], &value);
        g_value_unset(&value);
    }
    gchar **added = vips_image_get_fields(to);
    for (int i = 0; added[i]; i++) {
        if (!g_strv_contains((const gchar * const *) fields, added[i])) (void) vips_image_remove(to, added[i]);
    }
    g_strfreev(added);
    g_strfreev(fields);
    to->Type = from->Type;
    to->Xres = from->Xres;
    to->Yres = from->Yres;
}

/* An 8-bit image whose rows come from a function of ours as libvips asks for them: `fill`
 * writes rows top..top+height-1, columns left..left+width-1, the first at `first`, each
 * `line_skip` bytes after the one above, and returns 0 (or -1 after pl_set_error). It may be
 * called from several threads. `release` is called once, when the image closes (also when
 * making the image fails). */
typedef int (*PlFillRows)(void *state, VipsPel *first, size_t line_skip, int left, int top, int width, int height);
typedef void (*PlReleaseState)(void *state);
typedef struct { PlFillRows fill; PlReleaseState release; void *state; } PlRowSource;

static inline int pl_row_source_generate(VipsRegion *out, void *seq, void *a, void *b, gboolean *stop) {
    (void)seq; (void)b; (void)stop;
    PlRowSource *source = a;
    VipsRect *rect = &out->valid;
    return source->fill(source->state, VIPS_REGION_ADDR(out, rect->left, rect->top), VIPS_REGION_LSKIP(out),
                        rect->left, rect->top, rect->width, rect->height);
}

static inline void pl_row_source_close(VipsImage *image, gpointer data) {
    (void)image;
    PlRowSource *source = data;
    source->release(source->state);
    g_free(source);
}

static inline VipsImage *pl_image_from_rows(int width, int height, int bands,
                                            PlFillRows fill, PlReleaseState release, void *state) {
    VipsImage *image = vips_image_new();
    PlRowSource *source = g_new(PlRowSource, 1);
    source->fill = fill;
    source->release = release;
    source->state = state;
    g_signal_connect(image, "postclose", G_CALLBACK(pl_row_source_close), source);
    vips_image_init_fields(image, width, height, bands, VIPS_FORMAT_UCHAR, VIPS_CODING_NONE,
                           bands >= 3 ? VIPS_INTERPRETATION_sRGB : VIPS_INTERPRETATION_B_W, 1.0, 1.0);
    if (vips_image_pipelinev(image, VIPS_DEMAND_STYLE_THINSTRIP, NULL) ||
        vips_image_generate(image, NULL, pl_row_source_generate, NULL, source, NULL)) {
        g_object_unref(image);
        return NULL;
    }
    return image;
}

/* Sets libvips' error for a failure of ours (the message is taken as text, not a format). */
static inline void pl_set_error(const char *domain, const char *message) {
    vips_error(domain, "%s", message);
}

/* Whether the image's pixels are in memory already (a buffer of its own or one it was given). */
static inline int pl_image_is_in_memory(VipsImage *image) {
    return image->dtype == VIPS_IMAGE_SETBUF || image->dtype == VIPS_IMAGE_SETBUF_FOREIGN;
}

/* A new 8-bit image in memory of width × height × bands, its pixels not yet set, with `like`'s
 * metadata: libvips allocates the pixels as its own renders do (glibc's malloc). */
static inline VipsImage *pl_new_8bit_image_like(VipsImage *like, int width, int height, int bands) {
    VipsImage *out = vips_image_new_memory();
    vips_image_init_fields(out, width, height, bands, VIPS_FORMAT_UCHAR, VIPS_CODING_NONE, like->Type, like->Xres, like->Yres);
    if (vips_image_write_prepare(out)) {
        g_object_unref(out);
        return NULL;
    }
    pl_take_metadata(out, like);
    return out;
}

/* The 8-bit image `in` (1 to 4 bands) with rows and columns swapped, in memory, with `in`'s
 * metadata: libvips 8.14 reduces heights with vector code and widths with plain C, so reducing
 * the transposed image's height and transposing back is the faster way to narrow rows. `in` is
 * read in strips of 32 rows on the calling thread (computed then, if it is not in memory), so
 * a lazy image needs no buffer of its own; blocks of 32 × 32 pixels keep both sides in cache. */
static inline VipsImage *pl_transposed(VipsImage *in) {
    if (in->BandFmt != VIPS_FORMAT_UCHAR || in->Coding != VIPS_CODING_NONE || in->Bands < 1 || in->Bands > 4) {
        vips_error("transpose", "%s", "needs an 8-bit image of 1 to 4 bands");
        return NULL;
    }
    const int width = in->Xsize, height = in->Ysize, bands = in->Bands;
    const size_t out_line = (size_t) height * bands;
    VipsImage *out = pl_new_8bit_image_like(in, height, width, bands);
    if (!out) return NULL;
    VipsRegion *strip = vips_region_new(in);
    enum { block = 32 };
    for (int y0 = 0; y0 < height; y0 += block) {
        const int y1 = VIPS_MIN(height, y0 + block);
        VipsRect rows = { 0, y0, width, y1 - y0 };
        if (vips_region_prepare(strip, &rows)) {
            g_object_unref(strip);
            g_object_unref(out);
            return NULL;
        }
        for (int x0 = 0; x0 < width; x0 += block) {
            const int x1 = VIPS_MIN(width, x0 + block);
            for (int y = y0; y < y1; y++) {
                const VipsPel *from = VIPS_REGION_ADDR(strip, x0, y);
                VipsPel *to = (VipsPel *) out->data + (size_t) x0 * out_line + (size_t) y * bands;
                switch (bands) {
                case 1: for (int x = x0; x < x1; x++, from += 1, to += out_line) to[0] = from[0]; break;
                case 2: for (int x = x0; x < x1; x++, from += 2, to += out_line) memcpy(to, from, 2); break;
                case 3: for (int x = x0; x < x1; x++, from += 3, to += out_line) memcpy(to, from, 3); break;
                default: for (int x = x0; x < x1; x++, from += 4, to += out_line) memcpy(to, from, 4); break;
                }
            }
        }
    }
    g_object_unref(strip);
    /* Done with `in`, as libvips' sinks tell the images a computation read: a loader lets go of
     * what it held to decode (a progressive JPEG's coefficients) now, not when `in` is freed. */
    vips_image_minimise_all(in);
    out->Xres = in->Yres;
    out->Yres = in->Xres;
    return out;
}

/* The 8-bit image `in` (pixels in memory, any bands) box-shrunk: each output pixel is the
 * rounded mean of an `hshrink` × `vshrink` block, the last blocks of a row or column taking
 * what is left (the output is ceil(width / hshrink) × ceil(height / vshrink)). Rows are summed
 * down into one line first, which vectorizes, then across once per output row: one pass over
 * the image, where libvips 8.14's shrinkh and shrinkv each run a plain C loop per pixel. */
static inline VipsImage *pl_box_shrunk(VipsImage *in, int hshrink, int vshrink) {
    if (!pl_image_is_in_memory(in) || in->BandFmt != VIPS_FORMAT_UCHAR || in->Coding != VIPS_CODING_NONE || !in->data
        || hshrink < 1 || vshrink < 1 || vshrink > 257) {
        vips_error("shrink", "%s", "needs an 8-bit image in memory and shrinks of 1 or more (down at most 257)");
        return NULL;
    }
    const int width = in->Xsize, height = in->Ysize, bands = in->Bands;
    const int out_width = (width + hshrink - 1) / hshrink, out_height = (height + vshrink - 1) / vshrink;
    const size_t line = (size_t) width * bands, in_line = VIPS_IMAGE_SIZEOF_LINE(in);
    VipsImage *out = pl_new_8bit_image_like(in, out_width, out_height, bands);
    if (!out) return NULL;
    uint16_t *column_sums = g_new(uint16_t, line);
    for (int oy = 0; oy < out_height; oy++) {
        const int y0 = oy * vshrink, rows = VIPS_MIN(vshrink, height - y0);
        memset(column_sums, 0, line * sizeof(uint16_t));
        for (int y = y0; y < y0 + rows; y++) {
            const VipsPel *row = (const VipsPel *) in->data + (size_t) y * in_line;
            for (size_t i = 0; i < line; i++) column_sums[i] += row[i];
        }
        VipsPel *to = (VipsPel *) out->data + (size_t) oy * out_width * bands;
        for (int ox = 0; ox < out_width; ox++) {
            const int x0 = ox * hshrink, columns = VIPS_MIN(hshrink, width - x0);
            const uint32_t count = (uint32_t) columns * rows;
            for (int b = 0; b < bands; b++) {
                uint32_t sum = 0;
                for (int x = x0; x < x0 + columns; x++) sum += column_sums[(size_t) x * bands + b];
                to[(size_t) ox * bands + b] = (VipsPel) ((sum + count / 2) / count);
            }
        }
    }
    g_free(column_sums);
    return out;
}

/* --- alpha premultiplied in 8 bits --------------------------------------------------------
 * libvips' premultiply gives float pixels, which its resize then reduces in plain C. Colour
 * premultiplied in 8 bits, as browsers and Pillow keep it, stays on libvips' vector path. Colour
 * is exact where alpha is 255; where alpha is low it keeps fewer levels, which compositing
 * scales down with it: composited, the result is within a level of the float path's. */

/* colour × alpha / 255, rounded; every step fits 16 bits. */
static inline VipsPel pl_premultiplied(VipsPel colour, uint16_t alpha) {
    const uint16_t t = (uint16_t) (colour * alpha + 128);
    return (VipsPel) ((t + (t >> 8)) >> 8);
}

/* colour × 255 / alpha, rounded half up, at most 255 (resampling overshoots); alpha is not 0.
 * One single-precision division is exact here: colour × 255 is exact, a half is exact, and a
 * quotient that is not one lies at least 1/510 from it. */
static inline VipsPel pl_unpremultiplied(VipsPel colour, float alpha) {
    const float value = (float) (colour * 255) / alpha + 0.5f;
    return (VipsPel) (value >= 255.0f ? 255.0f : value);
}

/* One row of `width` pixels, alpha last, each channel written out (no inner loop over the
 * channels, which the compiler left rolled). Transparent pixels come back black. */
static inline void pl_premultiply_row(const VipsPel *restrict from, VipsPel *restrict to, int width, int bands) {
    if (bands == 4) {
        for (int x = 0; x < width * 4; x += 4) {
            const uint16_t alpha = from[x + 3];
            to[x] = pl_premultiplied(from[x], alpha);
            to[x + 1] = pl_premultiplied(from[x + 1], alpha);
            to[x + 2] = pl_premultiplied(from[x + 2], alpha);
            to[x + 3] = (VipsPel) alpha;
        }
    } else {
        for (int x = 0; x < width * 2; x += 2) {
            to[x] = pl_premultiplied(from[x], from[x + 1]);
            to[x + 1] = from[x + 1];
        }
    }
}

static inline void pl_unpremultiply_row(const VipsPel *restrict from, VipsPel *restrict to, int width, int bands) {
    if (bands == 4) {
        for (int x = 0; x < width * 4; x += 4) {
            const VipsPel alpha = from[x + 3];
            if (alpha == 0) {
                memset(to + x, 0, 4);
                continue;
            }
            to[x] = pl_unpremultiplied(from[x], alpha);
            to[x + 1] = pl_unpremultiplied(from[x + 1], alpha);
            to[x + 2] = pl_unpremultiplied(from[x + 2], alpha);
            to[x + 3] = alpha;
        }
    } else {
        for (int x = 0; x < width * 2; x += 2) {
            const VipsPel alpha = from[x + 1];
            to[x] = alpha == 0 ? 0 : pl_unpremultiplied(from[x], alpha);
            to[x + 1] = alpha;
        }
    }
}

static inline int pl_alpha_8bit_generate(VipsRegion *out, void *seq, void *a, void *b, gboolean *stop) {
    (void)a; (void)stop;
    VipsRegion *input = seq;
    const VipsRect *rect = &out->valid;
    if (vips_region_prepare(input, rect)) return -1;
    const int bands = out->im->Bands, premultiply = GPOINTER_TO_INT(b);
    for (int y = 0; y < rect->height; y++) {
        const VipsPel *from = VIPS_REGION_ADDR(input, rect->left, rect->top + y);
        VipsPel *to = VIPS_REGION_ADDR(out, rect->left, rect->top + y);
        if (premultiply) pl_premultiply_row(from, to, rect->width, bands);
        else pl_unpremultiply_row(from, to, rect->width, bands);
    }
    return 0;
}

static inline void pl_unref_input(VipsImage *image, gpointer input) {
    (void)image;
    g_object_unref(input);
}

/* `in` (8-bit, 2 or 4 bands, alpha last) with its colour multiplied by alpha (`premultiply` 1)
 * or divided by it again (0), computed as libvips asks for the pixels: it streams, as libvips'
 * own operations do. Returns 0, or -1 with libvips' error set. */
static inline int pl_alpha_8bit(VipsImage *in, VipsImage **out, int premultiply) {
    if (in->BandFmt != VIPS_FORMAT_UCHAR || in->Coding != VIPS_CODING_NONE || (in->Bands != 2 && in->Bands != 4)) {
        vips_error(premultiply ? "premultiply" : "unpremultiply", "%s", "needs an 8-bit image of 2 or 4 bands");
        return -1;
    }
    VipsImage *image = vips_image_new();
    g_object_ref(in);
    g_signal_connect(image, "postclose", G_CALLBACK(pl_unref_input), in);
    if (vips_image_pipelinev(image, VIPS_DEMAND_STYLE_THINSTRIP, in, NULL) ||
        vips_image_generate(image, vips_start_one, pl_alpha_8bit_generate, vips_stop_one, in, GINT_TO_POINTER(premultiply))) {
        g_object_unref(image);
        return -1;
    }
    *out = image;
    return 0;
}

/* The smallest value of one band; the whole band is computed. */
static inline int pl_band_min(VipsImage *in, int band, double *out) {
    VipsImage *extracted;
    if (vips_extract_band(in, &extracted, band, NULL)) return -1;
    int result = vips_min(extracted, out, NULL);
    g_object_unref(extracted);
    return result;
}

static inline int pl_has_icc_profile(VipsImage *image) {
    return vips_image_get_typeof(image, VIPS_META_ICC_NAME) != 0;
}

/* --- geometry and colour ------------------------------------------------- */

static inline int pl_autorot(VipsImage *in, VipsImage **out) {
    return vips_autorot(in, out, NULL);
}

/* Converts from the embedded profile to sRGB; intent is perceptual, as thumbnailers use. */
static inline int pl_icc_to_srgb(VipsImage *in, VipsImage **out) {
    return vips_icc_transform(in, out, "srgb", "embedded", TRUE, "intent", VIPS_INTENT_PERCEPTUAL, NULL);
}

static inline int pl_colourspace(VipsImage *in, VipsImage **out, VipsInterpretation space) {
    return vips_colourspace(in, out, space, NULL);
}

static inline int pl_cast(VipsImage *in, VipsImage **out, VipsBandFormat format) {
    return vips_cast(in, out, format, NULL);
}

static inline int pl_resize(VipsImage *in, VipsImage **out, double hscale, double vscale, VipsKernel kernel) {
    return vips_resize(in, out, hscale, "vscale", vscale, "kernel", kernel, NULL);
}

static inline int pl_premultiply(VipsImage *in, VipsImage **out) {
    return vips_premultiply(in, out, NULL);
}

static inline int pl_unpremultiply(VipsImage *in, VipsImage **out) {
    return vips_unpremultiply(in, out, NULL);
}

static inline int pl_extract_area(VipsImage *in, VipsImage **out, int left, int top, int width, int height) {
    return vips_extract_area(in, out, left, top, width, height, NULL);
}

static inline int pl_smartcrop(VipsImage *in, VipsImage **out, int width, int height, VipsInteresting interesting) {
    return vips_smartcrop(in, out, width, height, "interesting", interesting, NULL);
}

static inline int pl_embed(VipsImage *in, VipsImage **out, int x, int y, int width, int height,
                           const double *background, int background_count) {
    VipsArrayDouble *colour = vips_array_double_new(background, background_count);
    int result = vips_embed(in, out, x, y, width, height,
                            "extend", VIPS_EXTEND_BACKGROUND, "background", colour, NULL);
    vips_area_unref(VIPS_AREA(colour));
    return result;
}

static inline int pl_flatten(VipsImage *in, VipsImage **out, const double *background, int background_count) {
    VipsArrayDouble *colour = vips_array_double_new(background, background_count);
    int result = vips_flatten(in, out, "background", colour, NULL);
    vips_area_unref(VIPS_AREA(colour));
    return result;
}

static inline int pl_bandjoin_const1(VipsImage *in, VipsImage **out, double value) {
    return vips_bandjoin_const1(in, out, value, NULL);
}

static inline int pl_copy_with_interpretation(VipsImage *in, VipsImage **out, VipsInterpretation interpretation) {
    return vips_copy(in, out, "interpretation", interpretation, NULL);
}

/* A private copy whose metadata may be set before anyone else sees the image. */
static inline int pl_copy(VipsImage *in, VipsImage **out) {
    return vips_copy(in, out, NULL);
}

static inline int pl_gaussblur(VipsImage *in, VipsImage **out, double sigma) {
    return vips_gaussblur(in, out, sigma, NULL);
}

/* --- pixels and saving --------------------------------------------------- */

/* Reads one pixel; the caller g_free()s *vector. */
static inline int pl_getpoint(VipsImage *in, double **vector, int *count, int x, int y) {
    return vips_getpoint(in, vector, count, x, y, NULL);
}

/* Encodes to memory; the saver and its options come from the suffix,
 * for example ".webp[Q=80,effort=4]". The caller g_free()s *buffer. */
static inline int pl_write_to_buffer(VipsImage *in, const char *suffix, void **buffer, size_t *length) {
    return vips_image_write_to_buffer(in, suffix, buffer, length, NULL);
}

/* Encodes straight into an open file, without a growing buffer in memory; the caller owns
 * and closes the descriptor. */
static inline int pl_write_to_descriptor(VipsImage *in, const char *suffix, int descriptor) {
    VipsTarget *target = vips_target_new_to_descriptor(descriptor);
    if (!target) return -1;
    int result = vips_image_write_to_target(in, suffix, target, NULL);
    g_object_unref(target);
    return result;
}

/* A JPEG without the EXIF block (APP1 `Exif\0\0`) that libvips 8.14's saver makes of its own
 * whenever it writes any metadata. The header, up to the start of the scan, is held until it is
 * whole and given on without that block; the rest goes on as it is. Bytes that are not the JPEG
 * expected go on as they came. */
typedef int (*PlByteSink)(void *context, const unsigned char *bytes, size_t count);

/* Where the scan starts in a JPEG's first `count` bytes: 0 while they do not reach it, -1 when
 * they are not a JPEG's header (or, `ending`, never reach it). */
static inline long pl_jpeg_scan_offset(const unsigned char *bytes, size_t count, int ending) {
    if (count < 2) return ending ? -1 : 0;
    if (bytes[0] != 0xFF || bytes[1] != 0xD8) return -1;
    size_t at = 2;
    for (;;) {
        if (at + 4 > count) return ending ? -1 : 0;
        if (bytes[at] != 0xFF) return -1;
        if (bytes[at + 1] == 0xDA) return (long) at;
        size_t length = ((size_t) bytes[at + 2] << 8) | bytes[at + 3];
        if (length < 2) return -1;
        if (at + 2 + length > count) return ending ? -1 : 0;
        at += 2 + length;
    }
}

/* Gives `sink` the JPEG in `bytes`, whose scan starts at `scan`, without its EXIF segments. */
static inline int pl_jpeg_give_without_exif(const unsigned char *bytes, size_t count, size_t scan, PlByteSink sink, void *context) {
    if (sink(context, bytes, 2) != 0) return -1;
    for (size_t at = 2; at < scan;) {
        size_t length = ((size_t) bytes[at + 2] << 8) | bytes[at + 3];
        int exif = bytes[at + 1] == 0xE1 && length >= 8 && memcmp(bytes + at + 4, "Exif\0\0", 6) == 0;
        if (!exif && sink(context, bytes + at, 2 + length) != 0) return -1;
        at += 2 + length;
    }
    return sink(context, bytes + scan, count - scan);
}

static inline int pl_descriptor_sink(void *context, const unsigned char *bytes, size_t count) {
    int descriptor = *(int *) context;
    while (count > 0) {
        ssize_t written = write(descriptor, bytes, count);
        if (written < 0 && errno == EINTR) continue;
        if (written <= 0) return -1;
        bytes += written;
        count -= (size_t) written;
    }
    return 0;
}

static inline int pl_memory_sink(void *context, const unsigned char *bytes, size_t count) {
    unsigned char **end = context;
    memcpy(*end, bytes, count);
    *end += count;
    return 0;
}

/* The length of the JPEG in `bytes` without its EXIF segments, copied into `out` (room for
 * `count` bytes): `count` itself, copied whole, when they are not the JPEG expected. */
static inline size_t pl_jpeg_copy_without_exif(const unsigned char *bytes, size_t count, unsigned char *out) {
    long scan = pl_jpeg_scan_offset(bytes, count, 1);
    unsigned char *end = out;
    if (scan <= 0) pl_memory_sink(&end, bytes, count);
    else pl_jpeg_give_without_exif(bytes, count, (size_t) scan, pl_memory_sink, &end);
    return (size_t) (end - out);
}

/* The state of a target that writes a JPEG into an open file without its EXIF segments. */
typedef struct {
    int descriptor;
    int passing;
    int error;
    unsigned char *head;
    size_t length;
    size_t capacity;
} PlJPEGWithoutEXIF;

/* Gives on the held header once it reaches the scan (or, `ending`, as it is): 0 when given or
 * still incomplete, -1 when a write failed (its errno kept). */
static inline int pl_jpeg_without_exif_flush(PlJPEGWithoutEXIF *state, int ending) {
    long scan = pl_jpeg_scan_offset(state->head, state->length, ending);
    if (scan == 0) return 0;
    int result = scan < 0 ? pl_descriptor_sink(&state->descriptor, state->head, state->length)
                          : pl_jpeg_give_without_exif(state->head, state->length, (size_t) scan, pl_descriptor_sink, &state->descriptor);
    if (result != 0) state->error = errno ? errno : EIO;
    g_free(state->head);
    state->head = NULL;
    state->length = state->capacity = 0;
    state->passing = 1;
    return result;
}

static gint64 pl_jpeg_without_exif_write(VipsTargetCustom *target, const void *data, gint64 length, void *user) {
    PlJPEGWithoutEXIF *state = user;
    if (state->error || length < 0) return -1;
    if (state->passing) {
        if (pl_descriptor_sink(&state->descriptor, data, (size_t) length) != 0) {
            state->error = errno ? errno : EIO;
            return -1;
        }
        return length;
    }
    if (state->length + (size_t) length > state->capacity) {
        size_t capacity = state->capacity ? state->capacity : 65536;
        while (capacity < state->length + (size_t) length) capacity *= 2;
        state->head = g_realloc(state->head, capacity);
        state->capacity = capacity;
    }
    memcpy(state->head + state->length, data, (size_t) length);
    state->length += (size_t) length;
    return pl_jpeg_without_exif_flush(state, 0) == 0 ? length : -1;
}

static int pl_jpeg_without_exif_end(VipsTargetCustom *target, void *user) {
    PlJPEGWithoutEXIF *state = user;
    if (!state->passing && !state->error) pl_jpeg_without_exif_flush(state, 1);
    return state->error ? -1 : 0;
}

/* pl_write_to_descriptor for a JPEG saver, without libvips' EXIF block (above). */
static inline int pl_write_jpeg_without_exif(VipsImage *in, const char *suffix, int descriptor) {
    VipsTargetCustom *target = vips_target_custom_new();
    if (!target) return -1;
    PlJPEGWithoutEXIF state = { descriptor, 0, 0, NULL, 0, 0 };
    g_signal_connect(target, "write", G_CALLBACK(pl_jpeg_without_exif_write), &state);
    g_signal_connect(target, "end", G_CALLBACK(pl_jpeg_without_exif_end), &state);
    int result = vips_image_write_to_target(in, suffix, VIPS_TARGET(target), NULL);
    /* Whether or not the saver ended the target, nothing is left held. */
    if (result == 0) pl_jpeg_without_exif_end(target, &state);
    g_object_unref(target);
    g_free(state.head);
    if (result == 0 && state.error) {
        vips_error_system(state.error, "jpegsave", "write failed");
        result = -1;
    }
    return result;
}

/* --- hostile input ------------------------------------------------------- */

#include <pthread.h>

/* libvips marks loaders that were not built for hostile files "untrusted" (ImageMagick,
 * PDF, SVG, JPEG 2000, JPEG XL, PPM, FITS, the vips format, …); block them process-wide. */
static inline void pl_block_untrusted_operations(void) {
    vips_block_untrusted_set(TRUE);
    /* libvips 8.14 marks the JPEG XL saver untrusted along with its loader, but a saver only
     * writes pixels the pipeline made itself: the JPEG XL encoder stays available. */
    vips_operation_block_set("VipsForeignSaveJxl", FALSE);
    /* JPEG XL and JPEG 2000 inputs are read as libvips reads them: under the pipeline's own
     * limits (maxPixels from the header, the decode timeout, memory admission), as every
     * other input is. SVG and PDF stay blocked until a pipeline file allows them. */
    vips_operation_block_set("VipsForeignLoadJxl", FALSE);
    vips_operation_block_set("VipsForeignLoadJp2k", FALSE);
}

/* Gives `image` its own copy of every blob in its metadata (EXIF, XMP, ICC, …). libvips
 * 8.14's HEIF loader attaches metadata that points into memory freed with the loader's
 * image, so a decoded copy that outlives the loader read freed memory when saved
 * (AddressSanitizer: heap-use-after-free in vips__exif_update). Setting "exif-data" makes
 * libvips parse it again, which would bring back the orientation autorotation removed and
 * reset the resolution: fields that appear are removed and the resolution restored. Only
 * for an image no other thread can see yet. */
static inline void pl_own_metadata_blobs(VipsImage *image) {
    gchar **before = vips_image_get_fields(image);
    double xres = image->Xres, yres = image->Yres;
    for (int i = 0; before[i]; i++) {
        const void *data;
        size_t length;
        if (vips_image_get_typeof(image, before[i]) != VIPS_TYPE_BLOB) continue;
        if (vips_image_get_blob(image, before[i], &data, &length) || !data || length == 0) continue;
        vips_image_set_blob_copy(image, before[i], data, length);
    }
    gchar **after = vips_image_get_fields(image);
    for (int i = 0; after[i]; i++) {
        if (!g_strv_contains((const gchar * const *) before, after[i])) (void) vips_image_remove(image, after[i]);
    }
    image->Xres = xres;
    image->Yres = yres;
    g_strfreev(after);
    g_strfreev(before);
}

/* libvips' own rebuild of an image's EXIF block from its metadata (orientation, resolution,
 * dimensions, exif-ifd fields), as its savers do before writing it; not in libvips' headers,
 * but exported. Sets "exif-data" on `image`, which must be a private copy. */
extern int vips__exif_update(VipsImage *image);
static inline int pl_exif_update(VipsImage *image) {
    return vips__exif_update(image);
}

/* Aborts the computation of an image: the next region it prepares fails with
 * "killed for image". Safe from any thread; libvips itself sets the flag from others. */
static inline void pl_set_kill(VipsImage *image, int kill) {
    vips_image_set_kill(image, kill ? TRUE : FALSE);
}

/* The last libvips warning logged on each thread. Some loaders fail with an empty error
 * buffer and give their reason only as a warning ("PNG unsigned integer out of range").
 * Kept under a pthread key passed around as the handler's data: thread-local variables in a
 * header are not emitted for Swift. */
enum { PL_WARNING_SIZE = 256 };

static char *pl_warning_buffer(pthread_key_t *key) {
    char *buffer = pthread_getspecific(*key);
    if (!buffer) {
        buffer = g_malloc0(PL_WARNING_SIZE);
        pthread_setspecific(*key, buffer);
    }
    return buffer;
}

static void pl_remember_warning(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer key) {
    (void)domain; (void)level;
    g_strlcpy(pl_warning_buffer(key), message ? message : "", PL_WARNING_SIZE);
}

/* Replaces pl_silence_warnings' handler: still nothing on stderr, but each warning is kept.
 * Returns the key to read warnings with, or NULL. Call once. */
static inline void *pl_remember_warnings(void) {
    pthread_key_t *key = g_new(pthread_key_t, 1);
    if (pthread_key_create(key, g_free)) {
        g_free(key);
        return NULL;
    }
    g_log_set_handler("VIPS", G_LOG_LEVEL_WARNING, pl_remember_warning, key);
    return key;
}

static inline const char *pl_last_warning(void *key) {
    return pl_warning_buffer(key);
}

static inline void pl_clear_warning(void *key) {
    pl_warning_buffer(key)[0] = 0;
}

/* --- animation --- */

/* Stacks images top to bottom (the frames of an animation, one page each). */
static inline int pl_join_vertically(VipsImage **in, VipsImage **out, int count) {
    return vips_arrayjoin(in, out, count, "across", 1, NULL);
}

/* Converts sRGB pixels into a named or built-in profile ("p3", "cmyk", a file) and
 * embeds that profile, as a camera or editor in that colour space would write it. */
static inline int pl_icc_transform_from_srgb(VipsImage *in, VipsImage **out, const char *profile) {
    return vips_icc_transform(in, out, profile, "input_profile", "srgb",
                              "intent", VIPS_INTENT_RELATIVE, "embedded", FALSE, NULL);
}

/* An 8-bit sRGB image's header alone, width × height × bands, with no pixels and no way to make
 * any: what a reader other than libvips' loaders (an AVIF sequence's) describes a file with
 * before decoding it. Rendering it fails rather than giving pixels the file does not hold. */
static inline VipsImage *pl_header_image(int width, int height, int bands) {
    VipsImage *image = vips_image_new();
    vips_image_init_fields(image, width, height, bands, VIPS_FORMAT_UCHAR, VIPS_CODING_NONE, VIPS_INTERPRETATION_sRGB, 1.0, 1.0);
    return image;
}

#endif
