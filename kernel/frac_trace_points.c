// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The frac authors
 */

#ifndef __CHECKER__
#define CREATE_TRACE_POINTS
#include "frac_trace.h"
#endif
