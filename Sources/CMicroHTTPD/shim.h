#ifndef SHIFTWORK_CMICROHTTPD_SHIM_H
#define SHIFTWORK_CMICROHTTPD_SHIM_H
/*
 * GNU libmicrohttpd for Swift (Debian's libmicrohttpd-dev). MHD_start_daemon is variadic, which Swift
 * cannot call; shiftwork_mhd_start fixes its options. Its macros of type ssize_t and uint64_t are
 * repeated as constants Swift imports. Needs libmicrohttpd 0.9.71 or later (enum MHD_Result); Debian 12
 * has 0.9.75.
 */
#include <stdlib.h>
#include <string.h>
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

static void *shiftwork_mhd_request_begin(void *cls, const char *uri, struct MHD_Connection *connection) {
    (void) cls;
    (void) connection;
    shiftwork_mhd_request *request = calloc(1, sizeof(shiftwork_mhd_request));
    if (request != NULL) request->target = strdup(uri != NULL ? uri : "");
    return request;
}

static void shiftwork_mhd_request_end(void *cls, struct MHD_Connection *connection, void **req_cls,
                                      enum MHD_RequestTerminationCode code) {
    (void) cls;
    (void) connection;
    (void) code;
    shiftwork_mhd_request *request = *req_cls;
    if (request == NULL) return;
    free(request->target);
    free(request);
    *req_cls = NULL;
}

/*
 * Starts a daemon on the listening socket `listen_fd` (bound and listening already): one thread per
 * connection, at most `connection_limit` connections, each closed after `timeout_seconds` without
 * traffic (0: never), and at most `memory_limit` bytes for a request's head. `handler` is called with
 * *req_cls a shiftwork_mhd_request. Logs nothing (MHD_USE_ERROR_LOG is off: it would print network
 * text unescaped).
 */
static inline struct MHD_Daemon *shiftwork_mhd_start(int listen_fd, unsigned int connection_limit,
                                                     unsigned int timeout_seconds, size_t memory_limit,
                                                     MHD_AccessHandlerCallback handler, void *handler_cls) {
    return MHD_start_daemon(
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC,
        0, NULL, NULL, handler, handler_cls,
        MHD_OPTION_LISTEN_SOCKET, (MHD_socket) listen_fd,
        MHD_OPTION_CONNECTION_LIMIT, connection_limit,
        MHD_OPTION_CONNECTION_TIMEOUT, timeout_seconds,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, memory_limit,
        MHD_OPTION_URI_LOG_CALLBACK, shiftwork_mhd_request_begin, NULL,
        MHD_OPTION_NOTIFY_COMPLETED, shiftwork_mhd_request_end, NULL,
        MHD_OPTION_END);
}

#endif
