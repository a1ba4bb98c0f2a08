#ifndef SHIFTWORK_CLAZYLIBRARY_H
#define SHIFTWORK_CLAZYLIBRARY_H
/*
 * Shared libraries that only one feature needs (libcurl and libcrypto for downloads, libavif for AVIF,
 * libmicrohttpd for the HTTP endpoints), opened the first time that feature runs instead of at every process
 * start: each costs the dynamic loader milliseconds of mapping and symbol look-ups in every `shiftwork` command
 * (docs/benchmarks.md, "Every command starts in about 40 % less CPU"). The shims that use this (CCurl's
 * curl_loader.c, CImageCodecs' avif_library.c, CMicroHTTPD's mhd_loader.c) keep a table of function pointers
 * typed from the real headers (`__typeof__(curl_easy_init) *`), so a signature that does not match the headers
 * fails to compile, and they are not linked against the library at all.
 *
 * A library that cannot be opened, lacks a function or has the wrong version gives a message naming the
 * library, what was tried and the Debian package to install: the feature fails with it, not the process.
 */
#include <pthread.h>
#include <stddef.h>

/** What to open, and what to tell the user when it cannot be opened. */
typedef struct {
    /** The library's name in messages ("libcurl"). */
    const char *name;
    /** The Debian package that installs it ("libcurl4"). */
    const char *package;
} sw_lazy_library;

/**
 * Opens the first of `sonames` (`count` names, tried in order) that loads, with RTLD_NOW | RTLD_LOCAL: its
 * symbols stay out of the process's global scope (nothing else binds to them by accident). Returns the handle,
 * or NULL with a message in `error` (naming the library, every name tried and why it failed, and the package).
 */
void *sw_lazy_open(const sw_lazy_library *library, const char *const *sonames, size_t count, char *error,
                   size_t error_size);

/** The address of `symbol` in `handle`, or NULL with a message in `error` naming the library and the symbol. */
void *sw_lazy_symbol(const sw_lazy_library *library, void *handle, const char *symbol, char *error,
                     size_t error_size);

/** Closes `handle` (after a failed check: the library is not used). */
void sw_lazy_close(void *handle);

/** The number of elements of the array `array` (a loader's sonames or functions). */
#define SW_LAZY_COUNT(array) (sizeof(array) / sizeof *(array))

/** One function a loader looks up: its name, and where its pointer goes in the loader's table. */
typedef struct {
    const char *name;
    /** The offset of its field in the table, a pointer typed from the library's header. */
    size_t offset;
} sw_lazy_function;

/**
 * The entry for the function `name` in a list for a table of type `table` whose field is named after the function:
 * `{SW_LAZY_FUNCTION(sw_avif_functions, avifVersion)}`, or each name of an X-macro list through a one-line wrapper.
 */
#define SW_LAZY_FUNCTION(table, name) {#name, offsetof(table, name)},

/**
 * After every function is found: 1 when the library, whose functions `table` now holds, is one Shiftwork can use
 * (its version), else 0 with a message in `error` that names the version found and the one needed.
 */
typedef int (*sw_lazy_check)(const void *table, char *error, size_t error_size);

/**
 * The one way a loader opens its library: opens the first of `sonames` (`count` names) that loads, as sw_lazy_open
 * does; stores the address of each of `functions` (`function_count`) in its field of `table` (a struct of the
 * pointers the offsets name); then runs `check` on the table (NULL: no check). Returns the handle, or NULL with the
 * message of what failed in `error` (the names tried and the package; the first function missing; or `check`'s) and
 * nothing left open; a table whose load failed is not to be used.
 */
void *sw_lazy_open_functions(const sw_lazy_library *library, const char *const *sonames, size_t count,
                             const sw_lazy_function *functions, size_t function_count, void *table, sw_lazy_check check,
                             char *error, size_t error_size);

/**
 * Opens a library from `count` `sonames` into `table` (its function pointers) and checks it: 1 with what to close
 * later in `handles` (one or two; the others NULL), or 0 with a message in `error` and nothing left open.
 */
typedef int (*sw_lazy_opener)(const char *const *sonames, size_t count, void *table, void *handles[2], char *error,
                              size_t error_size);

/** The process's one load of a library: a static `sw_lazy_load load = SW_LAZY_LOAD_INIT;` per library. */
typedef struct {
    pthread_mutex_t lock;
    /** 0 not tried yet, 1 loaded, 2 failed (`failure` says why). Read without the lock once set. */
    int state;
    char failure[1024];
} sw_lazy_load;

#define SW_LAZY_LOAD_INIT {PTHREAD_MUTEX_INITIALIZER, 0, ""}

/**
 * Runs `opener` with `sonames` into `table` the first time it is called for `load` (the process keeps the library
 * loaded for its life); later calls return at once. Returns `table` when it is filled, or NULL when the library could
 * not be loaded: `load->failure` says why, and so does `error` (`error_size` bytes; NULL for none).
 */
void *sw_lazy_load_once(sw_lazy_load *load, sw_lazy_opener opener, const char *const *sonames, size_t count,
                        void *table, char *error, size_t error_size);

/**
 * For tests of the loaders' messages: runs `opener` from `soname` (NULL: from the `count` `sonames` the real load
 * tries) into `table`, a table of the caller's, and closes what it opened. 1 when the library would load, else 0
 * with the real load's message in `error`. Does not change what the process has loaded.
 */
int sw_lazy_probe(sw_lazy_opener opener, const char *soname, const char *const *sonames, size_t count, void *table,
                  char *error, size_t error_size);

/** Copies `message` into `error` (`error_size` bytes, always terminated; nothing when `error` is NULL). */
void sw_lazy_message(char *error, size_t error_size, const char *message);

#endif
