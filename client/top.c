/* SPDX-License-Identifier: MIT */
/* memleakctl top: a live view of the traced processes, one frame per snapshot interval, like top:
 * outstanding bytes, RSS and trend, then the stacks sorted by growth with their verdicts. On a
 * terminal it redraws in place and reads keys; otherwise it prints successive frames. */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include "call.h"
#include "commands.h"
#include "json-util.h"
#include "macro.h"
#include "protocol.h"
#include "render.h"
#include "reply-fields.h"

#define TOP_ROWS_DEFAULT 20
#define TOP_REPORT_STACKS 1000          /* stacks asked for each frame (sorted here) */
#define TOP_MIN_INTERVAL_MS 100

enum {
        ARG_SORT = 0x100,
        ARG_INTERVAL,
        ARG_FRAMES,
};

struct top_state {
        struct memleak_request req;
        enum render_top_sort sort;
        uint64_t rows;
        uint64_t interval_ms;           /* 0: the daemon's snapshot interval */
        uint64_t frames;                /* 0: until quit */
        unsigned expanded;
        bool paused;
        bool interactive;               /* stdout and stdin are a terminal */
};

static void help(void)
{
        printf("memleakctl top [--pid PID [--children]] [--sort growth|bytes|count] [--rows N] [--interval MS]\n"
               "               [--frames N]\n\n"
               "A live view of the traced processes, refreshed on each of memleakd's snapshots: each\n"
               "one's outstanding bytes, resident memory and trend, then its stacks sorted by growth\n"
               "(the growing ones first), with their verdicts. On a terminal, keys: g, b, c sort by\n"
               "growth, bytes, count; e expands the next stack (its frames); p pauses; q quits.\n"
               "When stdout is not a terminal, it prints one frame after another.\n\n"
               "  -p --pid PID          Only this traced process (default: all)\n"
               "     --children         With --pid: the processes followed from it too (attach --follow-forks)\n"
               "     --sort KEY         growth (default), bytes or count\n"
               "  -n --rows N           Stacks shown (default: %d)\n"
               "     --interval MS      Refresh every MS milliseconds (default: the snapshot interval)\n"
               "     --frames N         Stop after N frames (default: never)\n"
               "  -h --help             Show this help\n", TOP_ROWS_DEFAULT);
}

static int parse_sort(const char *s, enum render_top_sort *ret)
{
        if (strcmp(s, "growth") == 0)
                *ret = RENDER_TOP_BY_GROWTH;
        else if (strcmp(s, "bytes") == 0)
                *ret = RENDER_TOP_BY_BYTES;
        else if (strcmp(s, "count") == 0)
                *ret = RENDER_TOP_BY_COUNT;
        else
                return -EINVAL;
        return 0;
}

static int parse_options(struct ctl_context *ctx, struct top_state *s, int argc, char *argv[])
{
        static const struct option options[] = {
                { "pid", required_argument, NULL, 'p' },
                { "children", no_argument, NULL, CTL_OPT_CHILDREN },
                { "sort", required_argument, NULL, ARG_SORT },
                { "rows", required_argument, NULL, 'n' },
                { "interval", required_argument, NULL, ARG_INTERVAL },
                { "frames", required_argument, NULL, ARG_FRAMES },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        int c;

        optind = 0;
        while ((c = getopt_long(argc, argv, "+:p:n:h", options, NULL)) >= 0)
                switch (c) {
                case 'p':
                        if (ctl_parse_pid(optarg, &s->req.pid) < 0)
                                return ctl_usage_error(ctx, "top: invalid --pid '%s'", optarg);
                        s->req.has_pid = true;
                        break;
                case CTL_OPT_CHILDREN:
                        s->req.children = true;
                        break;
                case ARG_SORT:
                        if (parse_sort(optarg, &s->sort) < 0)
                                return ctl_usage_error(ctx, "top: --sort must be growth, bytes or count");
                        break;
                case 'n':
                        if (ctl_parse_u64(optarg, TOP_REPORT_STACKS, &s->rows) < 0)
                                return ctl_usage_error(ctx, "top: --rows must be an integer between 0 and %d",
                                                       TOP_REPORT_STACKS);
                        break;
                case ARG_INTERVAL:
                        if (ctl_parse_u64(optarg, 3600 * 1000, &s->interval_ms) < 0 ||
                            s->interval_ms < TOP_MIN_INTERVAL_MS)
                                return ctl_usage_error(ctx, "top: --interval must be from %d to 3600000 ms",
                                                       TOP_MIN_INTERVAL_MS);
                        break;
                case ARG_FRAMES:
                        if (ctl_parse_u64(optarg, UINT32_MAX, &s->frames) < 0)
                                return ctl_usage_error(ctx, "top: invalid --frames '%s'", optarg);
                        break;
                case 'h':
                        help();
                        return -1;
                default:
                        return ctl_option_error(ctx, "top", c, argv);
                }
        if (optind < argc)
                return ctl_usage_error(ctx, "top: unexpected argument '%s'", argv[optind]);
        if (s->req.children && !s->req.has_pid)
                return ctl_usage_error(ctx, "top: --children takes the processes followed from --pid: give --pid");
        return CTL_EXIT_OK;
}

/* One question to memleakd; its reply, or NULL after the error is printed (call_daemon()). */
static cJSON *ask(struct ctl_context *ctx, const struct memleak_request *req)
{
        cJSON *reply = NULL;

        return call_daemon(ctx, "top", req, &reply) == CTL_EXIT_OK ? reply : NULL;
}

/* The daemon's snapshot interval, the default refresh; 0 when memleakd did not answer (said). */
static uint64_t snapshot_interval_ms(struct ctl_context *ctx)
{
        _cleanup_json_ cJSON *reply = ask(ctx, &(struct memleak_request) { .cmd = MEMLEAK_CMD_STATUS });
        uint64_t ms;

        if (!reply)
                return 0;
        if (json_get_u64(cJSON_GetObjectItemCaseSensitive(reply, RF_SNAPSHOT_INTERVAL_MS), 3600 * 1000, &ms) < 0)
                return 1000;
        return MAX(ms, (uint64_t)TOP_MIN_INTERVAL_MS);
}

static int draw(struct ctl_context *ctx, struct top_state *s)
{
        _cleanup_json_ cJSON *reply = ask(ctx, &s->req);
        const cJSON *report = cJSON_GetObjectItemCaseSensitive(reply, RF_REPORT);
        char clock[16] = "??:??:??";
        time_t now = time(NULL);
        struct tm tm;
        int r;

        if (!cJSON_IsObject(report))
                return reply ? -EBADMSG : -EIO;
        if (localtime_r(&now, &tm))
                strftime(clock, sizeof(clock), "%H:%M:%S", &tm);
        if (s->interactive)
                fputs("\033[H\033[2J", stdout);
        else
                fputc('\n', stdout);
        printf("memleakctl top: %s, every %.1f s, by %s%s\n", clock, s->interval_ms / 1000.0,
               s->sort == RENDER_TOP_BY_BYTES ? "bytes" : s->sort == RENDER_TOP_BY_COUNT ? "count" : "growth",
               s->interactive ? " (g b c sort, e expand, p pause, q quit)" : "");
        r = render_top(stdout, report, s->sort, (unsigned)s->rows, s->expanded);
        if (fflush(stdout) != 0)
                r = -errno;
        return r;
}

/* A key pressed: false to quit. */
static bool on_key(struct top_state *s, char key)
{
        switch (key) {
        case 'q':
                return false;
        case 'p':
                s->paused = !s->paused;
                break;
        case 'g':
                s->sort = RENDER_TOP_BY_GROWTH;
                break;
        case 'b':
                s->sort = RENDER_TOP_BY_BYTES;
                break;
        case 'c':
                s->sort = RENDER_TOP_BY_COUNT;
                break;
        case 'e':
                s->expanded = s->expanded >= s->rows ? 0 : s->expanded + 1;
                break;
        }
        return true;
}

/* Wait up to ms for a key (interactive) or just ms: false to quit. */
static bool wait_or_key(struct top_state *s, uint64_t ms, bool *redraw)
{
        struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
        char key;

        *redraw = false;
        if (!s->interactive) {
                struct timespec ts = { .tv_sec = (time_t)(ms / 1000), .tv_nsec = (long)(ms % 1000) * 1000000 };

                (void)nanosleep(&ts, NULL);
                return true;
        }
        if (poll(&p, 1, (int)ms) <= 0)
                return true;
        if (read(STDIN_FILENO, &key, 1) != 1)
                return false;
        *redraw = true;
        return on_key(s, key);
}

static struct termios saved_termios;

static void restore_terminal(void)
{
        (void)tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_termios);
        fputs("\033[?25h", stdout);
}

static void on_signal(int sig)
{
        restore_terminal();
        signal(sig, SIG_DFL);
        raise(sig);
}

/* Keys without Enter, no echo; restored at exit and on a fatal signal. */
static int raw_terminal(void)
{
        struct termios raw;

        if (tcgetattr(STDIN_FILENO, &saved_termios) < 0)
                return -errno;
        raw = saved_termios;
        raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
        raw.c_cc[VMIN] = 1;
        raw.c_cc[VTIME] = 0;
        if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw) < 0)
                return -errno;
        atexit(restore_terminal);
        signal(SIGINT, on_signal);
        signal(SIGTERM, on_signal);
        signal(SIGHUP, on_signal);
        fputs("\033[?25l", stdout);
        return 0;
}

int cmd_top(struct ctl_context *ctx, int argc, char *argv[])
{
        struct top_state s = {
                .req = { .cmd = MEMLEAK_CMD_REPORT, .top = TOP_REPORT_STACKS },
                .rows = TOP_ROWS_DEFAULT,
        };
        uint64_t drawn = 0;
        int r;

        r = parse_options(ctx, &s, argc, argv);
        if (r != CTL_EXIT_OK)
                return r < 0 ? CTL_EXIT_OK : r;
        if (s.interval_ms == 0)
                s.interval_ms = snapshot_interval_ms(ctx);
        if (s.interval_ms == 0)
                return CTL_EXIT_FAILURE;
        s.interactive = isatty(STDOUT_FILENO) && isatty(STDIN_FILENO) && raw_terminal() >= 0;
        for (;;) {
                bool redraw;

                if (!s.paused) {
                        r = draw(ctx, &s);
                        if (r < 0)
                                return CTL_EXIT_FAILURE;
                        if (s.frames && ++drawn >= s.frames)
                                return CTL_EXIT_OK;
                }
                do {
                        if (!wait_or_key(&s, s.interval_ms, &redraw))
                                return CTL_EXIT_OK;
                } while (redraw && s.paused);
        }
}
