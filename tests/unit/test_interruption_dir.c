/* The directory interruption source: notices in name order, parsed with the
 * EventBridge parser, malformed or oversized files delivered as NOOP with the
 * reason, acknowledging removes the file, temporary names are ignored. */
#include "base/arena.h"
#include "base/error.h"
#include "cloud/aws/interruption.h"
#include "cloud/interruption_dir.h"
#include "helpers/assert.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[] = "/tmp/kp-interruption-XXXXXX";
static kp_interruption_source *src;
static kp_arena *arena;

static void put(const char *name, const char *body)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(body, f);
    fclose(f);
}

static bool exists(const char *name)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

#define SPOT(id)                                                                                   \
    "{\"version\":\"0\",\"id\":\"e-" id "\",\"detail-type\":\"EC2 Spot Instance Interruption "     \
    "Warning\",\"source\":\"aws.ec2\",\"time\":\"2026-11-21T12:00:00Z\",\"region\":\"us-east-1\","  \
    "\"detail\":{\"instance-id\":\"" id "\",\"instance-action\":\"terminate\"}}"

static void setup(void)
{
    memcpy(dir, "/tmp/kp-interruption-XXXXXX", sizeof(dir));
    cr_assert_not_null(mkdtemp(dir));
    KP_ASSERT_OK(kp_interruption_dir_new(dir, kp_aws_interruption_parse, &src));
    arena = kp_arena_new();
}

static void teardown(void)
{
    src = kp_interruption_source_free(src);
    arena = kp_arena_free(arena);
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(interruption_dir, .init = setup, .fini = teardown);

Test(interruption_dir, empty_directory_returns_nothing_after_the_wait)
{
    kp_interruption *m = NULL;
    uint32_t n = 7;
    cr_assert_eq(src->ops->receive(src, arena, &m, &n, 0), 0);
    cr_assert_eq(n, 0);
}

Test(interruption_dir, notices_in_name_order_then_ack_removes_them)
{
    put("b.json", SPOT("kwok-b"));
    put("a.json", SPOT("kwok-a"));
    put("c.json.tmp", SPOT("kwok-c"));
    kp_interruption *m = NULL;
    uint32_t n = 0;
    cr_assert_eq(src->ops->receive(src, arena, &m, &n, 1), 0, "%s", kp_error_last());
    cr_assert_eq(n, 2, "a temporary name is not a notice");
    cr_assert_eq(m[0].kind, KP_INTERRUPT_SPOT);
    cr_assert_eq(m[0].n_ids, 1);
    cr_assert_str_eq(m[0].instance_ids[0], "kwok-a");
    cr_assert_str_eq(m[1].instance_ids[0], "kwok-b");
    cr_assert_str_eq(m[0].kind_name, "spot_interrupted");
    cr_assert_null(m[0].parse_error);
    cr_assert_eq(src->ops->ack(src, &m[0]), 0);
    cr_assert_not(exists("a.json"));
    cr_assert(exists("b.json"));
    cr_assert_eq(src->ops->ack(src, &m[0]), 0, "acking twice is harmless");
}

Test(interruption_dir, malformed_file_is_a_noop_that_names_the_file)
{
    put("bad.json", "{\"detail-type\": ");
    kp_interruption *m = NULL;
    uint32_t n = 0;
    cr_assert_eq(src->ops->receive(src, arena, &m, &n, 0), 0);
    cr_assert_eq(n, 1);
    cr_assert_eq(m[0].kind, KP_INTERRUPT_NOOP);
    cr_assert_not_null(m[0].parse_error);
    cr_assert(strstr(m[0].parse_error, "bad.json") != NULL, "%s", m[0].parse_error);
    cr_assert_eq(src->ops->ack(src, &m[0]), 0);
    cr_assert_not(exists("bad.json"));
}

Test(interruption_dir, oversized_file_is_refused)
{
    size_t len = 300 * 1024;
    char *big = malloc(len + 1);
    memset(big, ' ', len);
    big[len] = '\0';
    put("big.json", big);
    free(big);
    kp_interruption *m = NULL;
    uint32_t n = 0;
    cr_assert_eq(src->ops->receive(src, arena, &m, &n, 0), 0);
    cr_assert_eq(n, 1);
    cr_assert_eq(m[0].kind, KP_INTERRUPT_NOOP);
    cr_assert(strstr(m[0].parse_error, "256 KiB") != NULL, "%s", m[0].parse_error);
}

Test(interruption_dir, at_most_ten_per_receive)
{
    char name[32];
    for (int i = 0; i < 12; i++) {
        snprintf(name, sizeof(name), "n%02d.json", i);
        put(name, SPOT("kwok-x"));
    }
    kp_interruption *m = NULL;
    uint32_t n = 0;
    cr_assert_eq(src->ops->receive(src, arena, &m, &n, 0), 0);
    cr_assert_eq(n, 10);
    cr_assert(strstr(m[9].handle, "n09.json") != NULL);
}

Test(interruption_dir, missing_directory_is_an_error)
{
    kp_interruption_source *s = NULL;
    cr_assert_eq(kp_interruption_dir_new("/nonexistent/kp-dir", kp_aws_interruption_parse, &s), KP_ENOTFOUND);
    cr_assert(strstr(kp_error_last(), "/nonexistent/kp-dir") != NULL);
    cr_assert_null(s);
    cr_assert_str_eq(src->ops->name(src), dir);
}
