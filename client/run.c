/* SPDX-License-Identifier: MIT */
/* memleakctl run: start a program held before its exec until memleakd traces it, pass the
 * terminal and signals through, print its leak report when it exits, and exit as it did. */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "commands.h"
#include "connection.h"
#include "gate-options.h"
#include "json-util.h"
#include "pprof-export.h"
#include "render-folded.h"
#include "macro.h"
#include "protocol.h"
#include "render-gate.h"
#include "render.h"
#include "reply-fields.h"
#include "text-safe.h"

/* Exit statuses of their own, as env(1), nice(1) and timeout(1) have them; otherwise CMD's. */
#define RUN_EXIT_FAILURE        125     /* memleakctl or memleakd failed: CMD did not run */
#define RUN_EXIT_CANNOT_INVOKE  126     /* CMD is not executable, or not an ELF program */
#define RUN_EXIT_NOT_FOUND      127     /* CMD does not exist */

#define HOLD_GO 'g'                     /* the byte that releases the held child */

enum {
        ARG_MIN_SIZE = 0x100,
        ARG_UNTRACED_OK,
        ARG_MMAP,
        ARG_UNWIND,
        ARG_FOLLOW_FORKS,
        ARG_NO_REACHABILITY,
        ARG_SAMPLE_BYTES,
        ARG_FORMAT,
};

/* The signals forwarded to CMD. */
static const int forwarded_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

struct run_options {
        struct memleak_request attach;  /* pid and exec filled in once the child exists */
        uint64_t top;
        bool top_given;
        bool json;
        enum run_format { RUN_FORMAT_TEXT, RUN_FORMAT_JSON, RUN_FORMAT_FOLDED, RUN_FORMAT_PPROF } format;
        const char *output_path;
        bool untraced_ok;
        struct gate_options gate;       /* --error-exitcode, --fail-on, --suppressions */
        char **command;                 /* CMD ARGS..., NULL-terminated (argv's tail) */
};

struct run_state {
        const struct ctl_context *ctx;
        const struct run_options *o;
        FILE *out;                      /* the report's stream: stderr or --output */
        struct sigaction saved[ELEMENTSOF(forwarded_signals)];
        sigset_t saved_mask;
};

static volatile sig_atomic_t child_pid = 0;     /* > 0 once CMD may run: signals go to it */
static volatile sig_atomic_t stop_signal = 0;   /* a signal that came while CMD was held */

static void on_forwarded_signal(int sig, siginfo_t *info, void *context)
{
        /* A signal the terminal sent to the whole foreground process group reached CMD too
         * (it shares ours): only what was sent to memleakctl alone is passed on. */
        if (child_pid > 0) {
                if (info->si_code != SI_KERNEL)
                        (void)kill((pid_t)child_pid, sig);
        } else
                stop_signal = sig;
}

/* One line on stderr, or the JSON error on the report's stream with --json. */
static void run_error(const struct run_state *s, int error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void run_error(const struct run_state *s, int error, const char *fmt, ...)
{
        _cleanup_free_ char *message = NULL;
        va_list ap;

        va_start(ap, fmt);
        if (vasprintf(&message, fmt, ap) < 0)
                message = NULL;
        va_end(ap);
        if (s->o->json && s->out) {
                (void)render_error_json(s->out, error, message);
                (void)fflush(s->out);
        } else {
                _cleanup_free_ char *safe = message ? text_escape_controls(message) : NULL;

                fprintf(stderr, "memleakctl: run: %s\n", safe ? safe : message ? message : strerror(error));
        }
}

/* execvp's search, done here so that the daemon is told the file that will run: a name with a
 * slash is a path, others are looked up in $PATH. Returns 0 and the absolute path, -ENOENT,
 * -EACCES (not an executable file) or -ENOEXEC (not ELF: a script is run through its interpreter,
 * which the daemon would have to plan for instead). */
static int resolve_command(const char *name, char **ret)
{
        _cleanup_free_ char *found = NULL;
        unsigned char magic[4];
        _cleanup_close_ int fd = -1;
        struct stat st;
        int error = -ENOENT;

        if (!*name)
                return -ENOENT;
        if (strchr(name, '/')) {
                found = strdup(name);
                if (!found)
                        return -ENOMEM;
        } else {
                const char *path = getenv("PATH");

                for (const char *p = path ? path : "/usr/local/bin:/usr/bin:/bin"; p; ) {
                        size_t len = strcspn(p, ":");
                        _cleanup_free_ char *candidate = NULL;

                        if (asprintf(&candidate, "%.*s%s%s", (int)len, len ? p : ".", "/", name) < 0)
                                return -ENOMEM;
                        p = p[len] ? p + len + 1 : NULL;
                        if (stat(candidate, &st) < 0 || !S_ISREG(st.st_mode))
                                continue;
                        if (access(candidate, X_OK) < 0) {
                                error = -EACCES;
                                continue;
                        }
                        found = TAKE_PTR(candidate);
                        break;
                }
                if (!found)
                        return error;
        }
        if (stat(found, &st) < 0)
                return errno == ENOENT || errno == ENOTDIR ? -ENOENT : -errno;
        if (!S_ISREG(st.st_mode) || access(found, X_OK) < 0)
                return -EACCES;
        fd = open(found, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (read(fd, magic, sizeof(magic)) != (ssize_t)sizeof(magic) || memcmp(magic, "\177ELF", 4) != 0)
                return -ENOEXEC;
        return ctl_make_absolute(found, ret);
}

/* Catch the forwarded signals (they reach CMD once it runs); the child puts back what was. */
static void install_signal_handlers(struct run_state *s)
{
        struct sigaction sa = { .sa_sigaction = on_forwarded_signal, .sa_flags = SA_SIGINFO | SA_RESTART };

        (void)sigemptyset(&sa.sa_mask);
        (void)sigprocmask(SIG_SETMASK, NULL, &s->saved_mask);
        for (size_t i = 0; i < ELEMENTSOF(forwarded_signals); i++)
                (void)sigaction(forwarded_signals[i], &sa, &s->saved[i]);
}

/* The forked child: dies with memleakctl, waits for the go byte, then becomes CMD. Only
 * async-signal-safe calls here: the parent's state is a copy. */
static void __attribute__((noreturn)) run_child(const struct run_state *s, pid_t parent, int hold_fd,
                                                int exec_error_fd, const char *path)
{
        char go = 0;
        ssize_t n;
        int e;

        /* Before waiting: if memleakctl dies from here on, so does this child; if it already
         * died, the parent is no longer the one that forked us. */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
                _exit(RUN_EXIT_FAILURE);
        for (size_t i = 0; i < ELEMENTSOF(forwarded_signals); i++)
                (void)sigaction(forwarded_signals[i], &s->saved[i], NULL);
        (void)sigprocmask(SIG_SETMASK, &s->saved_mask, NULL);
        do
                n = read(hold_fd, &go, 1);
        while (n < 0 && errno == EINTR);
        /* EOF: memleakctl gave up (or died) without releasing us: CMD must not run untraced. */
        if (n != 1 || go != HOLD_GO)
                _exit(RUN_EXIT_FAILURE);
        close(hold_fd);
        execv(path, s->o->command);
        e = errno;
        (void)!write(exec_error_fd, &e, sizeof(e));
        _exit(e == ENOENT ? RUN_EXIT_NOT_FOUND : RUN_EXIT_CANNOT_INVOKE);
}

/* One request on a connection of its own. */
static int call(const struct ctl_context *ctx, int fd, const struct memleak_request *req, cJSON **ret_reply,
                char **ret_error)
{
        _cleanup_close_ int own = -1;

        if (fd < 0) {
                own = fd = connection_open(ctx->socket_path);
                if (fd < 0)
                        return fd;
        }
        return connection_call(fd, req, CONNECTION_TIMEOUT_MS, ret_reply, ret_error);
}

static const char *daemon_error(const struct ctl_context *ctx, int r, const char *message, char **buf)
{
        if (message)
                return message;
        *buf = connection_open_error(ctx->socket_path, r);
        return *buf ? *buf : strerror(-r);
}

/* A profile, and folded stacks: every stack unless --top said otherwise (tools make their own). */
static bool whole(const struct run_options *o)
{
        return !o->top_given && (o->format == RUN_FORMAT_PPROF || o->format == RUN_FORMAT_FOLDED);
}

/* Ask for CMD's report now that it exited (its zombie keeps the pid ours), apply the gate and the
 * suppressions to it and print it. Returns the gate's exit status (CTL_EXIT_OK without a gate or
 * when it passed), or -errno. */
static int print_report(const struct run_state *s, pid_t pid)
{
        /* a gate judges every stack, not the top ones: they are folded here, after it */
        struct memleak_request req = { .cmd = MEMLEAK_CMD_REPORT, .has_pid = true, .pid = pid,
                                       .top = gate_options_active(&s->o->gate) || whole(s->o) ? MEMLEAK_MAX_TOP
                                                                                          : s->o->top,
                                       .children = s->o->attach.follow_forks };
        _cleanup_json_ cJSON *reply = NULL;
        _cleanup_free_ char *error = NULL, *buf = NULL;
        struct gate_result gate = {};
        cJSON *report;
        int r;

        r = call(s->ctx, -1, &req, &reply, &error);
        if (r < 0) {
                run_error(s, -r, "cannot get the report of pid %d: %s", (int)pid,
                          daemon_error(s->ctx, r, error, &buf));
                return r;
        }
        report = cJSON_GetObjectItemCaseSensitive(reply, RF_REPORT);
        if (!cJSON_IsObject(report)) {
                run_error(s, EBADMSG, "malformed reply from memleakd (no report)");
                return -EBADMSG;
        }
        r = gate_options_apply(&s->o->gate, GATE_LOST, report, s->o->top, &gate);
        if (r < 0) {
                run_error(s, -r, "cannot apply the leak check to the report: %s", strerror(-r));
                return r;
        }
        switch (s->o->format) {
        case RUN_FORMAT_FOLDED:
                r = render_text_safely(s->out, report, render_folded);
                break;
        case RUN_FORMAT_PPROF:
                r = pprof_export_write(s->out, report);
                break;
        default:
                r = s->o->json ? render_json(s->out, report)
                               : render_text_safely(s->out, report, render_report_suppressed);
        }
        if (r >= 0 && fflush(s->out) != 0)
                r = -errno;
        if (r < 0)
                fprintf(stderr, "memleakctl: run: cannot print the report: %s\n", strerror(-r));
        /* after the report, as LeakSanitizer's summary */
        return gate_options_verdict("run", &s->o->gate, &gate);
}

/* Close fd now, so that its _cleanup_close_ does nothing later. */
static void close_now(int *fd)
{
        closep(fd);
        *fd = -1;
}

static int wait_status_to_exit(int status)
{
        if (WIFEXITED(status))
                return WEXITSTATUS(status);
        if (WIFSIGNALED(status))
                return 128 + WTERMSIG(status);
        return RUN_EXIT_FAILURE;
}

/* Kill the held child and reap it: it never ran. */
static int abandon_child(pid_t pid, int status)
{
        (void)kill(pid, SIGKILL);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                ;
        return status;
}

static int run(struct run_state *s, const char *path)
{
        _cleanup_close_ int hold_read = -1, hold_write = -1, err_read = -1, err_write = -1, daemon_fd = -1;
        _cleanup_json_ cJSON *reply = NULL;
        _cleanup_free_ char *error = NULL, *buf = NULL;
        struct memleak_request attach = s->o->attach;   /* shallow: objs stay the options' */
        const char *name = s->o->command[0];
        bool traced = true;
        siginfo_t info;
        int exec_error = 0, status, r, gate = 0;
        pid_t parent = getpid(), pid;
        ssize_t n;

        /* Before anything runs: is memleakd there at all? */
        daemon_fd = connection_open(s->ctx->socket_path);
        if (daemon_fd < 0 && !s->o->untraced_ok) {
                run_error(s, -daemon_fd, "%s", daemon_error(s->ctx, daemon_fd, NULL, &buf));
                return RUN_EXIT_FAILURE;
        }
        {
                int hold[2], err[2];

                if (pipe2(hold, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0) {
                        run_error(s, errno, "cannot create a pipe: %m");
                        return RUN_EXIT_FAILURE;
                }
                hold_read = hold[0], hold_write = hold[1], err_read = err[0], err_write = err[1];
        }
        install_signal_handlers(s);
        (void)fflush(NULL);
        pid = fork();
        if (pid < 0) {
                run_error(s, errno, "cannot fork: %m");
                return RUN_EXIT_FAILURE;
        }
        if (pid == 0) {
                close_now(&hold_write);
                close_now(&err_read);
                run_child(s, parent, hold_read, err_write, path);
        }
        close_now(&hold_read);
        close_now(&err_write);

        if (daemon_fd >= 0) {
                attach.has_pid = true;
                attach.pid = pid;
                attach.exec = (char *)path;
                r = call(s->ctx, daemon_fd, &attach, &reply, &error);
        } else
                r = daemon_fd;
        close_now(&daemon_fd);
        if (stop_signal) {
                run_error(s, EINTR, "%s before %s started; it did not run", strsignal(stop_signal), name);
                return abandon_child(pid, 128 + stop_signal);
        }
        if (r < 0) {
                const char *why = daemon_error(s->ctx, r, error, &buf);

                if (!s->o->untraced_ok) {
                        run_error(s, -r, "cannot trace %s: %s", name, why);
                        return abandon_child(pid, RUN_EXIT_FAILURE);
                }
                fprintf(stderr, "memleakctl: run: cannot trace %s: %s; running it untraced (--untraced-ok)\n",
                        name, why);
                traced = false;
        }

        /* Release CMD: from its first instruction on, memleakd records its allocations. */
        child_pid = pid;
        if (write(hold_write, &(char){ HOLD_GO }, 1) != 1) {
                child_pid = 0;
                run_error(s, errno, "cannot start %s: %m", name);
                return abandon_child(pid, RUN_EXIT_FAILURE);
        }
        close_now(&hold_write);
        do
                n = read(err_read, &exec_error, sizeof(exec_error));
        while (n < 0 && errno == EINTR);

        /* Wait for CMD's exit, leaving it a zombie: its pid stays its own until the report is in. */
        while (waitid(P_PID, pid, &info, WEXITED | WNOWAIT) < 0)
                if (errno != EINTR) {
                        run_error(s, errno, "cannot wait for %s: %m", name);
                        return RUN_EXIT_FAILURE;
                }
        child_pid = 0;
        if (n == (ssize_t)sizeof(exec_error))
                run_error(s, exec_error, "cannot run %s: %s", path, strerror(exec_error));
        else if (traced)
                gate = print_report(s, pid);    /* it says what went wrong; CMD's status stands
                                                 * unless --error-exitcode says otherwise */
        else
                gate = -ENODATA;
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR) {
                        run_error(s, errno, "cannot reap %s: %m", name);
                        return RUN_EXIT_FAILURE;
                }
        if (n == (ssize_t)sizeof(exec_error) || !s->o->gate.error_exitcode)
                return wait_status_to_exit(status);
        /* --error-exitcode: a leak check that could not be made fails, it does not pass */
        if (gate < 0)
                fprintf(stderr, "memleakctl: run: the leak check cannot be made without a report of %s: exit "
                        "status %d (--error-exitcode)\n", name, s->o->gate.error_exitcode);
        return gate != CTL_EXIT_OK ? s->o->gate.error_exitcode : wait_status_to_exit(status);
}

static void help_run(void)
{
        printf("memleakctl run [--obj PATH]... [--top N] [--min-size N] [--mmap] [--unwind MODE] [--no-reachability]\n"
               "               [--sample-bytes N] [--follow-forks] [--json] [--format FORMAT] [--output FILE]\n"
               "               [--untraced-ok] [--error-exitcode N [--fail-on LIST]] [--suppressions FILE] -- CMD [ARGS...]\n\n"
               "Run CMD traced by memleakd from its first allocation (constructors included), like\n"
               "valgrind: when it exits, print the allocations it never freed, by call stack, and exit\n"
               "with its status (128+N when signal N killed it). CMD gets this terminal, environment\n"
               "and working directory; SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to memleakctl are passed\n"
               "to it. It stays listed by memleakd, exited: 'memleakctl report --pid PID' shows it again.\n"
               "The processes CMD forks are not traced (the report says how many there were) unless\n"
               "--follow-forks is given.\n"
               "memleakd holds CMD at its exit (it traces it, as a debugger would) and reads its memory\n"
               "before the kernel tears it down: each stack's blocks are told apart as definitely lost\n"
               "(nothing points to them), indirectly lost (only lost blocks do) and still reachable (a\n"
               "global, a stack or a register still points to them), the lost ones listed first.\n"
               "Without --untraced-ok, CMD never runs untraced; if memleakctl dies, CMD is killed.\n\n"
               "  -o --obj PATH      Probe this object's allocator functions instead of the allocator\n"
               "                     CMD will use (up to %d times)\n"
               "  -t --top N         List N stacks in the report, sum up the rest (default: %d)\n"
               "     --min-size N   Record only allocations of at least N bytes\n"
               "     --mmap          Also track the anonymous mappings CMD makes itself (mmap, munmap,\n"
               "                     mremap), reported apart from heap bytes\n"
               "     --unwind MODE   How its stacks are walked: auto or dwarf (the call-frame information\n"
               "                     of the objects that have it), fp (frame pointers only)\n"
               "     --follow-forks  Trace the processes CMD forks or spawns too, and theirs, from their\n"
               "                     first instruction (each is held at its birth until memleakd traces\n"
               "                     it, and at its exec until its new program's unwind tables are in,\n"
               "                     so its stacks are complete from its first allocation; with\n"
               "                     --no-reachability or --sample-bytes nothing is held, and\n"
               "                     each is traced a few milliseconds after its birth), and report them\n"
               "                     with CMD (each scanned at its exit as CMD is)\n"
               "     --no-reachability  Do not hold CMD at its exit: no scan (CMD may then be traced by\n"
               "                     a debugger of your own)\n"
               "     --sample-bytes N\n"
               "                     Sample allocations every N bytes on average instead of recording\n"
               "                     each (see memleakctl attach --help); implies --no-reachability\n"
               "  -j --json          Print the report as JSON (errors too, on the same stream)\n"
               "  -O --output FILE   Write the report to FILE instead of stderr\n"
               "     --format FORMAT text (default), json (as --json), folded (folded stacks for flame\n"
               "                     graphs) or pprof (a gzip'd pprof profile: with --output only); folded\n"
               "                     and pprof take every stack unless --top is given\n"
               "     --untraced-ok   Run CMD untraced, with a warning, when memleakd cannot trace it\n"
               "     --error-exitcode N\n"
               "                     A leak check for CI (valgrind's option, LeakSanitizer's 23): exit\n"
               "                     with N (1-255) instead of CMD's status when a block of CMD's (and\n"
               "                     with --follow-forks of its children's) is definitely or indirectly\n"
               "                     lost, or as --fail-on says; a check that cannot be made (no scan:\n"
               "                     --no-reachability, --sample-bytes, a scan that failed) fails too\n"
               "     --fail-on LIST  What fails the check, a comma list: lost (the default), growing (a\n"
               "                     stack whose verdict was growing when CMD exited: a verdict needs\n"
               "                     verdict_min_snapshots snapshots, one each snapshot_interval_ms,\n"
               "                     some 5 s by default; a CMD that exits sooner holding a block\n"
               "                     cannot be judged, and fails), outstanding (any block or mapping\n"
               "                     not freed at exit, reachable ones too)\n"
               "     --suppressions FILE\n"
               "                     LeakSanitizer's suppressions: leave out every stack a leak:PATTERN\n"
               "                     line of FILE matches (a frame's function, module or source file;\n"
               "                     '*' any text, '^' and '$' anchor it): not checked, not listed,\n"
               "                     counted as suppressed\n"
               "  -h --help          Show this help\n\n"
               "Exit status: CMD's, or N when the leak check of --error-exitcode N failed; 125 when\n"
               "memleakctl or memleakd failed and CMD did not run, 126 when CMD is not an executable ELF\n"
               "program (run a script's interpreter: -- sh script.sh), 127 when CMD was not found; 2 for\n"
               "a bad command line or suppressions file.\n",
               MEMLEAK_MAX_OBJS, MEMLEAK_DEFAULT_TOP);
}

static int open_output(struct run_state *s)
{
        int fd;

        if (!s->o->output_path) {
                s->out = stderr;
                return 0;
        }
        fd = open(s->o->output_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
        if (fd < 0 || !(s->out = fdopen(fd, "w"))) {
                int e = errno;

                if (fd >= 0)
                        close(fd);
                fprintf(stderr, "memleakctl: run: cannot open %s: %s\n", s->o->output_path, strerror(e));
                return -e;
        }
        return 0;
}

/* Resolve CMD, run it traced, and return the exit status: CMD's, or one of ours. */
static int resolve_and_run(struct run_state *s)
{
        _cleanup_free_ char *path = NULL;
        const char *name = s->o->command[0];
        int r;

        r = resolve_command(name, &path);
        if (r == -ENOENT) {
                run_error(s, -r, "%s: command not found", name);
                return RUN_EXIT_NOT_FOUND;
        }
        if (r == -EACCES) {
                run_error(s, -r, "%s: not an executable file", name);
                return RUN_EXIT_CANNOT_INVOKE;
        }
        if (r == -ENOEXEC) {
                run_error(s, -r, "%s: not an ELF program (for a script, run its interpreter: "
                          "memleakctl run -- sh SCRIPT)", name);
                return RUN_EXIT_CANNOT_INVOKE;
        }
        if (r < 0) {
                run_error(s, -r, "%s: %s", name, strerror(-r));
                return RUN_EXIT_FAILURE;
        }
        return run(s, path);
}

static void run_options_done(struct run_options *o)
{
        memleak_request_done(&o->attach);
        gate_options_done(&o->gate);
}

int cmd_run(struct ctl_context *ctx, int argc, char *argv[])
{
        static const struct option options[] = {
                { "obj", required_argument, NULL, 'o' },
                { "top", required_argument, NULL, 't' },
                { "min-size", required_argument, NULL, ARG_MIN_SIZE },
                { "json", no_argument, NULL, 'j' },
                { "output", required_argument, NULL, 'O' },
                { "untraced-ok", no_argument, NULL, ARG_UNTRACED_OK },
                { "mmap", no_argument, NULL, ARG_MMAP },
                { "follow-forks", no_argument, NULL, ARG_FOLLOW_FORKS },
                { "unwind", required_argument, NULL, ARG_UNWIND },
                { "no-reachability", no_argument, NULL, ARG_NO_REACHABILITY },
                { "sample-bytes", required_argument, NULL, ARG_SAMPLE_BYTES },
                { "format", required_argument, NULL, ARG_FORMAT },
                GATE_LONG_OPTIONS,
                { "help", no_argument, NULL, 'h' },
                {}
        };
        _cleanup_(run_options_done) struct run_options o = {
                .attach = { .cmd = MEMLEAK_CMD_ATTACH, .reachability = true },
                .top = MEMLEAK_DEFAULT_TOP,
        };
        struct run_state s = { .ctx = ctx, .o = &o };
        int c, r;

        assert(ctx);
        assert(argv);

        o.json = ctx->json;
        optind = 0;
        /* "+": CMD's own options are CMD's */
        while ((c = getopt_long(argc, argv, "+:o:t:jO:h", options, NULL)) >= 0)
                switch (c) {
                case 'o':
                        if (o.attach.n_objs >= MEMLEAK_MAX_OBJS)
                                return ctl_usage_error(ctx, "run: at most %d --obj", MEMLEAK_MAX_OBJS);
                        r = ctl_make_absolute(optarg, &o.attach.objs[o.attach.n_objs]);
                        if (r < 0) {
                                fprintf(stderr, "memleakctl: run: cannot make '%s' absolute: %s\n", optarg,
                                        strerror(-r));
                                return RUN_EXIT_FAILURE;
                        }
                        if (strlen(o.attach.objs[o.attach.n_objs++]) >= MEMLEAK_MAX_PATH_BYTES)
                                return ctl_usage_error(ctx, "run: --obj path longer than %d bytes",
                                                       MEMLEAK_MAX_PATH_BYTES - 1);
                        break;
                case 't':
                        if (ctl_parse_u64(optarg, MEMLEAK_MAX_TOP, &o.top) < 0)
                                return ctl_usage_error(ctx, "run: --top must be an integer between 0 and %d",
                                                       MEMLEAK_MAX_TOP);
                        o.top_given = true;
                        break;
                case ARG_FORMAT:
                        if (!strcmp(optarg, "text") || !strcmp(optarg, "json"))
                                o.format = !strcmp(optarg, "json") ? RUN_FORMAT_JSON : RUN_FORMAT_TEXT;
                        else if (!strcmp(optarg, "folded") || !strcmp(optarg, "pprof"))
                                o.format = !strcmp(optarg, "pprof") ? RUN_FORMAT_PPROF : RUN_FORMAT_FOLDED;
                        else
                                return ctl_usage_error(ctx, "run: --format must be text, json, folded or pprof");
                        if (o.format == RUN_FORMAT_JSON)
                                o.json = true;
                        break;
                case ARG_MIN_SIZE:
                        if (ctl_parse_u64(optarg, MEMLEAK_MAX_SIZE_BYTES, &o.attach.min_size) < 0)
                                return ctl_usage_error(ctx, "run: invalid --min-size '%s'", optarg);
                        break;
                case 'j':
                        o.json = true;
                        break;
                case 'O':
                        o.output_path = optarg;
                        break;
                case ARG_UNTRACED_OK:
                        o.untraced_ok = true;
                        break;
                case ARG_NO_REACHABILITY:
                        o.attach.reachability = false;
                        break;
                case ARG_SAMPLE_BYTES:
                        if (ctl_parse_u64(optarg, MEMLEAK_MAX_SAMPLE_BYTES, &o.attach.sample_bytes) < 0)
                                return ctl_usage_error(ctx, "run: --sample-bytes must be an integer between 0 "
                                                       "and 4294967296, not '%s'", optarg);
                        /* a scan needs every block recorded */
                        if (o.attach.sample_bytes > 1)
                                o.attach.reachability = false;
                        break;
                case ARG_MMAP:
                        o.attach.mmap = true;
                        break;
                case ARG_FOLLOW_FORKS:
                        o.attach.follow_forks = true;
                        break;
                case ARG_UNWIND:
                        o.attach.unwind = memleak_unwind_from_string(optarg);
                        if (o.attach.unwind <= MEMLEAK_UNWIND_DEFAULT)
                                return ctl_usage_error(ctx, "run: --unwind must be auto, dwarf or fp, not '%s'",
                                                       optarg);
                        break;
                case 'h':
                        help_run();
                        return CTL_EXIT_OK;
                default:
                        r = gate_options_parse(ctx, "run", &o.gate, c, optarg);
                        if (r < 0)
                                return ctl_option_error(ctx, "run", c, argv);
                        if (r != CTL_EXIT_OK)
                                return r;
                }
        if (optind >= argc)
                return ctl_usage_error(ctx, "run: no command given (memleakctl run [OPTIONS] -- CMD [ARGS...])");
        /* growing: each stack's verdict as memleakd kept it at the program's exit */
        r = gate_options_check(ctx, "run", &o.gate, GATE_LOST | GATE_GROWING | GATE_OUTSTANDING);
        if (r != CTL_EXIT_OK)
                return r;
        if ((o.format == RUN_FORMAT_FOLDED || o.format == RUN_FORMAT_PPROF) && o.json)
                return ctl_usage_error(ctx, "run: --format %s is not JSON: not with --json",
                                       o.format == RUN_FORMAT_PPROF ? "pprof" : "folded");
        /* a profile is bytes: never onto the terminal run's report goes to by default */
        if (o.format == RUN_FORMAT_PPROF && !o.output_path)
                return ctl_usage_error(ctx, "run: --format pprof writes a binary profile: give --output FILE");
        o.command = argv + optind;
        if (open_output(&s) < 0)
                return RUN_EXIT_FAILURE;

        r = resolve_and_run(&s);
        /* --output: a report that did not reach its file fails a run that otherwise succeeded. */
        if (s.out != stderr && fclose(s.out) != 0 && r == CTL_EXIT_OK)
                r = RUN_EXIT_FAILURE;
        return r;
}
