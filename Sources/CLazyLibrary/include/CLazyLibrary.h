#ifndef SHIFTWORK_CLAZYLIBRARY_H
#define SHIFTWORK_CLAZYLIBRARY_H
/*
 * Shared libraries that only one feature needs (libcurl for downloads, libavif for AVIF), opened the first time
 * that feature runs instead of at every process start: each costs the dynamic loader a few milliseconds of
 * mapping and symbol look-ups in every `shiftwork` command (docs/benchmarks.md, "Every command starts in a
 * third less CPU"). The shims that use this (CCurl's curl_loader.c, CImageCodecs' avif_library.c) keep a table
 * of function pointers typed from the real headers (`__typeof__(curl_easy_init) *`), so a signature that does
 * not match the headers fails to compile, and they are not linked against the library at all.
 *
 * A library that cannot be opened, lacks a function or has the wrong version gives a message naming the
 * library, what was tried and the Debian package to install: the feature fails with it, not the process.
 */
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

/** Copies `message` into `error` (`error_size` bytes, always terminated; nothing when `error` is NULL). */
void sw_lazy_message(char *error, size_t error_size, const char *message);

#endif
