/* SPDX-License-Identifier: GPL-2.0-only */
/* Fuzz the config parser (config_parse_file) with the input as the file: a file it accepts
 * leaves a config that copies and parses again the same way; one it refuses leaves the defaults
 * untouched and says why. */
#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include "config.h"
#include "fuzz-util.h"
#include "macro.h"

static bool same_string(const char *a, const char *b)
{
        return a == b || (a && b && strcmp(a, b) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        _cleanup_(config_done) struct memleakd_config c = {}, defaults = {}, copy = {};
        _cleanup_free_ char *error = NULL;
        _cleanup_close_ int fd = -EBADF;
        char path[64];
        int r;

        if (size > 64 * 1024)
                return 0;
        FUZZ_CHECK(config_init_defaults(&c) == 0);
        FUZZ_CHECK(config_init_defaults(&defaults) == 0);
        fd = fuzz_memfd(data, size);
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);

        r = config_parse_file(path, &c, &error);
        if (r < 0) {
                FUZZ_CHECK(r == -EINVAL || r == -ENOMEM);
                FUZZ_CHECK(error && strncmp(error, path, strlen(path)) == 0);
                /* refused whole: nothing of it taken */
                FUZZ_CHECK(c.socket_mode == defaults.socket_mode);
                FUZZ_CHECK(c.max_targets == defaults.max_targets);
                FUZZ_CHECK(same_string(c.socket_path, defaults.socket_path));
                return 0;
        }
        FUZZ_CHECK(!error);
        FUZZ_CHECK(config_copy(&c, &copy) == 0);
        /* the same file over what it produced gives what it produced */
        FUZZ_CHECK(config_parse_file(path, &copy, NULL) == 0);
        FUZZ_CHECK(copy.socket_mode == c.socket_mode && copy.max_targets == c.max_targets);
        FUZZ_CHECK(same_string(copy.socket_path, c.socket_path));
        return 0;
}
