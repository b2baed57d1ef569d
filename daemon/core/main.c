/* SPDX-License-Identifier: GPL-2.0-only */
/* memleakd: parse arguments and configuration, then run the manager. */
#include <getopt.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "config-source.h"
#include "config.h"
#include "log.h"
#include "macro.h"
#include "manager.h"
#include "protocol.h"
#include "watchdog.h"


static void help(void)
{
        printf("Usage: memleakd [OPTIONS]\n"
               "\n"
               "Find memory leaks in running processes with eBPF: keeps uprobes on their allocator,\n"
               "tracks every outstanding allocation by stack, and answers memleakctl on a Unix socket.\n"
               "A target that fills its share of the allocation table (max_allocs) is sampled from\n"
               "then on, its reports saying so (auto_sample_percent in the configuration).\n"
               "Runs in the foreground (systemd: Type=notify, socket activation, watchdog).\n"
               "\n"
               "Options:\n"
               "  -c, --config FILE   read this configuration file alone; by default memleakd reads\n"
               "                      %s/memleakd.conf,\n"
               "                      then %s/memleakd.conf, then the *.conf drop-ins of\n"
               "                      both memleakd.conf.d directories by name (each may be missing)\n"
               "  -s, --socket PATH   listening socket (default from the config, else %s;\n"
               "                      also $%s); ignored when systemd passes a socket\n"
               "      --forget        remove the BPF maps and probe links pinned for a restart\n"
               "                      (bpf_pin_directory) and the state file and exited\n"
               "                      targets' reports (state_directory),\n"
               "                      then exit: the targets left recording stop being traced\n"
               "  -v, --verbose       log debug messages\n"
               "  -h, --help          show this help\n"
               "  -V, --version       show the version\n",
               MEMLEAKD_VENDOR_CONFIG_DIR, MEMLEAKD_CONFIG_DIR, MEMLEAK_DEFAULT_SOCKET, MEMLEAK_SOCKET_ENV);
}

struct arguments {
        const char *config_path;        /* --config, or NULL: the layered files */
        const char *socket_path;
        bool verbose;
        bool forget;
};

/* Returns 1 to go on, 0 to exit successfully, < 0 on a usage error. */
static int parse_argv(int argc, char *argv[], struct arguments *a)
{
        static const struct option options[] = {
                { "config",  required_argument, NULL, 'c' },
                { "socket",  required_argument, NULL, 's' },
                { "verbose", no_argument,       NULL, 'v' },
                { "help",    no_argument,       NULL, 'h' },
                { "version", no_argument,       NULL, 'V' },
                { "forget",  no_argument,       NULL, 'F' },
                {}
        };
        int c;

        while ((c = getopt_long(argc, argv, "c:s:vhV", options, NULL)) >= 0) {
                switch (c) {
                case 'c':
                        a->config_path = optarg;
                        break;
                case 's':
                        a->socket_path = optarg;
                        break;
                case 'v':
                        a->verbose = true;
                        break;
                case 'F':
                        a->forget = true;
                        break;
                case 'h':
                        help();
                        return 0;
                case 'V':
                        printf("memleakd %s\n", MEMLEAKD_VERSION);
                        return 0;
                default:
                        return -EINVAL;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "memleakd: unexpected argument '%s'\n", argv[optind]);
                return -EINVAL;
        }
        return 1;
}

static int load_config(const struct arguments *a, struct memleakd_config *c, struct config_source *source)
{
        _cleanup_free_ char *error = NULL, *files = NULL;
        const char *env_socket = getenv(MEMLEAK_SOCKET_ENV);
        int r;

        r = config_init_defaults(c);
        if (r >= 0)
                r = config_source_init(source, a->config_path, MEMLEAKD_VENDOR_CONFIG_DIR, MEMLEAKD_CONFIG_DIR);
        /* The command line wins over the environment, which wins over the files (at a reload too). */
        if (r >= 0 && (a->socket_path || (env_socket && *env_socket)) &&
            !(source->socket_path = strdup(a->socket_path ? a->socket_path : env_socket)))
                r = -ENOMEM;
        if (r < 0)
                return log_error_errno(r, "Out of memory");
        r = config_source_load(source, c, &files, &error);
        if (r < 0)
                return log_error_errno(r, "%s", error ? error : "Cannot read the configuration");
        log_info("Configuration: %s", *files ? files : "the built-in defaults (no configuration file)");
        if (c->socket_path[0] != '/')
                return log_error_errno(EINVAL, "The socket path must be absolute: %s", c->socket_path);
        return 0;
}

int main(int argc, char *argv[])
{
        struct arguments a = {};
        struct memleakd_config config = {};
        struct config_source source = {};
        struct manager *m = NULL;
        uint64_t watchdog_usec;
        int r;

        /* Before anything slow: systemd's watchdog already runs. */
        watchdog_usec = watchdog_stretch_for_startup();
        /* Fixed thresholds: glibc's dynamic ones grow with the largest block freed (a report's
         * buffers, a big file's CFI), after which the worker threads' arenas keep megabytes of
         * freed memory resident for good; memleakd should shrink back once its targets go. */
        (void)mallopt(M_MMAP_THRESHOLD, 256 * 1024);
        (void)mallopt(M_TRIM_THRESHOLD, 1024 * 1024);
        r = parse_argv(argc, argv, &a);
        if (r <= 0)
                return r < 0 ? 2 : 0;
        if (a.verbose)
                log_set_max_level(LOG_DEBUG);
        r = load_config(&a, &config, &source);
        if (r < 0) {
                config_done(&config);
                config_source_done(&source);
                return 1;
        }
        if (a.forget) {
                r = manager_adopt_forget(&config);
                config_done(&config);
                config_source_done(&source);
                return r < 0 ? 1 : 0;
        }
        r = manager_new(&config, &source, &m);
        config_done(&config);
        config_source_done(&source);
        if (r < 0) {
                log_error_errno(r, "Out of memory");
                return 1;
        }
        r = manager_start(m);
        if (r >= 0)
                r = manager_run(m, watchdog_usec);
        manager_free(m);
        return r < 0 ? 1 : 0;
}
