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
