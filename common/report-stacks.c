/* SPDX-License-Identifier: MIT */
/* A report's stacks, one at a time, each with its frames. */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include "json-util.h"
#include "macro.h"
#include "reply-fields.h"
#include "report-stacks.h"
#include "text-safe.h"

int report_stacks_init(struct report_stacks *rs, const cJSON *report)
{
        const cJSON *locations = cJSON_GetObjectItemCaseSensitive(report, RF_LOCATIONS), *l;
        size_t n = 0;

        assert(rs);

        *rs = (struct report_stacks) { .stacks = cJSON_GetObjectItemCaseSensitive(report, RF_STACKS) };
        if (!cJSON_IsArray(rs->stacks))
                return -EBADMSG;
        if (!locations || cJSON_IsNull(locations))
                return 0;
        if (!cJSON_IsArray(locations))
                return -EBADMSG;
        rs->locations = calloc((size_t)cJSON_GetArraySize(locations) + 1, sizeof(*rs->locations));
        if (!rs->locations)
                return -ENOMEM;
        cJSON_ArrayForEach(l, locations) {
                if (!cJSON_IsObject(l)) {
                        report_stacks_done(rs);
                        return -EBADMSG;
                }
                rs->locations[n++] = l;
        }
        rs->n_locations = n;
        return 0;
}

void report_stacks_done(struct report_stacks *rs)
{
        free(rs->locations);
        rs->locations = NULL;
        rs->n_locations = 0;
}

/* stack's "locations" as its "frames" (references to the entries). */
static int add_frames(const struct report_stacks *rs, cJSON *stack)
{
        const cJSON *ids = cJSON_GetObjectItemCaseSensitive(stack, RF_LOCATIONS), *id;
        cJSON *frames;

        if (!ids || cJSON_HasObjectItem(stack, RF_FRAMES))
                return 0;
        if (!cJSON_IsArray(ids))
                return -EBADMSG;
        frames = cJSON_AddArrayToObject(stack, RF_FRAMES);
        if (!frames)
                return -ENOMEM;
        cJSON_ArrayForEach(id, ids) {
                uint64_t i;

                if (json_get_u64(id, UINT64_MAX, &i) < 0 || i >= rs->n_locations)
                        return -EBADMSG;
                if (!cJSON_AddItemReferenceToArray(frames, (cJSON *)rs->locations[i]))
                        return -ENOMEM;
        }
        return 0;
}

int report_stacks_open(const struct report_stacks *rs, const cJSON *item, bool (*needs)(const char *s),
                       char *(*fn)(const char *s), cJSON **ret)
{
        _cleanup_json_ cJSON *stack = NULL;
        int r;

        assert(rs);
        assert(item);
        assert(ret);

        if (cJSON_IsRaw(item)) {
                stack = cJSON_Parse(item->valuestring);
                if (!stack)
                        return -EBADMSG;
        } else {
                stack = cJSON_Duplicate(item, true);
                if (!stack)
                        return -ENOMEM;
        }
        if (!cJSON_IsObject(stack))
                return -EBADMSG;
        /* mapped before the frames are added: those are the report's, mapped with it */
        if (needs && fn && json_strings_map(stack, needs, fn) < 0)
                return -ENOMEM;
        r = add_frames(rs, stack);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(stack);
        return 0;
}

int report_stacks_expand(cJSON *report)
{
        struct report_stacks rs;
        cJSON *item, *next;
        int r;

        r = report_stacks_init(&rs, report);
        if (r < 0)
                return r;
        for (item = rs.stacks->child; item; item = next) {
                cJSON *stack;

                next = item->next;
                r = report_stacks_open(&rs, item, NULL, NULL, &stack);
                if (r < 0)
                        break;
                /* the frames referred to the report's locations: made its own copies */
                if (cJSON_HasObjectItem(stack, RF_LOCATIONS)) {
                        cJSON *frames = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(stack, RF_FRAMES), true);

                        if (!frames || !cJSON_ReplaceItemInObjectCaseSensitive(stack, RF_FRAMES, frames)) {
                                cJSON_Delete(frames);
                                cJSON_Delete(stack);
                                r = -ENOMEM;
                                break;
                        }
                }
                cJSON_ReplaceItemViaPointer((cJSON *)rs.stacks, item, stack);
        }
        report_stacks_done(&rs);
        return r < 0 ? r : 0;
}
