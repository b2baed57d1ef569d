/* SPDX-License-Identifier: GPL-2.0-only */
/* A program held at its exit for a reachability scan, by a tracer thread of its own. */
#include <assert.h>
#include <bpf/bpf.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "bpf-loader.h"
#include "code-holds.h"
#include "exit-hold.h"
#include "jit-names.h"
#include "macro.h"
#include "module-map.h"
#include "perf-map.h"
#include "proc-status.h"
#include "proc-tasks.h"
#include "tracee-family.h"
#include "util.h"

/* A program held at its exit is no service waiting: its scan may take this long at least, whatever
 * a live scan's pause limit (reachability_max_pause_ms). */
#define EXIT_SCAN_MIN_MS 5000

/* How long the other threads get to reach their exit stops once one thread exits the process. */
#define OTHERS_STOP_USEC (1000 * 1000)

struct exit_hold {
        pid_t pid;
        struct memleak_bpf *skel;
        struct map_limits limits;
        uint64_t max_pause_ms;
        pthread_t thread;
        bool joined;
        bool hold_children;             /* follow_forks: its children are held at birth until answered */
        /* the tracer thread's own */
        pid_t *tids;                    /* its tracees: the process's threads */
        size_t n_tids, allocated;
        /* shared, under lock */
        pthread_mutex_t lock;
        pthread_cond_t started_cond;
        bool started;                   /* the seize is done (start_error says how) */
        int start_error;
        char *start_message;
        bool stop;                      /* exit_hold_free(): let go */
        bool finished;                  /* the thread is done */
        struct reach_result *result;    /* the scan at exit */
        char *why_none;                 /* finished without a scan: why */
        struct exit_maps maps;          /* what it mapped at its exit; maps.fds NULL until then */
        struct tracee_family family;    /* with hold_children: its children, held or followed */
        struct child_exit *children;    /* under lock: followed children to scan at their exit, and
                                         * the scans of those that exited */
        size_t n_children;
        /* held at new code until its tables are in (bpf/memleak.bpf.c, code_holds): the program
         * and each followed child walked by tables */
        int code_holds_fd;              /* -EBADF: not held there */
        struct code_holds code;         /* under lock */
};

/* A followed child memleakd records exactly: scanned at its exit, as the program is. */
struct child_exit {
        pid_t pid;
        bool execd;                     /* it exec'd: memleakd saw every block of its program */
        bool exited;                    /* done: result or why_none says how */
        struct reach_result *result;
        char *why_none;
};

/* How often the tracer looks for the manager's answers while a child is held. */
#define HOLD_POLL_NSEC (500 * 1000)

/* The signal that interrupts the tracer's waitpid() when it must let go. */
static int wake_signal(void)
{
        return SIGRTMIN + 1;
}

static void on_wake(int sig)
{
}

static bool tracked(const struct exit_hold *h, pid_t tid)
{
        for (size_t i = 0; i < h->n_tids; i++)
                if (h->tids[i] == tid)
                        return true;
        return false;
}

static int track(struct exit_hold *h, pid_t tid)
{
        for (size_t i = 0; i < h->n_tids; i++)
                if (h->tids[i] == tid)
                        return 0;
        if (h->n_tids == h->allocated) {
                size_t want = MAX(h->allocated * 2, (size_t)8);
                pid_t *grown = reallocarray(h->tids, want, sizeof(*grown));

                if (!grown)
                        return -ENOMEM;
                h->tids = grown;
                h->allocated = want;
        }
        h->tids[h->n_tids++] = tid;
        return 0;
}

static void untrack(struct exit_hold *h, pid_t tid)
{
        for (size_t i = 0; i < h->n_tids; i++)
                if (h->tids[i] == tid) {
                        h->tids[i] = h->tids[--h->n_tids];
                        return;
                }
}

static void finish(struct exit_hold *h, struct reach_result *result, const char *why)
{
        pthread_mutex_lock(&h->lock);
        h->result = result;
        if (why && !h->why_none)
                h->why_none = strdup(why);
        pthread_mutex_unlock(&h->lock);
}

static void exit_maps_done(struct exit_maps *m)
{
        for (size_t i = 0; m->fds && i < m->n_fds; i++)
                if (m->fds[i] >= 0)
                        close(m->fds[i]);
        free(m->fds);
        module_map_done(&m->map);
        perf_map_unref(m->perf_map);
        *m = (struct exit_maps) {};
}

/* What the held process maps, and each file open once (at its first mapping): the files it mapped
 * since the manager last read its maps are named from these once it is gone; and its perf map,
 * the names of its JIT code. */
static void capture_maps(struct exit_hold *h)
{
        struct exit_maps m = {};

        if (module_map_refresh(&m.map, h->pid) < 0 || !(m.fds = malloc(MAX(m.map.n, (size_t)1) * sizeof(int)))) {
                exit_maps_done(&m);
                return;
        }
        m.n_fds = m.map.n;
        for (size_t i = 0; i < m.map.n; i++) {
                const struct module_mapping *x = &m.map.mappings[i];
                bool opened = false;

                for (size_t j = 0; j < i && !opened; j++)
                        opened = m.map.mappings[j].dev == x->dev && m.map.mappings[j].ino == x->ino;
                m.fds[i] = opened ? -EEXIST : module_map_open_file(h->pid, x->path, x->dev, x->ino, x->start, x->end);
        }
        if (m.map.n_anon_code > 0)
                (void)jit_names_load(h->pid, &m.perf_map);
        pthread_mutex_lock(&h->lock);
        exit_maps_done(&h->maps);
        h->maps = m;
        pthread_mutex_unlock(&h->lock);
}

/* Seize the process (its threads as /proc lists them: one, for memleakctl run's program held
 * before its exec). */
static int seize(struct exit_hold *h)
{
        const long options = PTRACE_O_TRACEEXIT | PTRACE_O_TRACECLONE |
                             (h->hold_children ? PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACEEXEC : 0);
        char path[64];
        DIR *d;
        struct dirent *de;
        int r = 0;

        snprintf(path, sizeof(path), "/proc/%d/task", (int)h->pid);
        d = opendir(path);
        if (!d)
                return errno == ENOENT ? -ESRCH : -errno;
        while ((de = readdir(d)) && r >= 0) {
                char *end;
                long tid = strtol(de->d_name, &end, 10);

                if (*end || tid <= 0)
                        continue;
                if (ptrace(PTRACE_SEIZE, (pid_t)tid, NULL, (void *)options) < 0) {
                        if (errno != ESRCH)
                                r = -errno;
                        continue;
                }
                r = track(h, (pid_t)tid);
        }
        closedir(d);
        if (r >= 0 && h->n_tids == 0)
                r = -ESRCH;
        return r;
}

/* The process is exiting and tid is at its exit stop: wait for the others of tids[] to reach
 * theirs (those gone are taken out of tids[]), read every held thread's registers. Returns how
 * many are held in held[]. */
static size_t hold_all(pid_t *tids, size_t *n_tids, pid_t tid, struct thread_state *held)
{
        uint64_t deadline = now_monotonic_usec() + OTHERS_STOP_USEC;
        size_t n = 0, waiting;

        if (process_stop_read_thread(tid, &held[n]) >= 0)
                n++;
        do {
                waiting = 0;
                for (size_t i = 0; i < *n_tids; i++) {
                        pid_t t = tids[i];
                        bool done = t == tid;
                        int status = 0;
                        pid_t r;

                        for (size_t k = 0; k < n && !done; k++)
                                done = held[k].tid == t;
                        if (done)
                                continue;
                        r = waitpid(t, &status, __WALL | WNOHANG);
                        if (r == 0 || (r < 0 && errno == EINTR)) {
                                waiting++;
                                continue;
                        }
                        if (r < 0 || WIFEXITED(status) || WIFSIGNALED(status)) {
                                tids[i--] = tids[--*n_tids];
                                continue;
                        }
                        if ((status >> 16) == PTRACE_EVENT_EXIT && process_stop_read_thread(t, &held[n]) >= 0) {
                                n++;
                                continue;
                        }
                        (void)ptrace(PTRACE_CONT, t, NULL, NULL);       /* on to its exit */
                        waiting++;
                }
                if (waiting > 0)
                        (void)nanosleep(&(struct timespec) { .tv_nsec = 200 * 1000 }, NULL);
        } while (waiting > 0 && now_monotonic_usec() < deadline);
        return n;
}

/* Whether tid's exit (at its exit stop) ends the process: exit_group() or a fatal signal, not one
 * thread's exit() while others live. */
static bool exit_ends_process(const struct exit_hold *h, pid_t tid)
{
        struct thread_state s;

        if (h->n_tids <= 1 || process_stop_read_thread(tid, &s) < 0)
                return true;
        return s.regs[15] != SYS_exit;          /* orig_rax: the system call it is in */
}

static void scan_at_exit(struct exit_hold *h, pid_t tid)
{
        _cleanup_free_ struct thread_state *held = calloc(h->n_tids + 1, sizeof(*held));
        struct reach_result *result = calloc(1, sizeof(*result));
        uint64_t paused_from = now_monotonic_usec();
        size_t n;

        if (!held || !result) {
                free(result);
                finish(h, NULL, "out of memory for the scan at exit");
                return;
        }
        n = hold_all(h->tids, &h->n_tids, tid, held);
        capture_maps(h);
        result->at_exit = true;
        if (reach_scan(h->skel, &h->limits, h->pid, tid, held, n, paused_from,
                       MAX(h->max_pause_ms, (uint64_t)EXIT_SCAN_MIN_MS), true, result) < 0) {
                reach_scan_result_free(result);
                finish(h, NULL, "out of memory for the scan at exit");
        } else {
                result->paused_usec = now_monotonic_usec() - paused_from;
                result->longest_pause_usec = result->paused_usec;
                finish(h, result, NULL);
        }
        for (size_t i = 0; i < n; i++)
                (void)ptrace(PTRACE_DETACH, held[i].tid, NULL, NULL);
}

/* pid is no longer held at new code (gone, or let go): out of BPF's code_holds (under lock). */
static void code_process_gone(struct exit_hold *h, pid_t pid)
{
        if (!code_holds_has_process(&h->code, pid))
                return;
        code_holds_forget_process(&h->code, pid);
        if (h->code_holds_fd >= 0)
                (void)bpf_map_delete_elem(h->code_holds_fd, &(__u32){ (__u32)pid });
}

/* The entry of pid, a followed child to scan at its exit, or NULL (under lock). */
static struct child_exit *child_exit_find(struct exit_hold *h, pid_t pid)
{
        for (size_t i = 0; i < h->n_children; i++)
                if (h->children[i].pid == pid)
                        return &h->children[i];
        return NULL;
}

static void child_exit_done(struct child_exit *c)
{
        reach_scan_result_free(c->result);
        free(c->why_none);
        *c = (struct child_exit) {};
}

/* A followed child's exit scan, or why it has none, once it is done with (under lock). */
static void child_exit_finish(struct exit_hold *h, pid_t pid, struct reach_result *result, const char *why)
{
        struct child_exit *c = child_exit_find(h, pid);

        if (!c || c->exited) {
                reach_scan_result_free(result);
                return;
        }
        c->exited = true;
        c->result = result;
        if (why)
                c->why_none = strdup(why);      /* NULL on ENOMEM: its report gives a reason of its own */
}

/* A followed child to scan, pid, is exiting and its thread tid is at its exit stop: hold its
 * threads there, scan it as the program is, keep the scan for the manager and let it go. */
static void scan_child_at_exit(struct exit_hold *h, pid_t pid, pid_t tid, bool execd)
{
        _cleanup_free_ pid_t *tids = NULL, *all = NULL;
        _cleanup_free_ struct thread_state *held = NULL;
        struct reach_result *result = NULL;
        uint64_t paused_from = now_monotonic_usec();
        size_t n_tids = 0, n_all, n = 0;
        const char *why = NULL;

        if (proc_tasks_list(pid, &tids, &n_tids) < 0 || n_tids == 0) {
                free(tids);
                tids = malloc(sizeof(*tids));
                if (tids) {
                        tids[0] = tid;
                        n_tids = 1;
                }
        }
        n_all = n_tids;
        all = tids ? malloc(MAX(n_tids, (size_t)1) * sizeof(*all)) : NULL;
        held = calloc(n_tids + 1, sizeof(*held));
        result = calloc(1, sizeof(*result));
        if (!tids || !all || !held || !result) {
                why = "out of memory for the scan at exit";
                reach_scan_result_free(TAKE_PTR(result));
                if (tids)
                        (void)ptrace(PTRACE_DETACH, tid, NULL, NULL);
        } else {
                memcpy(all, tids, n_tids * sizeof(*all));
                n = hold_all(tids, &n_tids, tid, held);
                result->at_exit = true;
                /* a child that exec'd was held at its birth until memleakd followed it, and BPF
                 * forgot the blocks of its old program at the exec: every block of its program is
                 * known; one that did not holds its parent's, memleakd never saw them made */
                if (reach_scan(h->skel, &h->limits, pid, tid, held, n, paused_from,
                               MAX(h->max_pause_ms, (uint64_t)EXIT_SCAN_MIN_MS), execd, result) < 0) {
                        why = "out of memory for the scan at exit";
                        reach_scan_result_free(TAKE_PTR(result));
                } else {
                        result->paused_usec = now_monotonic_usec() - paused_from;
                        result->longest_pause_usec = result->paused_usec;
                }
        }
        /* kept before it is let go, as the program's is: its exit, which the manager sees next
         * (and writes its report at), finds its scan there */
        pthread_mutex_lock(&h->lock);
        child_exit_finish(h, pid, result, why);
        pthread_mutex_unlock(&h->lock);
        for (size_t i = 0; i < n; i++)
                (void)ptrace(PTRACE_DETACH, held[i].tid, NULL, NULL);
        pthread_mutex_lock(&h->lock);
        /* let go: its threads are no tracees any longer */
        for (size_t i = 0; all && i < n_all; i++)
                tracee_family_forget(&h->family, all[i]);
        if (!all)
                tracee_family_forget(&h->family, tid);
        code_process_gone(h, pid);
        pthread_mutex_unlock(&h->lock);
}

/* Whether a member's stop is the exit of a followed child to scan, pid (its exit_group(), a fatal
 * signal or its last thread's exit); *execd: whether it exec'd. */
static bool child_exit_to_scan(struct exit_hold *h, pid_t tid, int status, pid_t *pid, bool *execd)
{
        struct child_exit *c;
        struct thread_state s;
        int tgid = 0, threads = 0;
        bool found;

        if ((status >> 16) != PTRACE_EVENT_EXIT || proc_status_int(tid, "Tgid:", &tgid) < 0 || tgid <= 0)
                return false;
        pthread_mutex_lock(&h->lock);
        c = child_exit_find(h, tgid);
        found = c && !c->exited;
        *execd = found && c->execd;
        pthread_mutex_unlock(&h->lock);
        if (!found)
                return false;
        *pid = tgid;
        if (proc_status_int(tid, "Threads:", &threads) < 0 || threads <= 1 ||
            process_stop_read_thread(tid, &s) < 0)
                return true;
        return s.regs[15] != SYS_exit;          /* orig_rax: one thread's exit() while others live */
}

/* A member's exec (its tid now its process's): memleakd knows every block of its new program. */
static void child_execd(struct exit_hold *h, pid_t tid)
{
        struct child_exit *c;

        pthread_mutex_lock(&h->lock);
        c = child_exit_find(h, tid);
        if (c && !c->exited)
                c->execd = true;
        pthread_mutex_unlock(&h->lock);
}

static bool stopping(struct exit_hold *h);

/* Settle the held children the manager answered for (or that waited too long): a followed one
 * goes on, a member of the family; the others are let go. */
static void settle_children(struct exit_hold *h)
{
        uint64_t now = now_monotonic_usec();

        pthread_mutex_lock(&h->lock);
        for (size_t i = 0; i < h->family.n_held;) {
                pid_t pid = h->family.held[i].pid;
                enum tracee_family_verdict v;

                if (tracee_family_decide(&h->family, i, now, &v) < 0)
                        v = TRACEE_FAMILY_LET_GO;
                if (v == TRACEE_FAMILY_WAIT) {
                        i++;
                        continue;
                }
                tracee_family_unhold(&h->family, i);
                (void)ptrace(v == TRACEE_FAMILY_MEMBER ? PTRACE_CONT : PTRACE_DETACH, pid, NULL, NULL);
        }
        pthread_mutex_unlock(&h->lock);
}

static void settle_code_holds(struct exit_hold *h, bool all);

/* waitpid() for any tracee: blocking, or polling while children are held at their birth or
 * threads at new code (their time runs, their answers come). */
static pid_t wait_any(struct exit_hold *h, int *status)
{
        for (;;) {
                bool holding;
                pid_t tid;

                settle_children(h);
                settle_code_holds(h, false);
                pthread_mutex_lock(&h->lock);
                holding = h->family.n_held > 0 || h->code.n_held > 0;
                pthread_mutex_unlock(&h->lock);
                if (!holding)
                        return waitpid(-1, status, __WALL | __WNOTHREAD);
                tid = waitpid(-1, status, __WALL | __WNOTHREAD | WNOHANG);
                if (tid != 0)
                        return tid;
                if (stopping(h)) {
                        errno = EINTR;
                        return -1;
                }
                (void)nanosleep(&(struct timespec) { .tv_nsec = HOLD_POLL_NSEC }, NULL);
        }
}

enum stop_of {
        STOP_OF_PROGRAM,        /* one of the program's threads */
        STOP_OF_MEMBER,         /* a followed child's: passed through */
        STOP_OF_HELD,           /* a child's first: it stays stopped until the manager answers */
};

/* Whose stop it is; a thread seen for the first time is sorted out here. */
static enum stop_of stop_of(struct exit_hold *h, pid_t tid)
{
        enum stop_of r = STOP_OF_HELD;
        int tgid = 0;

        if (tracked(h, tid) || !h->hold_children)
                return STOP_OF_PROGRAM;
        pthread_mutex_lock(&h->lock);
        if (tracee_family_is_member(&h->family, tid))
                r = STOP_OF_MEMBER;
        else if (!tracee_family_is_held(&h->family, tid)) {
                (void)proc_status_int(tid, "Tgid:", &tgid);
                if (tgid == h->pid)
                        r = STOP_OF_PROGRAM;                                    /* a new thread */
                else if (tgid != tid && tracee_family_is_member(&h->family, tgid) &&
                         tracee_family_add_member(&h->family, tid) >= 0)
                        r = STOP_OF_MEMBER;                                     /* a member's new thread */
                else if (tracee_family_hold(&h->family, tid, now_monotonic_usec()) < 0)
                        (void)ptrace(PTRACE_DETACH, tid, NULL, NULL);
        }
        pthread_mutex_unlock(&h->lock);
        return r;
}

/* A stop that is not the program's exit: passed on as it came. */
static void pass_through(pid_t tid, int status)
{
        int event = status >> 16, sig = WSTOPSIG(status);

        if (event == PTRACE_EVENT_STOP) {
                /* a job-control stop stays one (SIGCONT ends it); a new thread's first stop, or an
                 * interrupt, just goes on */
                if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU)
                        (void)ptrace(PTRACE_LISTEN, tid, NULL, NULL);
                else
                        (void)ptrace(PTRACE_CONT, tid, NULL, NULL);
        } else if (event == 0) {
                /* a signal on its way to the program: delivered as it was */
                (void)ptrace(PTRACE_CONT, tid, NULL, (void *)(uintptr_t)sig);
        } else {
                (void)ptrace(PTRACE_CONT, tid, NULL, NULL);     /* exits, forks, clones */
        }
}

static bool stopping(struct exit_hold *h);

/* Whether a signal-delivery stop is BPF's SIGURG for new code (its count of them for the
 * process is past those the tracer took), not the program's own: then tid is held until the
 * manager says the tables of what it mapped are in (settle_code_holds()). */
static bool hold_for_code(struct exit_hold *h, pid_t tid, int status)
{
        siginfo_t si;
        __u64 sent = 0;
        int tgid = 0;
        bool held = false;

        if (h->code_holds_fd < 0 || (status >> 16) != 0 || WSTOPSIG(status) != SIGURG ||
            ptrace(PTRACE_GETSIGINFO, tid, NULL, &si) < 0 || si.si_code != SI_KERNEL)
                return false;
        if (tracked(h, tid))
                tgid = h->pid;
        else if (proc_status_int(tid, "Tgid:", &tgid) < 0 || tgid <= 0)
                return false;
        if (bpf_map_lookup_elem(h->code_holds_fd, &(__u32){ (__u32)tgid }, &sent) < 0)
                return false;
        pthread_mutex_lock(&h->lock);
        if (code_holds_take_signal(&h->code, tgid, sent)) {
                held = true;
                /* without room to hold it, it goes on at once (the signal taken away all the same) */
                if (code_holds_hold(&h->code, tid, tgid, now_monotonic_usec()) < 0)
                        (void)ptrace(PTRACE_CONT, tid, NULL, NULL);
        }
        pthread_mutex_unlock(&h->lock);
        return held;
}

/* Let the threads held at new code go whose tables are in (or that waited too long; all of them
 * when letting go), without the signal that stopped them. */
static void settle_code_holds(struct exit_hold *h, bool all)
{
        uint64_t now = now_monotonic_usec();

        pthread_mutex_lock(&h->lock);
        for (size_t i = 0; i < h->code.n_held;) {
                pid_t tid = h->code.held[i].tid;

                if (!all && !code_holds_due(&h->code, i, now)) {
                        i++;
                        continue;
                }
                code_holds_unhold(&h->code, i, now);
                (void)ptrace(PTRACE_CONT, tid, NULL, NULL);
        }
        pthread_mutex_unlock(&h->lock);
}

static bool stopping(struct exit_hold *h)
{
        bool stop;

        pthread_mutex_lock(&h->lock);
        stop = h->stop;
        pthread_mutex_unlock(&h->lock);
        return stop;
}

/* Pass every stop through until the process exits. */
static void trace(struct exit_hold *h)
{
        while (!stopping(h)) {
                int status = 0;
                pid_t tid = wait_any(h, &status);

                if (tid < 0) {
                        if (errno == EINTR)
                                continue;
                        finish(h, NULL, "it was not held at its exit (killed by SIGKILL, or it exec'd a "
                               "program memleakd cannot follow?)");
                        return;
                }
                if (WIFEXITED(status) || WIFSIGNALED(status)) {
                        pthread_mutex_lock(&h->lock);
                        /* a child gone unscanned (a SIGKILL that came while it was at another
                         * stop ends it with no exit stop): say so (a scanned one's entry is done) */
                        if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
                                child_exit_finish(h, tid, NULL, "it was killed by SIGKILL before memleakd could "
                                                  "hold it at its exit");
                        tracee_family_forget(&h->family, tid);
                        code_holds_forget_thread(&h->code, tid);
                        if (tid != h->pid)
                                code_process_gone(h, tid);      /* a child's last */
                        pthread_mutex_unlock(&h->lock);
                        untrack(h, tid);
                        continue;
                }
                if (!WIFSTOPPED(status))
                        continue;
                /* a thread held at new code stops again only when something ended that stop (a
                 * SIGKILL, its process's exit): it is no longer held there */
                pthread_mutex_lock(&h->lock);
                code_holds_forget_thread(&h->code, tid);
                pthread_mutex_unlock(&h->lock);
                switch (stop_of(h, tid)) {
                case STOP_OF_HELD:
                        continue;
                case STOP_OF_MEMBER: {
                        pid_t pid;
                        bool execd;

                        if (child_exit_to_scan(h, tid, status, &pid, &execd)) {
                                scan_child_at_exit(h, pid, tid, execd);
                                continue;
                        }
                        if ((status >> 16) == PTRACE_EVENT_EXEC)
                                child_execd(h, tid);
                        if (hold_for_code(h, tid, status))
                                continue;
                        pass_through(tid, status);
                        continue;
                }
                case STOP_OF_PROGRAM:
                        break;
                }
                (void)track(h, tid);
                if ((status >> 16) == PTRACE_EVENT_EXIT && exit_ends_process(h, tid)) {
                        scan_at_exit(h, tid);
                        return;
                }
                if (hold_for_code(h, tid, status))
                        continue;
                pass_through(tid, status);
        }
}

static void *hold_thread(void *userdata)
{
        struct exit_hold *h = userdata;
        sigset_t wake;
        int r;

        (void)sigemptyset(&wake);
        (void)sigaddset(&wake, wake_signal());
        (void)pthread_sigmask(SIG_UNBLOCK, &wake, NULL);
        r = seize(h);
        /* from now on held at the new code it maps (BPF sends SIGURG, the tracer holds the stop) */
        pthread_mutex_lock(&h->lock);
        if (r >= 0 && h->code_holds_fd >= 0 &&
            (code_holds_add_process(&h->code, h->pid) < 0 ||
             bpf_map_update_elem(h->code_holds_fd, &(__u32){ (__u32)h->pid }, &(__u64){ 0 }, BPF_ANY) < 0)) {
                code_holds_forget_process(&h->code, h->pid);
                h->code_holds_fd = -EBADF;
        }
        h->started = true;
        h->start_error = r < 0 ? r : 0;
        pthread_cond_signal(&h->started_cond);
        pthread_mutex_unlock(&h->lock);
        if (r >= 0)
                trace(h);
        /* a SIGURG BPF sends from now on reaches the program (or a child), which ignores it unless
         * it handles it (no stop of it is held any longer); those held go on */
        settle_code_holds(h, true);
        pthread_mutex_lock(&h->lock);
        while (h->code.n_processes > 0)
                code_process_gone(h, h->code.processes[0].pid);
        h->finished = true;
        pthread_mutex_unlock(&h->lock);
        /* returning detaches whatever it still traces */
        return NULL;
}

int exit_hold_start(pid_t pid, struct memleak_bpf *skel, const struct map_limits *lim, uint64_t max_pause_ms,
                    bool hold_children, bool hold_code, struct exit_hold **ret, char **error)
{
        struct exit_hold *h = calloc(1, sizeof(*h));
        struct sigaction sa = { .sa_handler = on_wake };        /* no SA_RESTART: waitpid() returns */
        sigset_t block, saved;
        int r;

        assert(ret);
        assert(error);
        if (!h)
                return -ENOMEM;
        *h = (struct exit_hold) { .pid = pid, .skel = skel, .limits = *lim, .max_pause_ms = max_pause_ms,
                                  .hold_children = hold_children,
                                  .code_holds_fd = hold_code ? bpf_loader_code_holds_fd(skel) : -EBADF };
        pthread_mutex_init(&h->lock, NULL);
        pthread_cond_init(&h->started_cond, NULL);
        (void)sigemptyset(&sa.sa_mask);
        (void)sigaction(wake_signal(), &sa, NULL);
        /* only the tracer takes the wake signal */
        (void)sigemptyset(&block);
        (void)sigaddset(&block, wake_signal());
        (void)pthread_sigmask(SIG_BLOCK, &block, &saved);
        r = -pthread_create(&h->thread, NULL, hold_thread, h);
        (void)pthread_sigmask(SIG_SETMASK, &saved, NULL);
        if (r < 0) {
                h->joined = true;
                exit_hold_free(h);
                return r;
        }
        pthread_mutex_lock(&h->lock);
        while (!h->started)
                pthread_cond_wait(&h->started_cond, &h->lock);
        r = h->start_error;
        pthread_mutex_unlock(&h->lock);
        if (r < 0) {
                (void)asprintf(error, "cannot trace pid %d to hold it at its exit: %s", (int)pid, strerror(-r));
                exit_hold_free(h);
                return r;
        }
        *ret = h;
        return 0;
}

int exit_hold_result(struct exit_hold *h, struct reach_result **ret, char **why)
{
        int r = 0;

        assert(h);
        assert(ret);
        assert(why);
        *why = NULL;
        pthread_mutex_lock(&h->lock);
        if (h->result)
                r = reach_scan_result_copy(h->result, ret) < 0 ? -ENOMEM : 1;
        else if (h->finished && h->why_none && !(*why = strdup(h->why_none)))
                r = -ENOMEM;
        pthread_mutex_unlock(&h->lock);
        return r;
}

int exit_hold_take_maps(struct exit_hold *h, struct exit_maps *ret)
{
        int r = 0;

        assert(h);
        assert(ret);
        *ret = (struct exit_maps) {};
        pthread_mutex_lock(&h->lock);
        if (h->maps.fds) {
                *ret = h->maps;
                h->maps = (struct exit_maps) {};
                r = 1;
        }
        pthread_mutex_unlock(&h->lock);
        return r;
}

void exit_hold_maps_done(struct exit_maps *m)
{
        assert(m);
        exit_maps_done(m);
}

void exit_hold_tables_ready(struct exit_hold *h, pid_t pid, unsigned n)
{
        if (!h || n == 0)
                return;
        pthread_mutex_lock(&h->lock);
        code_holds_ready(&h->code, pid, n);
        pthread_mutex_unlock(&h->lock);
        /* the tracer polls while any thread is held: no wake needed */
}

void exit_hold_release_code(struct exit_hold *h, pid_t pid)
{
        assert(h);
        pthread_mutex_lock(&h->lock);
        if (!h->finished && code_holds_has_process(&h->code, pid)) {
                code_holds_release_process(&h->code, pid);      /* its entry stays until it exits */
                if (h->code_holds_fd >= 0)
                        (void)bpf_map_delete_elem(h->code_holds_fd, &(__u32){ (__u32)pid });
        }
        pthread_mutex_unlock(&h->lock);
}

/* pid is followed, to be scanned at its exit: an entry of its own (an earlier process of that pid's
 * dropped). -ENOMEM (under lock). */
static int child_exit_add(struct exit_hold *h, pid_t pid)
{
        struct child_exit *c = child_exit_find(h, pid), *grown;

        if (c) {
                child_exit_done(c);
                c->pid = pid;
                return 0;
        }
        grown = reallocarray(h->children, h->n_children + 1, sizeof(*grown));
        if (!grown)
                return -ENOMEM;
        h->children = grown;
        h->children[h->n_children++] = (struct child_exit) { .pid = pid };
        return 0;
}

void exit_hold_answer_child(struct exit_hold *h, pid_t child, bool followed, bool scan, bool hold_code)
{
        struct child_exit *c;
        int r;

        assert(h);
        pthread_mutex_lock(&h->lock);
        /* before it goes on: held at its execs and new code from its first instruction (an earlier
         * process of that pid's entry dropped) */
        if (!h->finished) {
                code_process_gone(h, child);
                if (followed && hold_code && h->code_holds_fd >= 0 &&
                    code_holds_add_process(&h->code, child) >= 0 &&
                    bpf_map_update_elem(h->code_holds_fd, &(__u32){ (__u32)child }, &(__u64){ 0 }, BPF_ANY) < 0)
                        code_holds_forget_process(&h->code, child);     /* (BPF's map full) */
        }
        if (!h->finished && followed && scan)
                (void)child_exit_add(h, child); /* without room: no scan, its report says why */
        else if (!h->finished && (c = child_exit_find(h, child))) {
                /* an earlier process of that pid's: not this one's */
                child_exit_done(c);
                *c = h->children[--h->n_children];
        }
        r = h->finished ? 0 : tracee_family_answer(&h->family, child, followed);
        pthread_mutex_unlock(&h->lock);
        /* without room for the answer, the child waits TRACEE_FAMILY_HOLD_MAX_USEC and goes */
        if (r >= 0)
                (void)pthread_kill(h->thread, wake_signal());
}

int exit_hold_child_result(struct exit_hold *h, pid_t child, struct reach_result **ret, char **why)
{
        const struct child_exit *c;
        int r = 0;

        assert(h);
        assert(ret);
        assert(why);
        *ret = NULL;
        *why = NULL;
        pthread_mutex_lock(&h->lock);
        c = child_exit_find(h, child);
        if (c && c->result)
                r = reach_scan_result_copy(c->result, ret) < 0 ? -ENOMEM : 1;
        else if (c && c->exited)
                r = (*why = strdup(c->why_none ?: "out of memory for the scan at exit")) ? 1 : -ENOMEM;
        else if (c && h->finished)
                r = (*why = strdup("it was still running when the program memleakctl run started exited: "
                                   "memleakd let it go then, unscanned")) ? 1 : -ENOMEM;
        pthread_mutex_unlock(&h->lock);
        return r;
}

struct exit_hold *exit_hold_free(struct exit_hold *h)
{
        if (!h)
                return NULL;
        if (!h->joined) {
                struct timespec t;
                bool done = false;

                pthread_mutex_lock(&h->lock);
                h->stop = true;
                pthread_mutex_unlock(&h->lock);
                /* again and again: the signal may come just before it enters waitpid() */
                while (!done) {
                        (void)pthread_kill(h->thread, wake_signal());
                        (void)clock_gettime(CLOCK_REALTIME, &t);
                        t.tv_nsec += 20 * 1000 * 1000;
                        if (t.tv_nsec >= 1000000000) {
                                t.tv_sec++;
                                t.tv_nsec -= 1000000000;
                        }
                        done = pthread_timedjoin_np(h->thread, NULL, &t) == 0;
                }
        }
        pthread_mutex_destroy(&h->lock);
        pthread_cond_destroy(&h->started_cond);
        tracee_family_done(&h->family);
        code_holds_done(&h->code);
        for (size_t i = 0; i < h->n_children; i++)
                child_exit_done(&h->children[i]);
        free(h->children);
        reach_scan_result_free(h->result);
        exit_maps_done(&h->maps);
        free(h->why_none);
        free(h->tids);
        free(h);
        return NULL;
}
