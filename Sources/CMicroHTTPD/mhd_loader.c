/* libmicrohttpd opened on first use, and the typed wrappers Swift calls: see include/CMicroHTTPD.h. */
#include "CMicroHTTPD.h"
#include "CLazyLibrary.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every libmicrohttpd function Shiftwork calls, each a field typed from <microhttpd.h>. */
#define SW_MHD_FUNCTIONS(X) \
    X(MHD_get_version) \
    X(MHD_start_daemon) \
    X(MHD_stop_daemon) \
    X(MHD_get_connection_values) \
    X(MHD_create_response_from_buffer) \
    X(MHD_create_response_from_callback) \
    X(MHD_add_response_header) \
    X(MHD_queue_response) \
    X(MHD_destroy_response)

#define SW_FUNCTION_FIELD(name) __typeof__(name) *name;

typedef struct {
    SW_MHD_FUNCTIONS(SW_FUNCTION_FIELD)
} sw_mhd_functions;

static const sw_lazy_library sw_libmicrohttpd = {"libmicrohttpd", "libmicrohttpd12"};
/* libmicrohttpd's ABI has been libmicrohttpd.so.12 since 0.9.44. */
static const char *const sw_mhd_sonames[] = {"libmicrohttpd.so.12"};

/* 1 when `version` ("0.9.75") is 0.9.71 or later (enum MHD_Result). */
static int sw_mhd_version_suffices(const char *version) {
    int major = 0, minor = 0, patch = 0;
    if (version == NULL || sscanf(version, "%d.%d.%d", &major, &minor, &patch) != 3) return 0;
    return major > 0 || minor > 9 || (minor == 9 && patch >= 71);
}

/* The loaded libmicrohttpd's version (0.9.71 or later): an sw_lazy_check. */
static int sw_mhd_check_version(const void *table, char *error, size_t error_size) {
    const char *version = ((const sw_mhd_functions *)table)->MHD_get_version();
    if (sw_mhd_version_suffices(version)) return 1;
    char message[256];
    snprintf(message, sizeof message,
             "libmicrohttpd %s is too old (0.9.71 or later is needed); install Debian's libmicrohttpd12 package "
             "from Debian 12 or later", version != NULL ? version : "(unknown version)");
    sw_lazy_message(error, error_size, message);
    return 0;
}

#define SW_MHD_FUNCTION(name) SW_LAZY_FUNCTION(sw_mhd_functions, name)
static const sw_lazy_function sw_mhd_function_list[] = {SW_MHD_FUNCTIONS(SW_MHD_FUNCTION)};

/* Opens libmicrohttpd from `sonames` into `table` (a sw_mhd_functions) and checks its version: an sw_lazy_opener. */
static int sw_mhd_open(const char *const *sonames, size_t count, void *table, void *handles[2], char *error,
                       size_t error_size) {
    handles[0] = sw_lazy_open_functions(&sw_libmicrohttpd, sonames, count, sw_mhd_function_list,
                                        SW_LAZY_COUNT(sw_mhd_function_list), table, sw_mhd_check_version, error,
                                        error_size);
    return handles[0] != NULL;
}

static sw_lazy_load sw_mhd_load = SW_LAZY_LOAD_INIT;
static sw_mhd_functions sw_mhd;

/* The table, or NULL when the library could not be loaded. */
static const sw_mhd_functions *sw_mhd_table(void) {
    return sw_lazy_load_once(&sw_mhd_load, sw_mhd_open, sw_mhd_sonames, SW_LAZY_COUNT(sw_mhd_sonames), &sw_mhd, NULL,
                             0);
}

const char *shiftwork_mhd_load_failure(void) { return sw_mhd_table() != NULL ? NULL : sw_mhd_load.failure; }

int shiftwork_mhd_probe(const char *soname, char *error, size_t error_size) {
    sw_mhd_functions table;
    return sw_lazy_probe(sw_mhd_open, soname, sw_mhd_sonames, SW_LAZY_COUNT(sw_mhd_sonames), &table, error,
                         error_size);
}

/* MARK: The daemon */

static void *sw_mhd_request_begin(void *cls, const char *uri, struct MHD_Connection *connection) {
    (void)cls;
    (void)connection;
    shiftwork_mhd_request *request = calloc(1, sizeof(shiftwork_mhd_request));
    if (request != NULL) request->target = strdup(uri != NULL ? uri : "");
    return request;
}

static void sw_mhd_request_end(void *cls, struct MHD_Connection *connection, void **req_cls,
                               enum MHD_RequestTerminationCode code) {
    (void)cls;
    (void)connection;
    (void)code;
    shiftwork_mhd_request *request = *req_cls;
    if (request == NULL) return;
    free(request->target);
    free(request);
    *req_cls = NULL;
}

struct MHD_Daemon *shiftwork_mhd_start(int listen_fd, unsigned int connection_limit, unsigned int timeout_seconds,
                                       size_t memory_limit, MHD_AccessHandlerCallback handler, void *handler_cls) {
    const sw_mhd_functions *mhd = sw_mhd_table();
    if (mhd == NULL) return NULL;
    return mhd->MHD_start_daemon(
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC,
        0, NULL, NULL, handler, handler_cls,
        MHD_OPTION_LISTEN_SOCKET, (MHD_socket)listen_fd,
        MHD_OPTION_CONNECTION_LIMIT, connection_limit,
        MHD_OPTION_CONNECTION_TIMEOUT, timeout_seconds,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, memory_limit,
        MHD_OPTION_URI_LOG_CALLBACK, sw_mhd_request_begin, NULL,
        MHD_OPTION_NOTIFY_COMPLETED, sw_mhd_request_end, NULL,
        MHD_OPTION_END);
}

void shiftwork_mhd_stop_daemon(struct MHD_Daemon *daemon) {
    const sw_mhd_functions *mhd = sw_mhd_table();
    if (mhd != NULL) mhd->MHD_stop_daemon(daemon);
}

/* MARK: Requests and responses */

int shiftwork_mhd_get_connection_values(struct MHD_Connection *connection, enum MHD_ValueKind kind,
                                        MHD_KeyValueIterator iterator, void *iterator_cls) {
    const sw_mhd_functions *mhd = sw_mhd_table();
    return mhd != NULL ? mhd->MHD_get_connection_values(connection, kind, iterator, iterator_cls) : 0;
}

struct MHD_Response *shiftwork_mhd_create_response_from_buffer(size_t size, void *buffer,
                                                               enum MHD_ResponseMemoryMode mode) {
    const sw_mhd_functions *mhd = sw_mhd_table();
    return mhd != NULL ? mhd->MHD_create_response_from_buffer(size, buffer, mode) : NULL;
}

struct MHD_Response *shiftwork_mhd_create_response_from_callback(uint64_t size, size_t block_size,
                                                                 MHD_ContentReaderCallback reader, void *reader_cls,
                                                                 MHD_ContentReaderFreeCallback free_reader) {
    const sw_mhd_functions *mhd = sw_mhd_table();
    return mhd != NULL ? mhd->MHD_create_response_from_callback(size, block_size, reader, reader_cls, free_reader)
                       : NULL;
}

enum MHD_Result shiftwork_mhd_add_response_header(struct MHD_Response *response, const char *name, const char *value) {
    const sw_mhd_functions *mhd = sw_mhd_table();
    return mhd != NULL ? mhd->MHD_add_response_header(response, name, value) : MHD_NO;
}

enum MHD_Result shiftwork_mhd_queue_response(struct MHD_Connection *connection, unsigned int status,
                                             struct MHD_Response *response) {
    const sw_mhd_functions *mhd = sw_mhd_table();
    return mhd != NULL ? mhd->MHD_queue_response(connection, status, response) : MHD_NO;
}

void shiftwork_mhd_destroy_response(struct MHD_Response *response) {
    const sw_mhd_functions *mhd = sw_mhd_table();
    if (mhd != NULL) mhd->MHD_destroy_response(response);
}
