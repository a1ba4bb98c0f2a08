#ifndef SHIFTWORK_CZEROMQ_SHIM_H
#define SHIFTWORK_CZEROMQ_SHIM_H
#include <zmq.h>
#include <sys/eventfd.h>
#endif
