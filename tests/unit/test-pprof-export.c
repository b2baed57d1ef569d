/* SPDX-License-Identifier: MIT */
/* Unit tests for common/pprof-export.c: a hand-written report in, the profile it packs decoded
 * again by protobuf-c (and gunzip'd by zlib) and every field checked. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "json-util.h"
#include "macro.h"
#include "pprof-export.h"
#include "profile.pb-c.h"
#include "test-util.h"

typedef Perftools__Profiles__Profile Profile;
typedef Perftools__Profiles__Sample Sample;
typedef Perftools__Profiles__Location Location;
typedef Perftools__Profiles__Mapping Mapping;
typedef Perftools__Profiles__Function Function;

/* pid 1234 exact, in a unit; pid 77 sampled. The first stack's leaf address holds fill_buffer
 * inlined into leak_malloc; both of pid 1234's stacks go through main at one address; pid 77
 * maps the same file as 1234. */
static const char report_json[] =
        "{\"generated_at\":1763888000,\"min_age_s\":0,\"top\":4,"
        " \"targets\":["
        "  {\"pid\":1234,\"comm\":\"leaky\",\"sample_bytes\":0,\"auto_sample\":null,\"attached_s\":12,"
        "   \"unit\":\"leaky.service\",\"cgroup\":null},"
        "  {\"pid\":77,\"comm\":\"sampled\",\"sample_bytes\":4096,\"auto_sample\":{\"since\":1763887990},"
        "   \"attached_s\":30,\"unit\":null,\"cgroup\":null},"
        "  {\"pid\":0,\"comm\":\"[kernel]\",\"sample_bytes\":0,\"auto_sample\":null,\"attached_s\":1,"
        "   \"unit\":null,\"cgroup\":null}],"
        " \"stacks\":["
        "  {\"pid\":1234,\"mmap\":false,\"bytes\":9000,\"allocs\":1,\"stack_error\":null,\"frames\":["
        "    {\"addr\":\"0x7f0000001000\",\"symbol\":\"strdup\",\"offset\":16,\"inlined\":false,"
        "     \"module\":\"/usr/lib/libc.so.6\",\"module_offset\":8192,\"build_id\":\"c0ffee00112233445566778899aabbccddeeff00\",\"file\":null,\"line\":null},"
        "    {\"addr\":\"0x55d0c0a01300\",\"symbol\":\"main\",\"offset\":40,\"inlined\":false,"
        "     \"module\":\"/tmp/leaky\",\"module_offset\":4864,\"build_id\":\"5f2b8c4e9a1d3f607182a3b4c5d6e7f809a1b2c3\",\"file\":\"/src/leaky.c\",\"line\":40},"
        "    {\"addr\":\"0x55d0c0a01010\",\"symbol\":\"_start\",\"offset\":32,\"inlined\":false,"
        "     \"module\":\"/tmp/leaky\",\"module_offset\":4112,\"build_id\":\"5f2b8c4e9a1d3f607182a3b4c5d6e7f809a1b2c3\",\"file\":null,\"line\":null}]},"
        "  {\"pid\":1234,\"mmap\":false,\"bytes\":5005,\"allocs\":5,\"stack_error\":null,\"frames\":["
        "    {\"addr\":\"0x55d0c0a011a9\",\"symbol\":\"fill_buffer\",\"offset\":null,\"inlined\":true,"
        "     \"module\":\"/tmp/leaky\",\"module_offset\":4521,\"build_id\":\"5f2b8c4e9a1d3f607182a3b4c5d6e7f809a1b2c3\",\"file\":\"/src/util.h\",\"line\":3},"
        "    {\"addr\":\"0x55d0c0a011a9\",\"symbol\":\"leak_malloc\",\"offset\":25,\"inlined\":false,"
        "     \"module\":\"/tmp/leaky\",\"module_offset\":4521,\"build_id\":\"5f2b8c4e9a1d3f607182a3b4c5d6e7f809a1b2c3\",\"file\":\"/src/leaky.c\",\"line\":12},"
        "    {\"addr\":\"0x55d0c0a01300\",\"symbol\":\"main\",\"offset\":40,\"inlined\":false,"
        "     \"module\":\"/tmp/leaky\",\"module_offset\":4864,\"build_id\":\"5f2b8c4e9a1d3f607182a3b4c5d6e7f809a1b2c3\",\"file\":\"/src/leaky.c\",\"line\":40},"
        "    {\"addr\":\"0x7f0000002000\",\"symbol\":null,\"offset\":null,\"inlined\":false,"
        "     \"module\":\"/usr/lib/libfoo.so\",\"module_offset\":4096,\"build_id\":null,\"file\":null,\"line\":null},"
        "    {\"addr\":\"0x1234\",\"symbol\":null,\"offset\":null,\"inlined\":false,\"module\":null,"
        "     \"module_offset\":null,\"build_id\":null,\"file\":null,\"line\":null}]},"
        "  {\"pid\":1234,\"mmap\":false,\"bytes\":2000,\"allocs\":2,\"stack_error\":null,\"frames\":["
        "    {\"addr\":\"0x55d0c0a01250\",\"symbol\":\"leak_other\",\"offset\":16,\"inlined\":false,"
        "     \"module\":\"/tmp/leaky\",\"module_offset\":4688,\"build_id\":\"5f2b8c4e9a1d3f607182a3b4c5d6e7f809a1b2c3\",\"file\":\"/src/leaky.c\",\"line\":20},"
        "    {\"addr\":\"0x55d0c0a01300\",\"symbol\":\"main\",\"offset\":40,\"inlined\":false,"
        "     \"module\":\"/tmp/leaky\",\"module_offset\":4864,\"build_id\":\"5f2b8c4e9a1d3f607182a3b4c5d6e7f809a1b2c3\",\"file\":\"/src/leaky.c\",\"line\":40}]},"
        "  {\"pid\":77,\"mmap\":false,\"bytes\":8192,\"allocs\":2,\"stack_error\":\"user stack unreadable (EFAULT)\","
        "   \"frames\":[]},"
        "  {\"pid\":77,\"mmap\":true,\"bytes\":65536,\"allocs\":1,\"stack_error\":null,\"frames\":["
        "    {\"addr\":\"0x55d0c0a01300\",\"symbol\":\"main\",\"offset\":40,\"inlined\":false,"
        "     \"module\":\"/tmp/leaky\",\"module_offset\":4864,\"build_id\":\"5f2b8c4e9a1d3f607182a3b4c5d6e7f809a1b2c3\",\"file\":\"/src/leaky.c\",\"line\":40}]},"
        "  {\"pid\":0,\"mmap\":false,\"bytes\":512,\"allocs\":2,\"stack_error\":null,\"frames\":["
        "    {\"addr\":\"0xffffffff81234567\",\"symbol\":\"kmalloc_trace\",\"offset\":71,\"inlined\":false,"
        "     \"module\":\"[kernel]\",\"module_offset\":null,\"build_id\":\"4a5a9b0a\",\"file\":null,\"line\":null},"
        "    {\"addr\":\"0xffffffff81200000\",\"symbol\":\"do_syscall_64\",\"offset\":50,\"inlined\":false,"
        "     \"module\":\"[kernel]\",\"module_offset\":null,\"build_id\":\"4a5a9b0a\",\"file\":null,\"line\":null}]}],"
        " \"other\":{\"stacks\":3,\"bytes\":96,\"allocs\":3},"
        " \"lost\":{\"allocs_map_full\":0,\"stack_efault\":2,\"stack_table_full\":0},"
        " \"suppressed\":{\"file\":\"/ci/lsan.supp\",\"stacks\":2,\"allocs\":4,\"bytes\":640,\"patterns\":[]}}";

static cJSON *parse(const char *json)
{
        cJSON *o = cJSON_Parse(json);

        ASSERT_TRUE(o);
        return o;
}

static Profile *encode_and_unpack(const cJSON *report)
{
        _cleanup_free_ uint8_t *data = NULL;
        size_t size = 0;
        Profile *p;

        ASSERT_EQ(pprof_export_encode(report, &data, &size), 0);
        ASSERT_TRUE(size > 0);
        p = perftools__profiles__profile__unpack(NULL, size, data);
        ASSERT_TRUE(p);
        return p;
}

static const char *str(const Profile *p, int64_t i)
{
        ASSERT_TRUE(i >= 0 && (size_t)i < p->n_string_table);
        return p->string_table[i];
}

static const Location *location(const Profile *p, uint64_t id)
{
        for (size_t i = 0; i < p->n_location; i++)
                if (p->location[i]->id == id)
                        return p->location[i];
        ASSERT_TRUE(!"no location of that id");
        return NULL;
}

static const Mapping *mapping(const Profile *p, uint64_t id)
{
        for (size_t i = 0; i < p->n_mapping; i++)
                if (p->mapping[i]->id == id)
                        return p->mapping[i];
        ASSERT_TRUE(!"no mapping of that id");
        return NULL;
}

static const Function *function(const Profile *p, uint64_t id)
{
        for (size_t i = 0; i < p->n_function; i++)
                if (p->function[i]->id == id)
                        return p->function[i];
        ASSERT_TRUE(!"no function of that id");
        return NULL;
}

/* The name of line i of location loc's function. */
static const char *line_function(const Profile *p, const Location *loc, size_t i)
{
        ASSERT_TRUE(i < loc->n_line);
        return str(p, function(p, loc->line[i]->function_id)->name);
}

/* The string label key of sample s, or NULL. */
static const char *label(const Profile *p, const Sample *s, const char *key)
{
        for (size_t i = 0; i < s->n_label; i++)
                if (strcmp(str(p, s->label[i]->key), key) == 0)
                        return s->label[i]->str ? str(p, s->label[i]->str) : NULL;
        return NULL;
}

static bool has_comment(const Profile *p, const char *part)
{
        for (size_t i = 0; i < p->n_comment; i++)
                if (strstr(str(p, p->comment[i]), part))
                        return true;
        return false;
}

/* The file offset pprof computes for a location: address - memory_start + file_offset. */
static uint64_t file_offset_of(const Profile *p, const Location *loc)
{
        const Mapping *m = mapping(p, loc->mapping_id);

        ASSERT_TRUE(loc->address >= m->memory_start && loc->address < m->memory_limit);
        return loc->address - m->memory_start + m->file_offset;
}

static void pprof_ids_are_unique_nonzero_and_every_reference_resolves(void)
{
        _cleanup_json_ cJSON *report = parse(report_json);
        Profile *p = encode_and_unpack(report);

        ASSERT_TRUE(p->n_string_table > 0);
        ASSERT_STREQ(p->string_table[0], "");
        /* every string once */
        for (size_t i = 0; i < p->n_string_table; i++)
                for (size_t j = i + 1; j < p->n_string_table; j++)
                        ASSERT_TRUE(strcmp(p->string_table[i], p->string_table[j]) != 0);
        for (size_t i = 0; i < p->n_location; i++) {
                ASSERT_TRUE(p->location[i]->id != 0);
                for (size_t j = i + 1; j < p->n_location; j++)
                        ASSERT_TRUE(p->location[i]->id != p->location[j]->id);
                if (p->location[i]->mapping_id)
                        (void)mapping(p, p->location[i]->mapping_id);
                for (size_t l = 0; l < p->location[i]->n_line; l++)
                        (void)function(p, p->location[i]->line[l]->function_id);
        }
        for (size_t i = 0; i < p->n_function; i++) {
                ASSERT_TRUE(p->function[i]->id != 0);
                for (size_t j = i + 1; j < p->n_function; j++)
                        ASSERT_TRUE(p->function[i]->id != p->function[j]->id);
                (void)str(p, p->function[i]->name);
                (void)str(p, p->function[i]->filename);
        }
        for (size_t i = 0; i < p->n_mapping; i++) {
                ASSERT_TRUE(p->mapping[i]->id != 0);
                for (size_t j = i + 1; j < p->n_mapping; j++)
                        ASSERT_TRUE(p->mapping[i]->id != p->mapping[j]->id);
                ASSERT_TRUE(p->mapping[i]->memory_start < p->mapping[i]->memory_limit);
        }
        for (size_t i = 0; i < p->n_sample; i++) {
                ASSERT_EQ(p->sample[i]->n_value, p->n_sample_type);
                ASSERT_TRUE(p->sample[i]->n_location_id > 0);
                for (size_t l = 0; l < p->sample[i]->n_location_id; l++)
                        (void)location(p, p->sample[i]->location_id[l]);
        }
        perftools__profiles__profile__free_unpacked(p, NULL);
}

static void pprof_profile_says_inuse_space_and_objects_when_and_what(void)
{
        _cleanup_json_ cJSON *report = parse(report_json);
        Profile *p = encode_and_unpack(report);

        ASSERT_EQ(p->n_sample_type, 2);
        ASSERT_STREQ(str(p, p->sample_type[0]->type), "inuse_objects");
        ASSERT_STREQ(str(p, p->sample_type[0]->unit), "count");
        ASSERT_STREQ(str(p, p->sample_type[1]->type), "inuse_space");
        ASSERT_STREQ(str(p, p->sample_type[1]->unit), "bytes");
        ASSERT_STREQ(str(p, p->default_sample_type), "inuse_space");
        ASSERT_EQ(p->time_nanos, 1763888000LL * 1000000000LL);
        ASSERT_EQ(p->duration_nanos, 30LL * 1000000000LL);
        ASSERT_TRUE(p->period_type);
        ASSERT_STREQ(str(p, p->period_type->type), "space");
        ASSERT_STREQ(str(p, p->period_type->unit), "bytes");
        /* one target exact, one sampled: no one period; the comments say which is which */
        ASSERT_EQ(p->period, 0);
        ASSERT_TRUE(has_comment(p, "pid 77 (sampled) is sampled (by memleakd, as its allocation table filled): a "
                                   "sample point every 4096 bytes on average, its heap stacks' values are estimates"));
        ASSERT_TRUE(!has_comment(p, "pid 1234"));
        ASSERT_TRUE(has_comment(p, "events lost, not in these values"));
        ASSERT_TRUE(has_comment(p, ": stack_efault 2"));
        ASSERT_TRUE(!has_comment(p, "allocs_map_full"));
        ASSERT_TRUE(has_comment(p, "3 stacks (96 bytes in 3 allocations) past top 4"));
        /* memleakctl report --suppressions took some out */
        ASSERT_TRUE(has_comment(p, "2 stacks (640 bytes in 4 allocations) left out: the suppressions of "
                                   "/ci/lsan.supp name them"));
        perftools__profiles__profile__free_unpacked(p, NULL);
}

static void pprof_samples_are_stacks_with_their_labels_and_inlined_lines(void)
{
        _cleanup_json_ cJSON *report = parse(report_json);
        Profile *p = encode_and_unpack(report);
        const Sample *s;
        const Location *leaf, *main_loc, *foo, *unknown;
        const Mapping *m;

        /* the first stack's leaf is in libc, but the program is where _start is: mapping[0] */
        ASSERT_STREQ(str(p, p->mapping[0]->filename), "/tmp/leaky");
        ASSERT_EQ(p->mapping[0]->id, location(p, p->sample[1]->location_id[0])->mapping_id);
        ASSERT_STREQ(str(p, mapping(p, location(p, p->sample[0]->location_id[0])->mapping_id)->filename),
                     "/usr/lib/libc.so.6");
        /* a mapping without debug information for a frame it names: functions, no lines */
        m = mapping(p, location(p, p->sample[0]->location_id[0])->mapping_id);
        ASSERT_STREQ(str(p, m->build_id), "c0ffee00112233445566778899aabbccddeeff00");
        ASSERT_TRUE(m->has_functions && !m->has_filenames && !m->has_line_numbers && !m->has_inline_frames);

        ASSERT_EQ(p->n_sample, 7);              /* 6 stacks and the other */

        s = p->sample[1];
        ASSERT_EQ(s->value[0], 5);
        ASSERT_EQ(s->value[1], 5005);
        ASSERT_STREQ(label(p, s, "pid"), "1234");
        ASSERT_STREQ(label(p, s, "comm"), "leaky");
        ASSERT_STREQ(label(p, s, "unit"), "leaky.service");
        ASSERT_STREQ(label(p, s, "kind"), "heap");
        ASSERT_EQ(s->n_label, 4);               /* exact: no sample_bytes */
        /* five frames, four addresses: the inlined frame is a line of its address's location */
        ASSERT_EQ(s->n_location_id, 4);
        leaf = location(p, s->location_id[0]);
        ASSERT_EQ(leaf->address, 0x55d0c0a011a9);
        ASSERT_EQ(leaf->n_line, 2);
        ASSERT_STREQ(line_function(p, leaf, 0), "fill_buffer");        /* inlined first */
        ASSERT_EQ(leaf->line[0]->line, 3);
        ASSERT_STREQ(str(p, function(p, leaf->line[0]->function_id)->filename), "/src/util.h");
        ASSERT_STREQ(line_function(p, leaf, 1), "leak_malloc");        /* then its caller */
        ASSERT_EQ(leaf->line[1]->line, 12);
        ASSERT_STREQ(str(p, function(p, leaf->line[1]->function_id)->filename), "/src/leaky.c");
        ASSERT_STREQ(str(p, function(p, leaf->line[1]->function_id)->system_name), "leak_malloc");
        m = mapping(p, leaf->mapping_id);
        ASSERT_STREQ(str(p, m->filename), "/tmp/leaky");
        ASSERT_STREQ(str(p, m->build_id), "5f2b8c4e9a1d3f607182a3b4c5d6e7f809a1b2c3");
        ASSERT_TRUE(m->has_functions && m->has_filenames && m->has_line_numbers && m->has_inline_frames);
        ASSERT_EQ(file_offset_of(p, leaf), 4521);
        main_loc = location(p, s->location_id[1]);
        ASSERT_STREQ(line_function(p, main_loc, 0), "main");
        ASSERT_EQ(main_loc->mapping_id, leaf->mapping_id);
        ASSERT_EQ(file_offset_of(p, main_loc), 4864);
        /* a frame no symbol names: its address in its module, no line, the module unnamed */
        foo = location(p, s->location_id[2]);
        ASSERT_EQ(foo->n_line, 0);
        ASSERT_EQ(foo->address, 0x7f0000002000);
        ASSERT_EQ(file_offset_of(p, foo), 4096);
        m = mapping(p, foo->mapping_id);
        ASSERT_STREQ(str(p, m->filename), "/usr/lib/libfoo.so");
        ASSERT_STREQ(str(p, m->build_id), "");          /* the report knows none */
        ASSERT_TRUE(!m->has_functions && !m->has_line_numbers);
        /* no module: no mapping */
        unknown = location(p, s->location_id[3]);
        ASSERT_EQ(unknown->mapping_id, 0);
        ASSERT_EQ(unknown->address, 0x1234);

        /* the same address of the same process is one location */
        s = p->sample[2];
        ASSERT_EQ(s->value[1], 2000);
        ASSERT_EQ(s->n_location_id, 2);
        ASSERT_STREQ(line_function(p, location(p, s->location_id[0]), 0), "leak_other");
        ASSERT_EQ(s->location_id[1], main_loc->id);

        /* a sampled target's stack without frames: why, and its mean */
        s = p->sample[3];
        ASSERT_EQ(s->value[0], 2);
        ASSERT_EQ(s->value[1], 8192);
        ASSERT_EQ(s->n_location_id, 1);
        ASSERT_STREQ(line_function(p, location(p, s->location_id[0]), 0),
                     "[no stack: user stack unreadable (EFAULT)]");
        ASSERT_STREQ(label(p, s, "pid"), "77");
        ASSERT_TRUE(label(p, s, "unit") == NULL);
        ASSERT_EQ(s->n_label, 4);
        ASSERT_STREQ(str(p, s->label[3]->key), "sample_bytes");
        ASSERT_EQ(s->label[3]->num, 4096);
        ASSERT_STREQ(str(p, s->label[3]->num_unit), "bytes");

        /* another process mapping the same file: a mapping and a location of its own */
        s = p->sample[4];
        ASSERT_STREQ(label(p, s, "kind"), "mmap");
        ASSERT_EQ(s->n_label, 3);               /* pid, comm, kind: its mappings are recorded whole */
        ASSERT_TRUE(s->location_id[0] != main_loc->id);
        ASSERT_TRUE(location(p, s->location_id[0])->mapping_id != main_loc->mapping_id);
        ASSERT_EQ(file_offset_of(p, location(p, s->location_id[0])), 4864);
        ASSERT_STREQ(str(p, mapping(p, location(p, s->location_id[0])->mapping_id)->build_id), "5f2b8c4e9a1d3f607182a3b4c5d6e7f809a1b2c3");

        /* a kernel stack: its module a mapping without file offsets */
        s = p->sample[5];
        ASSERT_STREQ(label(p, s, "pid"), "0");
        ASSERT_STREQ(label(p, s, "comm"), "[kernel]");
        ASSERT_EQ(s->n_location_id, 2);
        m = mapping(p, location(p, s->location_id[0])->mapping_id);
        ASSERT_STREQ(str(p, m->filename), "[kernel]");
        ASSERT_STREQ(str(p, m->build_id), "4a5a9b0a");
        ASSERT_EQ(m->file_offset, 0);
        ASSERT_EQ(m->memory_start, 0xffffffff81200000);
        ASSERT_EQ(m->memory_limit, 0xffffffff81234568);
        ASSERT_TRUE(m->has_functions && !m->has_filenames && !m->has_line_numbers);
        ASSERT_EQ(location(p, s->location_id[1])->mapping_id, location(p, s->location_id[0])->mapping_id);

        /* the stacks past top */
        s = p->sample[6];
        ASSERT_EQ(s->value[0], 3);
        ASSERT_EQ(s->value[1], 96);
        ASSERT_EQ(s->n_label, 0);
        ASSERT_STREQ(line_function(p, location(p, s->location_id[0]), 0), "[other: 3 stacks past top 4]");
        perftools__profiles__profile__free_unpacked(p, NULL);
}

static void pprof_period_is_the_mean_every_target_shares(void)
{
        _cleanup_json_ cJSON *report = parse(
                "{\"generated_at\":1763888000.5,\"top\":10,"
                " \"targets\":[{\"pid\":5,\"comm\":\"s\",\"sample_bytes\":524288,\"auto_sample\":null,\"attached_s\":3}],"
                " \"stacks\":[{\"pid\":5,\"bytes\":1048576,\"allocs\":2,\"frames\":[]}],"
                " \"other\":{\"stacks\":0,\"bytes\":0,\"allocs\":0},\"lost\":{}}");
        Profile *p = encode_and_unpack(report);

        ASSERT_EQ(p->period, 524288);
        ASSERT_TRUE(!has_comment(p, "suppressions"));
        ASSERT_EQ(p->time_nanos, 1763888000500000000LL);
        ASSERT_EQ(p->n_sample, 1);              /* nothing past top: no other */
        ASSERT_TRUE(has_comment(p, "pid 5 (s) is sampled: a sample point every 524288 bytes on average"));
        ASSERT_TRUE(!has_comment(p, "lost"));
        ASSERT_TRUE(!has_comment(p, "past top"));
        perftools__profiles__profile__free_unpacked(p, NULL);
}

static void pprof_file_is_the_profile_gzipped(void)
{
        _cleanup_json_ cJSON *report = parse(report_json);
        _cleanup_free_ uint8_t *plain = NULL, *unzipped = NULL;
        _cleanup_free_ char *file = NULL;
        size_t plain_size, file_size = 0;
        uLongf unzipped_size;
        z_stream z = {};
        FILE *f;

        ASSERT_EQ(pprof_export_encode(report, &plain, &plain_size), 0);
        f = open_memstream(&file, &file_size);
        ASSERT_TRUE(f);
        ASSERT_EQ(pprof_export_write(f, report), 0);
        ASSERT_EQ(fclose(f), 0);
        ASSERT_TRUE(file_size > 18);
        ASSERT_EQ((uint8_t)file[0], 0x1f);     /* gzip's magic */
        ASSERT_EQ((uint8_t)file[1], 0x8b);
        unzipped_size = plain_size + 1;
        unzipped = malloc(unzipped_size);
        ASSERT_TRUE(unzipped);
        ASSERT_EQ(inflateInit2(&z, 16 + 15), Z_OK);
        z.next_in = (Bytef *)file;
        z.avail_in = file_size;
        z.next_out = unzipped;
        z.avail_out = unzipped_size;
        ASSERT_EQ(inflate(&z, Z_FINISH), Z_STREAM_END);
        ASSERT_EQ(z.total_out, plain_size);
        ASSERT_EQ(z.avail_in, 0);
        inflateEnd(&z);
        ASSERT_TRUE(memcmp(unzipped, plain, plain_size) == 0);
}

/* An exited target and the live one that took its pid, each mapping its own build of one path at
 * the same place: two mappings, each with its build ID, and a location in each. */
static void pprof_mappings_of_two_builds_at_one_place_are_two(void)
{
        static const char json[] =
                "{\"targets\":[{\"pid\":9,\"comm\":\"old\"},{\"pid\":9,\"comm\":\"new\"}],\"stacks\":["
                " {\"pid\":9,\"bytes\":10,\"allocs\":1,\"frames\":["
                "  {\"addr\":\"0x401000\",\"symbol\":\"f\",\"module\":\"/bin/app\",\"module_offset\":4096,"
                "   \"build_id\":\"aaaa\"}]},"
                " {\"pid\":9,\"bytes\":20,\"allocs\":1,\"frames\":["
                "  {\"addr\":\"0x401000\",\"symbol\":\"f\",\"module\":\"/bin/app\",\"module_offset\":4096,"
                "   \"build_id\":\"bbbb\"}]}]}";
        _cleanup_json_ cJSON *report = parse(json);
        Profile *p = encode_and_unpack(report);
        const Location *a, *b;

        ASSERT_EQ(p->n_sample, 2);
        ASSERT_EQ(p->n_mapping, 2);
        a = location(p, p->sample[0]->location_id[0]);
        b = location(p, p->sample[1]->location_id[0]);
        ASSERT_TRUE(a->id != b->id);
        ASSERT_STREQ(str(p, mapping(p, a->mapping_id)->build_id), "aaaa");
        ASSERT_STREQ(str(p, mapping(p, b->mapping_id)->build_id), "bbbb");
        ASSERT_EQ(file_offset_of(p, a), 4096);
        ASSERT_EQ(file_offset_of(p, b), 4096);
        perftools__profiles__profile__free_unpacked(p, NULL);
}

static void pprof_refuses_a_reply_that_is_no_report(void)
{
        _cleanup_json_ cJSON *report = parse("{\"targets\":[]}");
        uint8_t *data = NULL;
        size_t size = 0;

        ASSERT_EQ(pprof_export_encode(report, &data, &size), -EBADMSG);
        ASSERT_TRUE(data == NULL);
}

int main(void)
{
        static const struct unit_test tests[] = {
                TEST(pprof_ids_are_unique_nonzero_and_every_reference_resolves),
                TEST(pprof_profile_says_inuse_space_and_objects_when_and_what),
                TEST(pprof_samples_are_stacks_with_their_labels_and_inlined_lines),
                TEST(pprof_period_is_the_mean_every_target_shares),
                TEST(pprof_file_is_the_profile_gzipped),
                TEST(pprof_mappings_of_two_builds_at_one_place_are_two),
                TEST(pprof_refuses_a_reply_that_is_no_report),
        };

        return run_unit_tests(tests, ELEMENTSOF(tests));
}
