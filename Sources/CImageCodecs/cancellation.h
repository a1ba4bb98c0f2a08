/* Internal: how the codecs ask their caller whether to stop. */
#ifndef SHIFTWORK_CANCELLATION_H
#define SHIFTWORK_CANCELLATION_H

#include "CImageCodecs.h"

/** Rows decoded or encoded between two questions to the caller (a few milliseconds of work at most). */
#define SW_ROWS_PER_CANCEL_CHECK 16

static inline int sw_should_stop(const sw_cancellation *cancel, unsigned row) {
    if (cancel == NULL || cancel->should_stop == NULL || row % SW_ROWS_PER_CANCEL_CHECK != 0) return 0;
    return cancel->should_stop(cancel->context) != 0;
}

/** Asks the caller whether to stop, whatever the row (for work that is not done in rows). */
static inline int sw_should_stop_now(const sw_cancellation *cancel) {
    return cancel != NULL && cancel->should_stop != NULL && cancel->should_stop(cancel->context) != 0;
}

#endif
