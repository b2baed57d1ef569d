/* SPDX-License-Identifier: GPL-2.0-only */
/* Logging to stderr with sd-daemon priority prefixes, which journald reads as levels. */
#pragma once

#include <errno.h>
#include <syslog.h>

void log_set_max_level(int level);

/* Log at priority; errno is set from error for %m. Returns -abs(error) (or 0 when error is 0). */
int log_internal(int priority, int error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#define log_debug(...)          log_internal(LOG_DEBUG, 0, __VA_ARGS__)
#define log_info(...)           log_internal(LOG_INFO, 0, __VA_ARGS__)
#define log_notice(...)         log_internal(LOG_NOTICE, 0, __VA_ARGS__)
#define log_warning(...)        log_internal(LOG_WARNING, 0, __VA_ARGS__)
#define log_error(...)          log_internal(LOG_ERR, 0, __VA_ARGS__)
#define log_debug_errno(e, ...)   log_internal(LOG_DEBUG, (e), __VA_ARGS__)
#define log_info_errno(e, ...)    log_internal(LOG_INFO, (e), __VA_ARGS__)
#define log_warning_errno(e, ...) log_internal(LOG_WARNING, (e), __VA_ARGS__)
#define log_error_errno(e, ...)   log_internal(LOG_ERR, (e), __VA_ARGS__)
