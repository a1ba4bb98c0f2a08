#ifndef SHIFTWORK_CEPOLL_SHIM_H
#define SHIFTWORK_CEPOLL_SHIM_H
/* Linux calls that Swift's Glibc module leaves out: epoll, with which the simulated workers watch their
   connections, and the calling thread's ID, whose CPU time /proc/self/task/TID/stat gives. No _GNU_SOURCE
   here: it changes glibc's struct definitions (fd_set's member names), and a module whose fd_set differs
   from SwiftGlibc's fails to build wherever both are imported. syscall() and SYS_gettid need only glibc's
   default feature set. */
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>

static inline int shiftwork_thread_id(void) { return (int)syscall(SYS_gettid); }
#endif
