/* SPDX-License-Identifier: MIT */
/* memleakctl: global options, then dispatch to a subcommand through the command table. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "commands.h"
#include "macro.h"
#include "protocol.h"

static const struct {
        const char *name;
        ctl_command_fn fn;
} commands[] = {
        { "attach", cmd_attach },
        { "detach", cmd_detach },
        { "status", cmd_status },
        { "metrics", cmd_metrics },
        { "report", cmd_report },
        { "leaks", cmd_leaks },
        { "history", cmd_history },
        { "top", cmd_top },
        { "run", cmd_run },
        { "html", cmd_html },
};

static void help(void)
{
        printf("memleakctl [--socket PATH] [--json] COMMAND [OPTIONS]\n\n"
               "Ask memleakd, the eBPF memory-leak detector, to trace processes and report the\n"
               "allocations they never free.\n\n"
               "Commands:\n"
               "  attach --pid PID [--obj PATH]... [--mmap] [--unwind MODE] [--min-size N] [--max-size N]\n"
               "         [--sample-bytes N] [--follow-forks] [--json]\n"
               "                        Start tracing a process's allocations (every one, or sampled)\n"
               "  attach --kernel [--kernel-filter pid=N|comm=NAME]... [--min-size N] [--max-size N] [--json]\n"
               "                        Start tracing the kernel's allocations (tracepoints)\n"
               "  attach --unit NAME | --cgroup PATH [--obj PATH]... [--mmap] [--unwind MODE] [--min-size N]\n"
               "         [--max-size N] [--sample-bytes N] [--json]\n"
               "                        Trace every process of a service, now and later, each on its own\n"
               "  detach --pid PID [--children] | --kernel | --unit NAME | --cgroup PATH [--json]\n"
               "                        Stop tracing a process, or the kernel\n"
               "  status [--unit NAME | --cgroup PATH] [--json]\n"
               "                        Show the daemon, the traced processes, the watches and the counters\n"
               "  metrics [--json]      Print the metrics once, in Prometheus' text format\n"
               "  report [--pid PID [--children] | --kernel | --unit NAME | --cgroup PATH] [--top N] [--min-age SECONDS]\n"
               "         [--reachability] [--suppressions FILE] [--show-addresses] [--format text|json|folded|pprof]\n"
               "         [--output FILE] [--value bytes|allocs] [--folded | --json]\n"
               "                        Show the stacks holding the most outstanding memory; with\n"
               "                        --reachability, scan its memory (from a snapshot) to tell lost\n"
               "                        blocks from reachable ones\n"
               "  leaks [--pid PID [--children] | --unit NAME | --cgroup PATH] [--reachability | --no-reachability]\n"
               "        [--error-exitcode N [--fail-on LIST]] [--suppressions FILE] [--json]\n"
               "                        List the leak suspects: stacks still growing, or holding lost blocks\n"
               "  history [--pid PID [--children] | --kernel | --unit NAME | --cgroup PATH] [--stack ID] [--top N] [--json]\n"
               "                        Show the snapshots as time series, per process and per stack\n"
               "  top [--pid PID [--children]] [--sort growth|bytes|count] [--rows N] [--interval MS]\n"
               "      [--frames N]\n"
               "                        A live view: outstanding bytes, RSS, stacks by growth\n"
               "  html [--pid PID [--children] | --kernel | --unit NAME | --cgroup PATH] [--top N] [--output FILE]\n"
               "                        The report and the history as one HTML page to open in a browser\n"
               "  run [--obj PATH]... [--top N] [--min-size N] [--mmap] [--unwind MODE] [--json] [--format FORMAT] [--output FILE]\n"
               "      [--no-reachability] [--sample-bytes N] [--follow-forks] [--untraced-ok]\n"
               "      [--error-exitcode N [--fail-on LIST]] [--suppressions FILE] -- CMD [ARGS...]\n"
               "                        Run CMD traced from its first allocation; report its leaks\n"
               "                        when it exits (its memory scanned there: lost or reachable),\n"
               "                        and exit with its status, or N when a block is lost\n\n"
               "Options:\n"
               "  -s --socket PATH      memleakd's socket (default: $%s, else %s)\n"
               "  -j --json             Print results, and errors, as JSON on stdout\n"
               "  -h --help             Show this help\n"
               "  -V --version          Show the version\n\n"
               "Run 'memleakctl COMMAND --help' for a command's options.\n",
               MEMLEAK_SOCKET_ENV, MEMLEAK_DEFAULT_SOCKET);
}

int main(int argc, char *argv[])
{
        static const struct option options[] = {
                { "socket", required_argument, NULL, 's' },
                { "json", no_argument, NULL, 'j' },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                {}
        };
        const char *env_socket = getenv(MEMLEAK_SOCKET_ENV);
        struct ctl_context ctx = {
                .socket_path = env_socket && *env_socket ? env_socket : MEMLEAK_DEFAULT_SOCKET,
        };
        int c;

        /* "+": stop at the subcommand, whose options are its own. */
        while ((c = getopt_long(argc, argv, "+:s:jhV", options, NULL)) >= 0)
                switch (c) {
                case 's':
                        if (!*optarg)
                                return ctl_usage_error(&ctx, "--socket needs a path");
                        ctx.socket_path = optarg;
                        break;
                case 'j':
                        ctx.json = true;
                        break;
                case 'h':
                        help();
                        return CTL_EXIT_OK;
                case 'V':
                        printf("memleakctl %s\n", MEMLEAKD_VERSION);
                        return CTL_EXIT_OK;
                case ':':
                        return ctl_usage_error(&ctx, "option '%s' needs an argument", argv[optind - 1]);
                default:
                        if (optopt > 0 && optopt < 0x100)
                                return ctl_usage_error(&ctx, "unknown option '-%c'", optopt);
                        return ctl_usage_error(&ctx, "unknown option '%s'", argv[optind - 1]);
                }

        if (optind >= argc)
                return ctl_usage_error(&ctx, "no command given (attach, detach, status, metrics, report, leaks, history, top, run or html)");
        for (size_t i = 0; i < ELEMENTSOF(commands); i++)
                if (strcmp(commands[i].name, argv[optind]) == 0)
                        return commands[i].fn(&ctx, argc - optind, argv + optind);
        return ctl_usage_error(&ctx, "unknown command '%s' (attach, detach, status, metrics, report, leaks, history, top, run or html)", argv[optind]);
}
