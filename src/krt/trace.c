// SPDX-License-Identifier: GPL-2.0
/*
 * krt: the tracepoints of trace.h, defined once here.
 */
#include <linux/module.h>
#include "krt.h"

#define CREATE_TRACE_POINTS
#include "trace.h"
