#ifndef SHIFTWORK_CMICROHTTPD_H
#define SHIFTWORK_CMICROHTTPD_H
/*
 * GNU libmicrohttpd for Swift (Debian's libmicrohttpd-dev headers), loaded on first use. `shiftwork` is not
 * linked against it: with its GnuTLS tree (gnutls, nettle, hogweed, gmp, p11-kit, tasn1, idn2, unistring, ffi)
 * it cost every command about 2 ms of start, and only the coordinator's and worker's HTTP endpoints use it. The
 * first call here opens libmicrohttpd.so.12 (mhd_loader.c, through CLazyLibrary) and checks its version; every
 * call goes through a table of function pointers typed from <microhttpd.h>. Call only these `shiftwork_`
 * functions from Swift: a direct call to an `MHD_` function fails to link.
 *
 * MHD_start_daemon is variadic, which Swift cannot call; shiftwork_mhd_start fixes its options. Its macros of
 * type ssize_t and uint64_t are repeated as constants Swift imports. Needs libmicrohttpd 0.9.71 or later
 * (enum MHD_Result), checked at load; Debian 12 has 0.9.75.
 */
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <microhttpd.h>

/* What a content reader returns at the end of a body of unknown size. */
static const ssize_t shiftwork_mhd_end_of_stream = MHD_CONTENT_READER_END_OF_STREAM;
/* What a content reader returns when the body cannot be finished (the connection is closed). */
static const ssize_t shiftwork_mhd_end_with_error = MHD_CONTENT_READER_END_WITH_ERROR;
/* The size of a body that is sent chunked (HTTP/1.1) or until the connection closes (HTTP/1.0). */
static const uint64_t shiftwork_mhd_size_unknown = MHD_SIZE_UNKNOWN;

/*
 * One request as the access handler sees it in *req_cls: the request target exactly as it was on the
 * request line (path and query, or an absolute URI for a proxy; MHD hands the handler only the path),
 * and how far the handler got: 0 new, 1 waiting for the end of the request, 2 answered.
 */
typedef struct {
    char *target;
    int answered;
} shiftwork_mhd_request;

/* MARK: Loading */

/* NULL once libmicrohttpd is loaded (loading it now if not yet tried); else why it could not be, naming the
   library and the package to install. */
const char *shiftwork_mhd_load_failure(void);

/* Opens, resolves and checks libmicrohttpd from `soname` (NULL: the names the real load tries) into a table of
   its own, then closes it: 1 when it would load, else 0 with the real load's message in `error`. For tests. */
int shiftwork_mhd_probe(const char *soname, char *error, size_t error_size);

/* MARK: The daemon */

/*
 * Starts a daemon on the listening socket `listen_fd` (bound and listening already): one thread per
 * connection, at most `connection_limit` connections, each closed after `timeout_seconds` without
 * traffic (0: never), and at most `memory_limit` bytes for a request's head. `handler` is called with
 * *req_cls a shiftwork_mhd_request. Logs nothing (MHD_USE_ERROR_LOG is off: it would print network
 * text unescaped). NULL when libmicrohttpd cannot be loaded (shiftwork_mhd_load_failure says why) or refuses.
 */
struct MHD_Daemon *shiftwork_mhd_start(int listen_fd, unsigned int connection_limit, unsigned int timeout_seconds,
                                       size_t memory_limit, MHD_AccessHandlerCallback handler, void *handler_cls);
void shiftwork_mhd_stop_daemon(struct MHD_Daemon *daemon);

/* MARK: Requests and responses (called only by a running daemon's handlers: libmicrohttpd is loaded) */

int shiftwork_mhd_get_connection_values(struct MHD_Connection *connection, enum MHD_ValueKind kind,
                                        MHD_KeyValueIterator iterator, void *iterator_cls);
struct MHD_Response *shiftwork_mhd_create_response_from_buffer(size_t size, void *buffer,
                                                               enum MHD_ResponseMemoryMode mode);
struct MHD_Response *shiftwork_mhd_create_response_from_callback(uint64_t size, size_t block_size,
                                                                 MHD_ContentReaderCallback reader, void *reader_cls,
                                                                 MHD_ContentReaderFreeCallback free_reader);
enum MHD_Result shiftwork_mhd_add_response_header(struct MHD_Response *response, const char *name, const char *value);
enum MHD_Result shiftwork_mhd_queue_response(struct MHD_Connection *connection, unsigned int status,
                                             struct MHD_Response *response);
void shiftwork_mhd_destroy_response(struct MHD_Response *response);

#endif
