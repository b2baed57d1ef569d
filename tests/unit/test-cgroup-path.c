/* SPDX-License-Identifier: MIT */
/* cgroup-path: the cgroup2 mount found in mountinfo (hybrid and pure v2), unit names, a cgroup
 * directory resolved, a unit found by name, its id and the processes in it and below it; a
 * directory removed and made again (a unit's restart) has a new id. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup-path.h"
#include "macro.h"
#include "test-util.h"

static const char hybrid[] =
        "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
        "40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"
        "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime shared:5 - cgroup2 cgroup2 rw\n";
static const char pure[] =
        "22 27 0:20 / /sys rw,nosuid - sysfs sysfs rw\n"
        "26 22 0:23 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate\n";
static const char escaped[] = "26 22 0:23 / /a\\040b rw - cgroup2 none rw\n";

static void finds_the_cgroup2_mount(void)
{
        _cleanup_free_ char *a = NULL, *b = NULL, *c = NULL, *d = NULL;

        ASSERT_EQ(cgroup_path_mount_parse(hybrid, &a), 0);
        ASSERT_STREQ(a, "/sys/fs/cgroup/unified");
        ASSERT_EQ(cgroup_path_mount_parse(pure, &b), 0);
        ASSERT_STREQ(b, "/sys/fs/cgroup");
        ASSERT_EQ(cgroup_path_mount_parse(escaped, &c), 0);
        ASSERT_STREQ(c, "/a b");
        ASSERT_EQ(cgroup_path_mount_parse("31 23 0:28 / /x rw - tmpfs tmpfs rw\n", &d), -ENOENT);
        ASSERT_EQ(cgroup_path_mount_parse("garbage\n", &d), -EINVAL);
        ASSERT_EQ(cgroup_path_mount_parse("", &d), -ENOENT);
        ASSERT_TRUE(d == NULL);
}

static void knows_unit_names(void)
{
        ASSERT_TRUE(cgroup_path_unit_name_valid("nginx.service"));
        ASSERT_TRUE(cgroup_path_unit_name_valid("session-2.scope"));
        ASSERT_TRUE(cgroup_path_unit_name_valid("user-1000.slice"));
        ASSERT_TRUE(!cgroup_path_unit_name_valid("nginx"));
        ASSERT_TRUE(!cgroup_path_unit_name_valid(".service"));
        ASSERT_TRUE(!cgroup_path_unit_name_valid("a/b.service"));
        ASSERT_TRUE(!cgroup_path_unit_name_valid("../x.service"));
        ASSERT_TRUE(!cgroup_path_unit_name_valid(""));
        ASSERT_TRUE(!cgroup_path_unit_name_valid(NULL));
}

/* The cgroup2 mount, mounted where memleakd mounts one (daemon/core/mounts.h) when none is (a
 * container that shows cgroup v1 alone, as CI's). */
static void ensure_cgroup2(void)
{
        _cleanup_free_ char *root = NULL;

        if (cgroup_path_mount(NULL, &root) != -ENOENT)
                return;
        ASSERT_TRUE(mkdir("/run/memleakd", 0755) == 0 || errno == EEXIST);
        ASSERT_TRUE(mkdir("/run/memleakd/cgroup2", 0755) == 0 || errno == EEXIST);
        ASSERT_EQ(mount("cgroup2", "/run/memleakd/cgroup2", "cgroup2", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL), 0);
}

/* A cgroup of this test's own below the real cgroup2 mount, and a process in it. */
static void resolves_finds_and_lists_a_real_cgroup(void)
{
        _cleanup_free_ char *root = NULL, *slice = NULL, *unit_dir = NULL, *unit = NULL, *found = NULL,
                            *resolved = NULL, *relative = NULL, *procs = NULL, *again = NULL;
        _cleanup_free_ pid_t *pids = NULL;
        _cleanup_free_ uint64_t *ids = NULL;
        uint64_t id = 0, id2 = 0;
        size_t n = 0, n_ids = 0;
        pid_t child;
        FILE *f;

        ensure_cgroup2();
        ASSERT_EQ(cgroup_path_mount(NULL, &root), 0);
        ASSERT_TRUE(asprintf(&slice, "%s/memleakd-unit-test-%d.slice", root, (int)getpid()) > 0);
        ASSERT_TRUE(asprintf(&unit, "t-%d.service", (int)getpid()) > 0);
        ASSERT_TRUE(asprintf(&unit_dir, "%s/%s", slice, unit) > 0);
        ASSERT_EQ(mkdir(slice, 0755), 0);
        ASSERT_EQ(mkdir(unit_dir, 0755), 0);

        ASSERT_EQ(cgroup_path_find_unit(root, unit, &found), 0);
        ASSERT_STREQ(found, unit_dir);
        ASSERT_EQ(cgroup_path_resolve(root, unit_dir, &resolved), 0);
        ASSERT_STREQ(resolved, unit_dir);
        ASSERT_EQ(cgroup_path_resolve(root, unit_dir + strlen(root), &relative), 0);
        ASSERT_STREQ(relative, unit_dir);
        ASSERT_EQ(cgroup_path_resolve(root, "/tmp/../etc", &again), -EINVAL);
        ASSERT_EQ(cgroup_path_resolve(root, "no-such-cgroup-here", &again), -ENOENT);
        ASSERT_EQ(cgroup_path_resolve(root, "..", &again), -EINVAL);
        ASSERT_EQ(cgroup_path_resolve(root, "/proc", &again), -ENOENT);
        ASSERT_EQ(cgroup_path_find_unit(root, "no-such-unit-memleakd.service", &again), -ENOENT);

        /* a process in the unit's cgroup is listed from its slice (below it) */
        child = fork();
        ASSERT_TRUE(child >= 0);
        if (child == 0) {
                pause();
                _exit(0);
        }
        ASSERT_TRUE(asprintf(&procs, "%s/cgroup.procs", unit_dir) > 0);
        f = fopen(procs, "we");
        ASSERT_TRUE(f != NULL);
        fprintf(f, "%d\n", (int)child);
        ASSERT_EQ(fclose(f), 0);
        ASSERT_EQ(cgroup_path_procs(slice, &pids, &n), 0);
        ASSERT_EQ(n, 1);
        ASSERT_EQ(pids[0], child);
        ASSERT_EQ(cgroup_path_tree(slice, &ids, &n_ids), 0);
        ASSERT_EQ(n_ids, 2);
        (void)kill(child, SIGKILL);
        (void)waitpid(child, NULL, 0);

        /* removed and made again, as systemd does at a restart: another id */
        ASSERT_EQ(cgroup_path_id(unit_dir, &id), 0);
        ASSERT_EQ(ids[1], id);
        for (int i = 0; i < 100 && rmdir(unit_dir) < 0 && errno == EBUSY; i++)
                usleep(10 * 1000);      /* the killed child leaves its cgroup as it is reaped */
        ASSERT_EQ(mkdir(unit_dir, 0755), 0);
        ASSERT_EQ(cgroup_path_id(unit_dir, &id2), 0);
        ASSERT_TRUE(id != id2);
        ASSERT_EQ(rmdir(unit_dir), 0);
        ASSERT_EQ(rmdir(slice), 0);
        ASSERT_EQ(cgroup_path_id(unit_dir, &id), -ENOENT);
        n = 0;
        ASSERT_EQ(cgroup_path_procs(unit_dir, &pids, &n), -ENOENT);
}

static const struct unit_test tests[] = {
        TEST(finds_the_cgroup2_mount),
        TEST(knows_unit_names),
        TEST(resolves_finds_and_lists_a_real_cgroup),
};

int main(void)
{
        return run_unit_tests(tests, ELEMENTSOF(tests));
}
