/* SPDX-License-Identifier: GPL-2.0-only */
/* The exited targets' reports a restart keeps: each written to the state directory when its
 * target exits (targets/target-exited: "exited-<pid>-<exit time>.bin", renamed into place, not
 * fsync'd: it must outlive a daemon, not a machine), removed when its
 * record goes (pruned, detached), read back at start (manager-adopt keeps them). Reads the
 * targets it is given only. */
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "log.h"
#include "manager-report.h"
#include "manager.h"
#include "reach-file.h"
#include "state-file.h"
#include "target-exited.h"
#include "target.h"

static int file_name(const struct target *t, char **ret)
{
        return asprintf(ret, STATE_FILE_EXITED_PREFIX "%d-%" PRIu64 STATE_FILE_EXITED_SUFFIX, (int)t->pid,
                        t->exited_usec) < 0 ? -ENOMEM : 0;
}

/* Whether name is an exited target's file. */
static bool is_exited_file(const char *name)
{
        size_t n = strlen(name), pl = strlen(STATE_FILE_EXITED_PREFIX), sl = strlen(STATE_FILE_EXITED_SUFFIX);

        return n > pl + sl && strncmp(name, STATE_FILE_EXITED_PREFIX, pl) == 0 &&
               strcmp(name + n - sl, STATE_FILE_EXITED_SUFFIX) == 0;
}

/* Its scan at exit (memleakctl run), or why it has none, as its kept report holds it: taken from
 * its tracer while there is one, else kept as it was (read back). -ENOMEM. */
static int keep_exit_scan(struct manager *m, struct target *t)
{
        _cleanup_(reach_scan_result_freep) struct reach_result *reach = NULL;
        _cleanup_free_ char *why = NULL;
        void *data = NULL;
        size_t n = 0;
        int r;

        if (!t->exit_hold && !manager_family_hold(m, t))
                return 0;
        r = manager_report_exit_scan(m, t, &reach, &why);
        if (r < 0)
                return r;
        if (!reach && !why)
                return 0;
        r = reach_file_encode(reach, why, &data, &n);
        if (r < 0)
                return r;
        free(t->exit_scan);
        t->exit_scan = data;
        t->exit_scan_bytes = n;
        return 0;
}

void manager_exited_save(struct manager *m, struct target *t)
{
        _cleanup_free_ char *name = NULL;
        _cleanup_free_ void *data = NULL;
        size_t n = 0;
        int r;

        assert(m);
        assert(t);
        if (!m->pins || t->kernel || !target_phase_exited(t->phase) || t->exited_usec == 0)
                return;
        r = keep_exit_scan(m, t);
        if (r >= 0)
                r = file_name(t, &name);
        if (r >= 0)
                r = target_exited_encode(t, &data, &n);
        if (r >= 0)
                r = state_file_write_bytes(m->config.state_directory, name, data, n, false);
        if (r < 0) {
                m->state_write_failures++;
                log_warning_errno(r, "Cannot write the last report of pid %d (%s) under %s, ignoring: a restart "
                                  "would lose it: %m", (int)t->pid, t->comm, m->config.state_directory);
                return;
        }
        t->exited_saved = true;
}

void manager_exited_forget(struct manager *m, struct target *t)
{
        _cleanup_free_ char *path = NULL, *name = NULL;

        assert(m);
        assert(t);
        if (!t->exited_saved)
                return;
        t->exited_saved = false;
        if (file_name(t, &name) < 0 || asprintf(&path, "%s/%s", m->config.state_directory, name) < 0)
                return (void)log_error_errno(ENOMEM, "Out of memory");
        if (unlink(path) < 0 && errno != ENOENT)
                log_warning_errno(errno, "Cannot remove %s, ignoring: a restart would show pid %d's report "
                                  "again: %m", path, (int)t->pid);
}

/* Set a file that cannot be read back aside, for whoever wants to look at it. */
static void set_aside(struct manager *m, const char *name)
{
        _cleanup_free_ char *from = NULL, *to = NULL;

        if (asprintf(&from, "%s/%s", m->config.state_directory, name) < 0 || asprintf(&to, "%s.corrupt", from) < 0)
                return (void)log_error_errno(ENOMEM, "Out of memory");
        if (rename(from, to) < 0)
                log_warning_errno(errno, "Cannot rename %s to %s: %m", from, to);
        else
                log_warning("Set aside as %s", to);
}

/* The exited target of file name; NULL (logged; a corrupt file set aside) if none. */
static struct target *load_one(struct manager *m, const char *name)
{
        _cleanup_free_ char *data = NULL;
        struct target *t = NULL;
        unsigned unnamed = 0;
        size_t n = 0;
        int r;

        r = state_file_read(m->config.state_directory, name, STATE_FILE_EXITED_MAX_BYTES, &data, &n);
        if (r >= 0)
                r = target_exited_restore(&m->env, data, n, &t, &unnamed);
        if (r >= 0 && t->exit_scan) {
                _cleanup_(reach_scan_result_freep) struct reach_result *reach = NULL;
                _cleanup_free_ char *why = NULL;

                /* its scan at exit, looked into at each report: whole, or the file is not */
                r = reach_file_decode(t->exit_scan, t->exit_scan_bytes, &reach, &why);
                if (r < 0)
                        t = target_free(t);
        }
        if (r == -ENOMEM) {
                log_error_errno(r, "Cannot read back %s/%s: %m", m->config.state_directory, name);
                return NULL;
        }
        if (r < 0) {
                log_warning_errno(r, "Cannot read back the exited target's report %s/%s (%s), ignoring it: %m",
                                  m->config.state_directory, name, r == -EBADMSG ? "corrupt or truncated" : "unreadable");
                if (r == -EBADMSG || r == -EFBIG)
                        set_aside(m, name);
                return NULL;
        }
        if (unnamed > 0)
                log_notice("pid %d (%s), which exited: %u of the files it mapped are no longer the ones at their "
                           "paths (rebuilt, upgraded, removed): its frames there are shown by file and offset",
                           (int)t->pid, t->comm, unnamed);
        t->exited_saved = true;
        return t;
}

static int by_exit_time(const void *a, const void *b)
{
        const struct target *x = *(struct target *const *)a, *y = *(struct target *const *)b;

        return x->exited_usec < y->exited_usec ? -1 : x->exited_usec > y->exited_usec;
}

size_t manager_exited_load(struct manager *m, struct target ***ret)
{
        _cleanup_free_ struct target **loaded = NULL;
        size_t n = 0, room = 0;
        struct dirent *de;
        DIR *d;

        assert(m);
        assert(ret);
        *ret = NULL;
        if (!m->pins || !(d = opendir(m->config.state_directory)))
                return 0;
        while ((de = readdir(d))) {
                struct target *t;

                if (!is_exited_file(de->d_name) || !(t = load_one(m, de->d_name)))
                        continue;
                if (n == room) {
                        struct target **p = realloc(loaded, MAX(room * 2, (size_t)16) * sizeof(*p));

                        if (!p) {
                                t->exited_saved = false;        /* its file stays */
                                target_free(t);
                                log_error_errno(ENOMEM, "Out of memory");
                                break;
                        }
                        loaded = p;
                        room = MAX(room * 2, (size_t)16);
                }
                loaded[n++] = t;
        }
        closedir(d);
        /* in the order they exited: the bounds drop the oldest first */
        if (n > 0) {
                qsort(loaded, n, sizeof(*loaded), by_exit_time);
                log_info("Read back the last reports of %zu targets that exited before this start", n);
        }
        *ret = TAKE_PTR(loaded);
        return n;
}

void manager_exited_forget_all(const char *state_directory)
{
        struct dirent *de;
        DIR *d;

        assert(state_directory);
        d = opendir(state_directory);
        if (!d)
                return;
        while ((de = readdir(d)))
                if (is_exited_file(de->d_name) && unlinkat(dirfd(d), de->d_name, 0) < 0)
                        log_warning_errno(errno, "Cannot remove %s/%s: %m", state_directory, de->d_name);
        closedir(d);
}

