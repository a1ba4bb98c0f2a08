/* libcurl and libcrypto opened on first use, and the typed wrappers Swift calls: see include/CCurl.h. */
#define CURL_DISABLE_TYPECHECK /* curl_easy_setopt and curl_easy_getinfo stay plain names (the table's fields) */
#define OPENSSL_SUPPRESS_DEPRECATED /* SHA256 (one call, the simplest) is deprecated in OpenSSL 3 but kept */
#include "CCurl.h"
#include "CLazyLibrary.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/sha.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* Every libcurl function Shiftwork calls. Each becomes a field `__typeof__(name) *name`: its type comes from
   <curl/curl.h>, so a wrapper that calls it with the wrong arguments does not compile. */
#define SW_CURL_FUNCTIONS(X) \
    X(curl_version_info) \
    X(curl_global_init) \
    X(curl_easy_init) \
    X(curl_easy_cleanup) \
    X(curl_easy_perform) \
    X(curl_easy_strerror) \
    X(curl_easy_setopt) \
    X(curl_easy_getinfo) \
    X(curl_slist_append) \
    X(curl_slist_free_all) \
    X(curl_multi_init) \
    X(curl_multi_cleanup) \
    X(curl_multi_add_handle) \
    X(curl_multi_remove_handle) \
    X(curl_multi_perform) \
    X(curl_multi_poll) \
    X(curl_multi_wakeup) \
    X(curl_multi_info_read) \
    X(curl_multi_strerror)

#define SW_FUNCTION_FIELD(name) __typeof__(name) *name;

typedef struct {
    SW_CURL_FUNCTIONS(SW_FUNCTION_FIELD)
    __typeof__(SHA256) *SHA256;
} sw_curl_functions;

static const sw_lazy_library sw_libcurl = {"libcurl", "libcurl4"};
static const sw_lazy_library sw_libcrypto = {"libcrypto (OpenSSL)", "libssl3"};
/* libcurl's ABI has been libcurl.so.4 since 2006; Debian's OpenSSL 3 is libcrypto.so.3. */
static const char *const sw_curl_sonames[] = {"libcurl.so.4"};
static const char *const sw_crypto_sonames[] = {"libcrypto.so.3"};
/* CURLOPT_PROTOCOLS_STR and CURLOPT_REDIR_PROTOCOLS_STR came with 7.85.0. */
#define SW_CURL_OLDEST 0x075500

/* The loaded libcurl's version (7.85.0 or later): an sw_lazy_check. */
static int sw_curl_check_version(const void *table, char *error, size_t error_size) {
    const curl_version_info_data *version = ((const sw_curl_functions *)table)->curl_version_info(CURLVERSION_NOW);
    if (version != NULL && version->version_num >= SW_CURL_OLDEST) return 1;
    char message[256];
    snprintf(message, sizeof message,
             "libcurl %s is too old (7.85.0 or later is needed); install Debian's libcurl4 package from Debian 12 "
             "or later", version != NULL && version->version != NULL ? version->version : "(unknown version)");
    sw_lazy_message(error, error_size, message);
    return 0;
}

#define SW_CURL_FUNCTION(name) SW_LAZY_FUNCTION(sw_curl_functions, name)
static const sw_lazy_function sw_curl_function_list[] = {SW_CURL_FUNCTIONS(SW_CURL_FUNCTION)};
static const sw_lazy_function sw_crypto_function_list[] = {SW_CURL_FUNCTION(SHA256)};

/* Opens libcurl from `sonames` (and libcrypto) into `table` (a sw_curl_functions) and checks libcurl's version: an
   sw_lazy_opener. */
static int sw_curl_open(const char *const *sonames, size_t count, void *table, void *handles[2], char *error,
                        size_t error_size) {
    void *curl = sw_lazy_open_functions(&sw_libcurl, sonames, count, sw_curl_function_list,
                                        SW_LAZY_COUNT(sw_curl_function_list), table, sw_curl_check_version, error,
                                        error_size);
    if (curl == NULL) return 0;
    void *crypto = sw_lazy_open_functions(&sw_libcrypto, sw_crypto_sonames, SW_LAZY_COUNT(sw_crypto_sonames),
                                          sw_crypto_function_list, SW_LAZY_COUNT(sw_crypto_function_list), table, NULL,
                                          error, error_size);
    if (crypto == NULL) {
        sw_lazy_close(curl);
        return 0;
    }
    handles[0] = curl;
    handles[1] = crypto;
    return 1;
}

/* MARK: The process's one load */

static sw_lazy_load sw_curl_load = SW_LAZY_LOAD_INIT;
static sw_curl_functions sw_curl;

/* The table, or NULL when the libraries could not be loaded. */
static const sw_curl_functions *sw_curl_table(void) {
    return sw_lazy_load_once(&sw_curl_load, sw_curl_open, sw_curl_sonames, SW_LAZY_COUNT(sw_curl_sonames), &sw_curl,
                             NULL, 0);
}

const char *shiftwork_curl_load_failure(void) { return sw_curl_table() != NULL ? NULL : sw_curl_load.failure; }

int shiftwork_curl_probe(const char *soname, char *error, size_t error_size) {
    sw_curl_functions table;
    return sw_lazy_probe(sw_curl_open, soname, sw_curl_sonames, SW_LAZY_COUNT(sw_curl_sonames), &table, error,
                         error_size);
}

/* MARK: The wrappers */

static const char sw_curl_not_loaded[] = "libcurl is not loaded";

void shiftwork_sha256(const unsigned char *bytes, size_t count, unsigned char *digest) {
    const sw_curl_functions *curl = sw_curl_table();
    if (curl == NULL) {
        memset(digest, 0, SHA256_DIGEST_LENGTH);
        return;
    }
    curl->SHA256(bytes, count, digest);
}

CURLcode shiftwork_curl_global_init(void) {
    const sw_curl_functions *curl = sw_curl_table();
    return curl != NULL ? curl->curl_global_init(CURL_GLOBAL_DEFAULT) : CURLE_FAILED_INIT;
}

CURL *shiftwork_curl_easy_init(void) {
    const sw_curl_functions *curl = sw_curl_table();
    return curl != NULL ? curl->curl_easy_init() : NULL;
}

void shiftwork_curl_easy_cleanup(CURL *handle) {
    const sw_curl_functions *curl = sw_curl_table();
    if (curl != NULL) curl->curl_easy_cleanup(handle);
}

CURLcode shiftwork_curl_easy_perform(CURL *handle) {
    const sw_curl_functions *curl = sw_curl_table();
    return curl != NULL ? curl->curl_easy_perform(handle) : CURLE_FAILED_INIT;
}

const char *shiftwork_curl_easy_strerror(CURLcode code) {
    const sw_curl_functions *curl = sw_curl_table();
    return curl != NULL ? curl->curl_easy_strerror(code) : sw_curl_not_loaded;
}

struct curl_slist *shiftwork_curl_slist_append(struct curl_slist *list, const char *line) {
    const sw_curl_functions *curl = sw_curl_table();
    return curl != NULL ? curl->curl_slist_append(list, line) : NULL;
}

void shiftwork_curl_slist_free_all(struct curl_slist *list) {
    const sw_curl_functions *curl = sw_curl_table();
    if (curl != NULL) curl->curl_slist_free_all(list);
}

#define SW_CURL_SETTER(suffix, type) \
    CURLcode shiftwork_curl_set_##suffix(CURL *handle, CURLoption option, type value) { \
        const sw_curl_functions *curl = sw_curl_table(); \
        return curl != NULL ? curl->curl_easy_setopt(handle, option, value) : CURLE_FAILED_INIT; \
    }
SW_CURL_SETTER(long, long)
SW_CURL_SETTER(string, const char *)
SW_CURL_SETTER(off_t, curl_off_t)
SW_CURL_SETTER(pointer, void *)
SW_CURL_SETTER(callback, curl_write_callback)
SW_CURL_SETTER(opensocket, curl_opensocket_callback)

int shiftwork_curl_sockaddr_bytes(const struct curl_sockaddr *address, unsigned char *bytes, unsigned short *port) {
    /* `addr` is declared a struct sockaddr but holds addrlen bytes of the family's own struct. */
    const size_t room = address->addrlen;
    if (address->family == AF_INET && room >= sizeof(struct sockaddr_in)) {
        struct sockaddr_in in;
        memcpy(&in, &address->addr, sizeof in);
        memcpy(bytes, &in.sin_addr, 4);
        *port = ntohs(in.sin_port);
        return 4;
    }
    if (address->family == AF_INET6 && room >= sizeof(struct sockaddr_in6)) {
        struct sockaddr_in6 in6;
        memcpy(&in6, &address->addr, sizeof in6);
        memcpy(bytes, &in6.sin6_addr, 16);
        *port = ntohs(in6.sin6_port);
        return 16;
    }
    return 0;
}

#define SW_CURL_GETTER(suffix, type) \
    CURLcode shiftwork_curl_get_##suffix(CURL *handle, CURLINFO info, type *value) { \
        const sw_curl_functions *curl = sw_curl_table(); \
        return curl != NULL ? curl->curl_easy_getinfo(handle, info, value) : CURLE_FAILED_INIT; \
    }
SW_CURL_GETTER(long, long)
SW_CURL_GETTER(string, char *)
SW_CURL_GETTER(off_t, curl_off_t)

CURLM *shiftwork_curl_multi_init(void) {
    const sw_curl_functions *curl = sw_curl_table();
    return curl != NULL ? curl->curl_multi_init() : NULL;
}

/* The multi functions below are called with a multi handle, which exists only once libcurl is loaded. */
#define SW_CURL_MULTI(call) \
    const sw_curl_functions *curl = sw_curl_table(); \
    return curl != NULL ? curl->call : CURLM_INTERNAL_ERROR;

CURLMcode shiftwork_curl_multi_cleanup(CURLM *multi) { SW_CURL_MULTI(curl_multi_cleanup(multi)) }
CURLMcode shiftwork_curl_multi_add_handle(CURLM *multi, CURL *handle) {
    SW_CURL_MULTI(curl_multi_add_handle(multi, handle))
}
CURLMcode shiftwork_curl_multi_remove_handle(CURLM *multi, CURL *handle) {
    SW_CURL_MULTI(curl_multi_remove_handle(multi, handle))
}
CURLMcode shiftwork_curl_multi_perform(CURLM *multi, int *running) { SW_CURL_MULTI(curl_multi_perform(multi, running)) }
CURLMcode shiftwork_curl_multi_poll(CURLM *multi, struct curl_waitfd *extra, unsigned int count, int timeout_ms,
                                    int *ready) {
    SW_CURL_MULTI(curl_multi_poll(multi, extra, count, timeout_ms, ready))
}
CURLMcode shiftwork_curl_multi_wakeup(CURLM *multi) { SW_CURL_MULTI(curl_multi_wakeup(multi)) }

CURLMsg *shiftwork_curl_multi_info_read(CURLM *multi, int *queued) {
    const sw_curl_functions *curl = sw_curl_table();
    return curl != NULL ? curl->curl_multi_info_read(multi, queued) : NULL;
}

const char *shiftwork_curl_multi_strerror(CURLMcode code) {
    const sw_curl_functions *curl = sw_curl_table();
    return curl != NULL ? curl->curl_multi_strerror(code) : sw_curl_not_loaded;
}
