#ifndef SHIFTWORK_CEPOLL_SHIM_H
#define SHIFTWORK_CEPOLL_SHIM_H
/* Linux's epoll, which Swift's Glibc module leaves out: the simulated workers watch their sockets with it. */
#include <sys/epoll.h>
#endif
