/* Opening a shared library on first use: see CLazyLibrary.h. */
#include "CLazyLibrary.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

void sw_lazy_message(char *error, size_t error_size, const char *message) {
    if (error == NULL || error_size == 0) return;
    snprintf(error, error_size, "%s", message);
}

void *sw_lazy_open(const sw_lazy_library *library, const char *const *sonames, size_t count, char *error,
                   size_t error_size) {
    char tried[768] = "";
    size_t used = 0;
    for (size_t index = 0; index < count; index++) {
        void *handle = dlopen(sonames[index], RTLD_NOW | RTLD_LOCAL);
        if (handle != NULL) return handle;
        const char *reason = dlerror();
        if (used < sizeof tried) {
            int written = snprintf(tried + used, sizeof tried - used, "%s%s", used > 0 ? "; " : "",
                                   reason != NULL ? reason : sonames[index]);
            if (written > 0) used += (size_t)written;
        }
    }
    char message[1024];
    snprintf(message, sizeof message, "%s could not be loaded (%s); install Debian's %s package (apt-get install %s)",
             library->name, count > 0 ? tried : "no names to try", library->package, library->package);
    sw_lazy_message(error, error_size, message);
    return NULL;
}

void *sw_lazy_symbol(const sw_lazy_library *library, void *handle, const char *symbol, char *error,
                     size_t error_size) {
    dlerror();
    void *address = dlsym(handle, symbol);
    if (address != NULL) return address;
    char message[512];
    snprintf(message, sizeof message, "%s was loaded but has no function %s (too old?); install Debian's %s package",
             library->name, symbol, library->package);
    sw_lazy_message(error, error_size, message);
    return NULL;
}

void sw_lazy_close(void *handle) {
    if (handle != NULL) dlclose(handle);
}

/* A function's address comes from dlsym as a void *; POSIX has it stored into the typed pointer as its bytes (see
   dlsym's rationale), which needs the two to be the same size, as they are on every platform Shiftwork builds for. */
_Static_assert(sizeof(void (*)(void)) == sizeof(void *), "function pointers must be the size of void *");

void *sw_lazy_open_functions(const sw_lazy_library *library, const char *const *sonames, size_t count,
                             const sw_lazy_function *functions, size_t function_count, void *table, sw_lazy_check check,
                             char *error, size_t error_size) {
    void *handle = sw_lazy_open(library, sonames, count, error, error_size);
    if (handle == NULL) return NULL;
    for (size_t index = 0; index < function_count; index++) {
        void *address = sw_lazy_symbol(library, handle, functions[index].name, error, error_size);
        if (address == NULL) {
            sw_lazy_close(handle);
            return NULL;
        }
        memcpy((char *)table + functions[index].offset, &address, sizeof address);
    }
    if (check != NULL && !check(table, error, error_size)) {
        sw_lazy_close(handle);
        return NULL;
    }
    return handle;
}

void *sw_lazy_load_once(sw_lazy_load *load, sw_lazy_opener opener, const char *const *sonames, size_t count,
                        void *table, char *error, size_t error_size) {
    int state = __atomic_load_n(&load->state, __ATOMIC_ACQUIRE);
    if (state == 0) {
        pthread_mutex_lock(&load->lock);
        if (load->state == 0) {
            void *handles[2] = {NULL, NULL};
            /* Kept open for the life of the process: the handles are never closed. */
            int loaded = opener(sonames, count, table, handles, load->failure, sizeof load->failure);
            __atomic_store_n(&load->state, loaded ? 1 : 2, __ATOMIC_RELEASE);
        }
        state = load->state;
        pthread_mutex_unlock(&load->lock);
    }
    if (state == 1) return table;
    sw_lazy_message(error, error_size, load->failure);
    return NULL;
}

int sw_lazy_probe(sw_lazy_opener opener, const char *soname, const char *const *sonames, size_t count, void *table,
                  char *error, size_t error_size) {
    void *handles[2] = {NULL, NULL};
    int loaded = soname != NULL ? opener(&soname, 1, table, handles, error, error_size)
                                : opener(sonames, count, table, handles, error, error_size);
    if (loaded) {
        sw_lazy_close(handles[1]);
        sw_lazy_close(handles[0]);
    }
    return loaded;
}
