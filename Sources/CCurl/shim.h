#ifndef SHIFTWORK_CCURL_SHIM_H
#define SHIFTWORK_CCURL_SHIM_H
/*
 * libcurl for Swift. curl_easy_setopt, curl_easy_getinfo and curl_multi_setopt are variadic, which
 * Swift cannot call; these typed wrappers fix the type of the third argument. Besides them only the
 * SHA-256 of an S3 request's body (OpenSSL's libcrypto, which libcurl uses too): libcurl 7.88 signs S3
 * requests (CURLOPT_AWS_SIGV4) but does not send the x-amz-content-sha256 header S3 requires.
 * Needs libcurl 7.85 or later (CURLOPT_PROTOCOLS_STR); Debian 12 has 7.88.
 */
#include <curl/curl.h>
#include <openssl/sha.h>

/* SHA-256 of `count` bytes into `digest` (32 bytes). */
static inline void shiftwork_sha256(const unsigned char *bytes, size_t count, unsigned char *digest) {
    SHA256(bytes, count, digest);
}

static inline CURLcode shiftwork_curl_global_init(void) { return curl_global_init(CURL_GLOBAL_DEFAULT); }

static inline CURLcode shiftwork_curl_set_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode shiftwork_curl_set_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode shiftwork_curl_set_off_t(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode shiftwork_curl_set_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

/* CURLOPT_WRITEFUNCTION and CURLOPT_HEADERFUNCTION take the same callback type. */
static inline CURLcode shiftwork_curl_set_callback(CURL *handle, CURLoption option, curl_write_callback callback) {
    return curl_easy_setopt(handle, option, callback);
}

static inline CURLcode shiftwork_curl_get_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode shiftwork_curl_get_string(CURL *handle, CURLINFO info, char **value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode shiftwork_curl_get_off_t(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}

/* CURLMSG_DONE's result lives in a union, which Swift reads awkwardly. */
static inline CURLcode shiftwork_curl_message_result(const CURLMsg *message) { return message->data.result; }

#endif
