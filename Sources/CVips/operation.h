/*
 * Any libvips operation by name, through GObject introspection: list operations, describe
 * their arguments, set arguments by type, build, and read outputs back.
 *
 * Swift cannot use the GObject type-check macros (G_IS_PARAM_SPEC_INT, …) or g_object_set's
 * varargs, so the classification and each typed set/get live here, one fixed-arity function
 * per value kind.
 */
#ifndef PIPELINE_CVIPS_OPERATION_H
#define PIPELINE_CVIPS_OPERATION_H

#include <vips/vips.h>

/* What kind of value an argument holds, as the Swift side tells them apart. */
typedef enum {
    PL_KIND_OTHER = 0,
    PL_KIND_INT,
    PL_KIND_DOUBLE,
    PL_KIND_BOOL,
    PL_KIND_ENUM,
    PL_KIND_FLAGS,
    PL_KIND_STRING,
    PL_KIND_IMAGE,
    PL_KIND_ARRAY_DOUBLE,
    PL_KIND_ARRAY_INT,
    PL_KIND_ARRAY_IMAGE,
    PL_KIND_SOURCE,
    PL_KIND_TARGET,
    PL_KIND_INTERPOLATE,
    PL_KIND_BLOB
} PLArgumentKind;

/* One argument of an operation class. The strings belong to the class, which GLib keeps
 * for the life of the process once referenced. */
typedef struct {
    const char *name;
    const char *blurb;
    PLArgumentKind kind;
    int flags;      /* VipsArgumentFlags */
    int priority;
    double minimum, maximum, default_value;
    GType value_type;
} PLArgument;

static inline PLArgumentKind pl_argument_kind(GParamSpec *pspec) {
    GType type = G_PARAM_SPEC_VALUE_TYPE(pspec);
    if (G_IS_PARAM_SPEC_INT(pspec) || G_IS_PARAM_SPEC_UINT(pspec) || G_IS_PARAM_SPEC_INT64(pspec)
        || G_IS_PARAM_SPEC_UINT64(pspec)) return PL_KIND_INT;
    if (G_IS_PARAM_SPEC_DOUBLE(pspec)) return PL_KIND_DOUBLE;
    if (G_IS_PARAM_SPEC_BOOLEAN(pspec)) return PL_KIND_BOOL;
    if (G_IS_PARAM_SPEC_ENUM(pspec)) return PL_KIND_ENUM;
    if (G_IS_PARAM_SPEC_FLAGS(pspec)) return PL_KIND_FLAGS;
    if (G_IS_PARAM_SPEC_STRING(pspec)) return PL_KIND_STRING;
    if (g_type_is_a(type, VIPS_TYPE_IMAGE)) return PL_KIND_IMAGE;
    if (g_type_is_a(type, VIPS_TYPE_ARRAY_DOUBLE)) return PL_KIND_ARRAY_DOUBLE;
    if (g_type_is_a(type, VIPS_TYPE_ARRAY_INT)) return PL_KIND_ARRAY_INT;
    if (g_type_is_a(type, VIPS_TYPE_ARRAY_IMAGE)) return PL_KIND_ARRAY_IMAGE;
    if (g_type_is_a(type, VIPS_TYPE_SOURCE)) return PL_KIND_SOURCE;
    if (g_type_is_a(type, VIPS_TYPE_TARGET)) return PL_KIND_TARGET;
    if (g_type_is_a(type, VIPS_TYPE_INTERPOLATE)) return PL_KIND_INTERPOLATE;
    if (g_type_is_a(type, VIPS_TYPE_BLOB)) return PL_KIND_BLOB;
    return PL_KIND_OTHER;
}

static inline void pl_argument_range(GParamSpec *pspec, PLArgument *argument) {
    argument->minimum = argument->maximum = argument->default_value = 0;
    if (G_IS_PARAM_SPEC_INT(pspec)) {
        GParamSpecInt *spec = G_PARAM_SPEC_INT(pspec);
        argument->minimum = spec->minimum; argument->maximum = spec->maximum; argument->default_value = spec->default_value;
    } else if (G_IS_PARAM_SPEC_UINT(pspec)) {
        GParamSpecUInt *spec = G_PARAM_SPEC_UINT(pspec);
        argument->minimum = spec->minimum; argument->maximum = spec->maximum; argument->default_value = spec->default_value;
    } else if (G_IS_PARAM_SPEC_INT64(pspec)) {
        GParamSpecInt64 *spec = G_PARAM_SPEC_INT64(pspec);
        argument->minimum = (double)spec->minimum; argument->maximum = (double)spec->maximum;
        argument->default_value = (double)spec->default_value;
    } else if (G_IS_PARAM_SPEC_UINT64(pspec)) {
        GParamSpecUInt64 *spec = G_PARAM_SPEC_UINT64(pspec);
        argument->minimum = (double)spec->minimum; argument->maximum = (double)spec->maximum;
        argument->default_value = (double)spec->default_value;
    } else if (G_IS_PARAM_SPEC_DOUBLE(pspec)) {
        GParamSpecDouble *spec = G_PARAM_SPEC_DOUBLE(pspec);
        argument->minimum = spec->minimum; argument->maximum = spec->maximum; argument->default_value = spec->default_value;
    } else if (G_IS_PARAM_SPEC_BOOLEAN(pspec)) {
        argument->default_value = G_PARAM_SPEC_BOOLEAN(pspec)->default_value;
    } else if (G_IS_PARAM_SPEC_ENUM(pspec)) {
        argument->default_value = G_PARAM_SPEC_ENUM(pspec)->default_value;
    } else if (G_IS_PARAM_SPEC_FLAGS(pspec)) {
        argument->default_value = G_PARAM_SPEC_FLAGS(pspec)->default_value;
    }
}

static void *pl_collect_argument(VipsObjectClass *object_class, GParamSpec *pspec,
                                 VipsArgumentClass *argument_class, void *a, void *b) {
    (void)object_class; (void)b;
    PLArgument argument;
    argument.name = g_param_spec_get_name(pspec);
    argument.blurb = g_param_spec_get_blurb(pspec);
    argument.kind = pl_argument_kind(pspec);
    argument.flags = (int)argument_class->flags;
    argument.priority = argument_class->priority;
    argument.value_type = G_PARAM_SPEC_VALUE_TYPE(pspec);
    pl_argument_range(pspec, &argument);
    g_array_append_val((GArray *)a, argument);
    return NULL;
}

/* The operation class registered under `nickname` ("flip", "gaussblur"), or 0. */
static inline GType pl_operation_type(const char *nickname) {
    GType type = vips_type_find("VipsOperation", nickname);
    if (!type || g_type_test_flags(type, G_TYPE_FLAG_ABSTRACT)) return 0;
    return type;
}

/* The arguments of an operation class, into a GArray of PLArgument the caller frees with
 * g_array_free(array, TRUE). NULL for an unknown operation. */
static inline GArray *pl_operation_arguments(GType type) {
    VipsObjectClass *object_class = VIPS_OBJECT_CLASS(g_type_class_ref(type));
    GArray *array = g_array_new(FALSE, FALSE, sizeof(PLArgument));
    vips_argument_class_map(object_class, pl_collect_argument, array, NULL);
    return array;
}

static inline const PLArgument *pl_argument_at(GArray *array, int index) {
    return &g_array_index(array, PLArgument, index);
}

static inline int pl_argument_count(GArray *array) { return (int)array->len; }
static inline void pl_arguments_free(GArray *array) { g_array_free(array, TRUE); }

static inline const char *pl_operation_description(GType type) {
    VipsObjectClass *object_class = VIPS_OBJECT_CLASS(g_type_class_ref(type));
    return object_class->description;
}

/* VipsOperationFlags of the class (deprecated, untrusted, blocked, …). */
static inline int pl_operation_flags(GType type) {
    VipsOperationClass *operation_class = VIPS_OPERATION_CLASS(g_type_class_ref(type));
    return (int)operation_class->flags;
}

/* Loaders and savers: every class under VipsForeign. */
static inline int pl_operation_is_foreign(GType type) {
    return g_type_is_a(type, vips_foreign_get_type());
}

static void *pl_collect_type(GType type, void *a, void *b) {
    (void)b;
    if (!g_type_test_flags(type, G_TYPE_FLAG_ABSTRACT)) {
        const char *nickname = vips_nickname_find(type);
        if (nickname) g_ptr_array_add((GPtrArray *)a, (gpointer)nickname);
    }
    return NULL;
}

/* The nicknames of every concrete operation; the caller frees the array with
 * g_ptr_array_free(array, TRUE) (the strings stay: they belong to the classes). */
static inline GPtrArray *pl_operation_nicknames(void) {
    GPtrArray *array = g_ptr_array_new();
    vips_type_map_all(VIPS_TYPE_OPERATION, pl_collect_type, array);
    return array;
}

static inline const char *pl_nickname_at(GPtrArray *array, int index) {
    return (const char *)g_ptr_array_index(array, index);
}

static inline int pl_nickname_count(GPtrArray *array) { return (int)array->len; }
static inline void pl_nicknames_free(GPtrArray *array) { g_ptr_array_free(array, TRUE); }

/* The nick and value of an enum or flags type's `index`th member; NULL past the end. */
static inline const char *pl_enum_member(GType type, int index, int *value) {
    if (G_TYPE_IS_ENUM(type)) {
        GEnumClass *klass = G_ENUM_CLASS(g_type_class_ref(type));
        if (index < 0 || (guint)index >= klass->n_values) return NULL;
        *value = klass->values[index].value;
        return klass->values[index].value_nick;
    }
    if (G_TYPE_IS_FLAGS(type)) {
        GFlagsClass *klass = G_FLAGS_CLASS(g_type_class_ref(type));
        if (index < 0 || (guint)index >= klass->n_values) return NULL;
        *value = (int)klass->values[index].value;
        return klass->values[index].value_nick;
    }
    return NULL;
}

/* --- one call ------------------------------------------------------------ */

static inline VipsOperation *pl_operation_new(const char *nickname) {
    return vips_operation_new(nickname);
}

static inline void pl_set_int(VipsOperation *op, const char *name, GType type, long long value) {
    GValue gvalue = G_VALUE_INIT;
    g_value_init(&gvalue, type);
    if (type == G_TYPE_INT) g_value_set_int(&gvalue, (int)value);
    else if (type == G_TYPE_UINT) g_value_set_uint(&gvalue, (guint)value);
    else if (type == G_TYPE_INT64) g_value_set_int64(&gvalue, value);
    else if (type == G_TYPE_UINT64) g_value_set_uint64(&gvalue, (guint64)value);
    else if (G_TYPE_IS_ENUM(type)) g_value_set_enum(&gvalue, (int)value);
    else if (G_TYPE_IS_FLAGS(type)) g_value_set_flags(&gvalue, (guint)value);
    g_object_set_property(G_OBJECT(op), name, &gvalue);
    g_value_unset(&gvalue);
}

static inline void pl_set_double(VipsOperation *op, const char *name, double value) {
    g_object_set(op, name, value, NULL);
}

static inline void pl_set_bool(VipsOperation *op, const char *name, int value) {
    g_object_set(op, name, (gboolean)(value != 0), NULL);
}

static inline void pl_set_string(VipsOperation *op, const char *name, const char *value) {
    g_object_set(op, name, value, NULL);
}

static inline void pl_set_image(VipsOperation *op, const char *name, VipsImage *image) {
    g_object_set(op, name, image, NULL);
}

static inline void pl_set_array_double(VipsOperation *op, const char *name, const double *values, int count) {
    VipsArrayDouble *array = vips_array_double_new(values, count);
    g_object_set(op, name, array, NULL);
    vips_area_unref(VIPS_AREA(array));
}

static inline void pl_set_array_int(VipsOperation *op, const char *name, const int *values, int count) {
    VipsArrayInt *array = vips_array_int_new(values, count);
    g_object_set(op, name, array, NULL);
    vips_area_unref(VIPS_AREA(array));
}

static inline void pl_set_array_image(VipsOperation *op, const char *name, VipsImage **images, int count) {
    VipsArrayImage *array = vips_array_image_new(images, count);
    g_object_set(op, name, array, NULL);
    vips_area_unref(VIPS_AREA(array));
}

/* Builds the operation, swapping in a cached equal one when there is one. On failure the
 * operation's outputs are released and the operation unreferenced; *op is then invalid. */
static inline int pl_operation_build(VipsOperation **op) {
    if (vips_cache_operation_buildp(op)) {
        vips_object_unref_outputs(VIPS_OBJECT(*op));
        g_object_unref(*op);
        return -1;
    }
    return 0;
}

/* Releases a built operation after its outputs were read (each read took its own reference). */
static inline void pl_operation_release(VipsOperation *op) {
    vips_object_unref_outputs(VIPS_OBJECT(op));
    g_object_unref(op);
}

/* Releases an operation that was never built. */
static inline void pl_operation_discard(VipsOperation *op) {
    g_object_unref(op);
}

static inline long long pl_get_int(VipsOperation *op, const char *name, GType type) {
    GValue gvalue = G_VALUE_INIT;
    g_value_init(&gvalue, type);
    g_object_get_property(G_OBJECT(op), name, &gvalue);
    long long result = 0;
    if (type == G_TYPE_INT) result = g_value_get_int(&gvalue);
    else if (type == G_TYPE_UINT) result = g_value_get_uint(&gvalue);
    else if (type == G_TYPE_INT64) result = g_value_get_int64(&gvalue);
    else if (type == G_TYPE_UINT64) result = (long long)g_value_get_uint64(&gvalue);
    else if (G_TYPE_IS_ENUM(type)) result = g_value_get_enum(&gvalue);
    else if (G_TYPE_IS_FLAGS(type)) result = g_value_get_flags(&gvalue);
    g_value_unset(&gvalue);
    return result;
}

static inline double pl_get_double(VipsOperation *op, const char *name) {
    double value = 0;
    g_object_get(op, name, &value, NULL);
    return value;
}

static inline int pl_get_bool(VipsOperation *op, const char *name) {
    gboolean value = FALSE;
    g_object_get(op, name, &value, NULL);
    return value ? 1 : 0;
}

/* A new reference to an output image, or NULL when it was not set. */
static inline VipsImage *pl_get_image(VipsOperation *op, const char *name) {
    VipsImage *image = NULL;
    g_object_get(op, name, &image, NULL);
    return image;
}

/* A copy of an output array of doubles; the caller g_free()s it. */
static inline double *pl_get_array_double(VipsOperation *op, const char *name, int *count) {
    VipsArrayDouble *array = NULL;
    *count = 0;
    g_object_get(op, name, &array, NULL);
    if (!array) return NULL;
    int n = 0;
    double *values = vips_array_double_get(array, &n);
    double *copy = g_memdup2(values, sizeof(double) * (gsize)n);
    *count = n;
    vips_area_unref(VIPS_AREA(array));
    return copy;
}

#endif
