#ifndef SHIFTWORK_CCURL_H
#define SHIFTWORK_CCURL_H
/*
 * libcurl for Swift, loaded on first use. `shiftwork` is not linked against libcurl (nor OpenSSL's libcrypto):
 * their dependency tree (krb5, ldap, ssh2, nghttp2, rtmp, psl, idn2, gnutls, brotli, …) cost every command
 * about 4.6 ms of start. The first call to any function here opens libcurl.so.4 and libcrypto.so.3
 * (curl_loader.c, through CLazyLibrary) and checks libcurl's version; after that every call goes through a
 * table of function pointers typed from <curl/curl.h>. Call only these `shiftwork_` functions from Swift: a
 * direct call to a `curl_` function fails to link, which is what keeps libcurl out of the process's start.
 *
 * When the libraries cannot be loaded, shiftwork_curl_load_failure() says why (naming the library and the
 * Debian package to install) and the functions fail: shiftwork_curl_global_init returns CURLE_FAILED_INIT,
 * the creating functions NULL.
 *
 * curl_easy_setopt, curl_easy_getinfo and curl_multi_setopt are variadic, which Swift cannot call; the typed
 * wrappers fix the type of the third argument. Besides libcurl only the SHA-256 of an S3 request's body
 * (OpenSSL's libcrypto, which libcurl uses too): libcurl 7.88 signs S3 requests (CURLOPT_AWS_SIGV4) but does
 * not send the x-amz-content-sha256 header S3 requires.
 * Needs libcurl 7.85 or later (CURLOPT_PROTOCOLS_STR), checked at load; Debian 12 has 7.88.
 */
#include <curl/curl.h>

/* MARK: Loading */

/* NULL once libcurl and libcrypto are loaded (loading them now if not yet tried); else why they could not be,
   naming the library and the package to install. */
const char *shiftwork_curl_load_failure(void);

/* Opens, resolves and checks libcurl from `soname` (NULL: the names the real load tries) into a table of its
   own, then closes it: 1 when it would load, else 0 with the message the real load would give in `error`.
   For tests of the loader's messages; does not change what the process has loaded. */
int shiftwork_curl_probe(const char *soname, char *error, size_t error_size);

/* MARK: SHA-256 */

/* SHA-256 of `count` bytes into `digest` (32 bytes). Only after libcurl loaded (a transfer exists): zeros
   otherwise. */
void shiftwork_sha256(const unsigned char *bytes, size_t count, unsigned char *digest);

/* MARK: Easy handles */

CURLcode shiftwork_curl_global_init(void);
CURL *shiftwork_curl_easy_init(void);
void shiftwork_curl_easy_cleanup(CURL *handle);
CURLcode shiftwork_curl_easy_perform(CURL *handle);
/* A constant text; "libcurl is not loaded" when it is not. */
const char *shiftwork_curl_easy_strerror(CURLcode code);
struct curl_slist *shiftwork_curl_slist_append(struct curl_slist *list, const char *line);
void shiftwork_curl_slist_free_all(struct curl_slist *list);

CURLcode shiftwork_curl_set_long(CURL *handle, CURLoption option, long value);
CURLcode shiftwork_curl_set_string(CURL *handle, CURLoption option, const char *value);
CURLcode shiftwork_curl_set_off_t(CURL *handle, CURLoption option, curl_off_t value);
CURLcode shiftwork_curl_set_pointer(CURL *handle, CURLoption option, void *value);
/* CURLOPT_WRITEFUNCTION and CURLOPT_HEADERFUNCTION take the same callback type. */
CURLcode shiftwork_curl_set_callback(CURL *handle, CURLoption option, curl_write_callback callback);
/* CURLOPT_OPENSOCKETFUNCTION: libcurl calls it with the resolved address of every connection it is about to
   open (each address of a name, each redirect's host, each Happy Eyeballs attempt); it returns the socket, or
   CURL_SOCKET_BAD to refuse that address (libcurl then tries the next one, or fails with CURLE_COULDNT_CONNECT). */
CURLcode shiftwork_curl_set_opensocket(CURL *handle, CURLoption option, curl_opensocket_callback callback);
/* The IP address of `address` (a connection libcurl is about to open) in network byte order: 4 bytes for IPv4,
   16 for IPv6, into `bytes` (16 bytes of room); 0 for any other family or a truncated address. `*port` gets the
   port. A plain read of the struct: works whether or not libcurl is loaded. */
int shiftwork_curl_sockaddr_bytes(const struct curl_sockaddr *address, unsigned char *bytes, unsigned short *port);
CURLcode shiftwork_curl_get_long(CURL *handle, CURLINFO info, long *value);
CURLcode shiftwork_curl_get_string(CURL *handle, CURLINFO info, char **value);
CURLcode shiftwork_curl_get_off_t(CURL *handle, CURLINFO info, curl_off_t *value);

/* MARK: Multi handles */

CURLM *shiftwork_curl_multi_init(void);
CURLMcode shiftwork_curl_multi_cleanup(CURLM *multi);
CURLMcode shiftwork_curl_multi_add_handle(CURLM *multi, CURL *handle);
CURLMcode shiftwork_curl_multi_remove_handle(CURLM *multi, CURL *handle);
CURLMcode shiftwork_curl_multi_perform(CURLM *multi, int *running);
CURLMcode shiftwork_curl_multi_poll(CURLM *multi, struct curl_waitfd *extra, unsigned int count, int timeout_ms,
                                    int *ready);
CURLMcode shiftwork_curl_multi_wakeup(CURLM *multi);
CURLMsg *shiftwork_curl_multi_info_read(CURLM *multi, int *queued);
/* A constant text; "libcurl is not loaded" when it is not. */
const char *shiftwork_curl_multi_strerror(CURLMcode code);

/* CURLMSG_DONE's result lives in a union, which Swift reads awkwardly. */
static inline CURLcode shiftwork_curl_message_result(const CURLMsg *message) { return message->data.result; }

#endif
