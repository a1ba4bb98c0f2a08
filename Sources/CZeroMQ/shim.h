#ifndef SHIFTWORK_CZEROMQ_SHIM_H
#define SHIFTWORK_CZEROMQ_SHIM_H
#include <zmq.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>

/// Names the calling thread (Linux keeps 15 bytes), as /proc/PID/task/TID/comm and `top -H` show it.
/// From inside the thread: Foundation's `Thread.name`, set there, races with `start()`.
static inline void shiftwork_name_current_thread(const char *name) {
    prctl(PR_SET_NAME, (unsigned long)name, 0UL, 0UL, 0UL);
}
#endif
