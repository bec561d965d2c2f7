/*
 * Typed, fixed-arity wrappers for libcurl's varargs calls (curl_easy_setopt,
 * curl_easy_getinfo), which Swift cannot call directly.
 */
#ifndef PIPELINE_CCURL_SHIM_H
#define PIPELINE_CCURL_SHIM_H

#include <curl/curl.h>

typedef size_t (*pl_curl_data_callback)(char *data, size_t size, size_t count, void *context);
typedef int (*pl_curl_progress_callback)(void *context, curl_off_t download_total, curl_off_t download_now,
                                         curl_off_t upload_total, curl_off_t upload_now);

static inline CURLcode pl_curl_set_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode pl_curl_set_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode pl_curl_set_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode pl_curl_set_offset(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode pl_curl_set_headers(CURL *handle, struct curl_slist *headers) {
    return curl_easy_setopt(handle, CURLOPT_HTTPHEADER, headers);
}

/* Each pair (or triple) of options stops at the first libcurl refuses and returns its code,
 * so that no result is lost on the way to Swift. */
static inline CURLcode pl_curl_set_write_callback(CURL *handle, pl_curl_data_callback callback, void *context) {
    CURLcode code = curl_easy_setopt(handle, CURLOPT_WRITEDATA, context);
    return code != CURLE_OK ? code : curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, callback);
}

static inline CURLcode pl_curl_set_header_callback(CURL *handle, pl_curl_data_callback callback, void *context) {
    CURLcode code = curl_easy_setopt(handle, CURLOPT_HEADERDATA, context);
    return code != CURLE_OK ? code : curl_easy_setopt(handle, CURLOPT_HEADERFUNCTION, callback);
}

/* The progress callback lets a cancelled run abort a transfer in flight. */
static inline CURLcode pl_curl_set_progress_callback(CURL *handle, pl_curl_progress_callback callback, void *context) {
    CURLcode code = curl_easy_setopt(handle, CURLOPT_XFERINFODATA, context);
    if (code == CURLE_OK) code = curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, callback);
    return code != CURLE_OK ? code : curl_easy_setopt(handle, CURLOPT_NOPROGRESS, 0L);
}

static inline CURLcode pl_curl_response_code(CURL *handle, long *code) {
    *code = 0;
    return curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, code);
}

/* NULL when libcurl cannot say, or there was no redirect. */
static inline const char *pl_curl_redirect_url(CURL *handle) {
    char *url = NULL;
    return curl_easy_getinfo(handle, CURLINFO_REDIRECT_URL, &url) == CURLE_OK ? url : NULL;
}

/* NULL when libcurl's URL parser takes `url` as it is written (no encoding, no guessed
 * scheme), else its reason: what a transfer of it would fail with. */
static inline const char *pl_curl_url_problem(const char *url) {
    CURLU *handle = curl_url();
    if (handle == NULL) return "out of memory";
    CURLUcode code = curl_url_set(handle, CURLUPART_URL, url, 0);
    curl_url_cleanup(handle);
    return code == CURLUE_OK ? NULL : curl_url_strerror(code);
}

/* What the libcurl loaded at run time offers (its version, protocols and features), which may
 * be older than the headers this was compiled against. */
static inline const curl_version_info_data *pl_curl_version_info(void) {
    return curl_version_info(CURLVERSION_NOW);
}

#endif
