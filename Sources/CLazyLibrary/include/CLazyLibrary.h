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
 * loaded for its life); later calls return at once. 1 when the table is filled, 0 when the library could not be
 * loaded: `load->failure` says why.
 */
int sw_lazy_load_once(sw_lazy_load *load, sw_lazy_opener opener, const char *const *sonames, size_t count,
                      void *table);

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
