/* The unavailable-offerings cache: marks, expiry on a fake clock, sequence numbers. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>

#include "cloud/aws/ice_cache.h"

static kp_fake_clock clk;
static kp_aws_ice_cache *ice;

static void setup(void)
{
    kp_fake_clock_init(&clk, 1000 * KP_NS_PER_SEC);
    ice = kp_aws_ice_cache_new(&clk.base);
}

static void teardown(void)
{
    ice = kp_aws_ice_cache_free(ice);
}

TestSuite(ice, .init = setup, .fini = teardown);

Test(ice, empty_cache_has_everything_available)
{
    cr_assert_not(kp_aws_ice_unavailable(ice, "spot", "m5.large", "us-east-1a"));
    cr_assert_eq(kp_aws_ice_count(ice), 0);
    cr_assert_eq(kp_aws_ice_seqnum(ice), 0);
}

Test(ice, a_mark_hits_only_its_own_offering)
{
    kp_aws_ice_mark(ice, "spot", "m5.large", "us-east-1a", "InsufficientInstanceCapacity");
    cr_assert(kp_aws_ice_unavailable(ice, "spot", "m5.large", "us-east-1a"));
    cr_assert_not(kp_aws_ice_unavailable(ice, "on-demand", "m5.large", "us-east-1a"));
    cr_assert_not(kp_aws_ice_unavailable(ice, "spot", "m5.large", "us-east-1b"));
    cr_assert_not(kp_aws_ice_unavailable(ice, "spot", "m5.xlarge", "us-east-1a"));
    /* keys are joined with ':' — a type containing the separator must not alias */
    cr_assert_not(kp_aws_ice_unavailable(ice, "spot:m5.large", "us-east-1a", ""));
}

Test(ice, entries_expire_after_three_minutes)
{
    kp_aws_ice_mark(ice, "spot", "m5.large", "us-east-1a", NULL);
    clk.ns += KP_AWS_ICE_TTL_NS - 1;
    cr_assert(kp_aws_ice_unavailable(ice, "spot", "m5.large", "us-east-1a"));
    clk.ns += 1;
    cr_assert_not(kp_aws_ice_unavailable(ice, "spot", "m5.large", "us-east-1a"));
    cr_assert_eq(kp_aws_ice_count(ice), 0);
}

Test(ice, marking_again_restarts_the_ttl)
{
    kp_aws_ice_mark(ice, "on-demand", "c5.large", "us-east-1b", "a");
    clk.ns += 120 * KP_NS_PER_SEC;
    kp_aws_ice_mark(ice, "on-demand", "c5.large", "us-east-1b", "b");
    cr_assert_eq(kp_aws_ice_count(ice), 1);
    clk.ns += 120 * KP_NS_PER_SEC; /* 240 s after the first, 120 s after the second */
    cr_assert(kp_aws_ice_unavailable(ice, "on-demand", "c5.large", "us-east-1b"));
    clk.ns += 60 * KP_NS_PER_SEC;
    cr_assert_not(kp_aws_ice_unavailable(ice, "on-demand", "c5.large", "us-east-1b"));
}

Test(ice, a_capacity_type_mark_covers_every_offering_of_it)
{
    kp_aws_ice_mark_capacity_type(ice, "spot", "AuthFailure.ServiceLinkedRoleCreationNotPermitted");
    cr_assert(kp_aws_ice_unavailable(ice, "spot", "m5.large", "us-east-1a"));
    cr_assert(kp_aws_ice_unavailable(ice, "spot", "t3.micro", "us-west-2c"));
    cr_assert_not(kp_aws_ice_unavailable(ice, "on-demand", "m5.large", "us-east-1a"));
    clk.ns += KP_AWS_ICE_TTL_NS;
    cr_assert_not(kp_aws_ice_unavailable(ice, "spot", "m5.large", "us-east-1a"));
}

Test(ice, seqnum_moves_on_marks_and_on_expiry_but_not_on_reads)
{
    uint64_t s0 = kp_aws_ice_seqnum(ice);
    kp_aws_ice_mark(ice, "spot", "m5.large", "us-east-1a", NULL);
    uint64_t s1 = kp_aws_ice_seqnum(ice);
    cr_assert_neq(s0, s1);
    (void)kp_aws_ice_unavailable(ice, "spot", "m5.large", "us-east-1a");
    cr_assert_eq(kp_aws_ice_seqnum(ice), s1);
    clk.ns += KP_AWS_ICE_TTL_NS + 1;
    uint64_t s2 = kp_aws_ice_seqnum(ice);
    cr_assert_neq(s1, s2, "expiry alone must change the sequence number");
    cr_assert_eq(kp_aws_ice_seqnum(ice), s2);
}

Test(ice, blank_names_are_ignored)
{
    kp_aws_ice_mark(ice, "", "m5.large", "us-east-1a", NULL);
    kp_aws_ice_mark(ice, "spot", NULL, "us-east-1a", NULL);
    kp_aws_ice_mark(ice, "spot", "m5.large", "", NULL);
    kp_aws_ice_mark_capacity_type(ice, NULL, NULL);
    cr_assert_eq(kp_aws_ice_count(ice), 0);
    cr_assert_eq(kp_aws_ice_seqnum(ice), 0);
    cr_assert_not(kp_aws_ice_unavailable(ice, NULL, "m5.large", "us-east-1a"));
    kp_aws_ice_mark(NULL, "spot", "m5.large", "us-east-1a", NULL); /* no crash */
}

Test(ice, flush_forgets_everything)
{
    kp_aws_ice_mark(ice, "spot", "m5.large", "us-east-1a", NULL);
    kp_aws_ice_mark(ice, "spot", "m5.large", "us-east-1b", NULL);
    uint64_t s = kp_aws_ice_seqnum(ice);
    kp_aws_ice_flush(ice);
    cr_assert_eq(kp_aws_ice_count(ice), 0);
    cr_assert_neq(kp_aws_ice_seqnum(ice), s);
    cr_assert_not(kp_aws_ice_unavailable(ice, "spot", "m5.large", "us-east-1a"));
}

static void *marker(void *arg)
{
    int id = *(int *)arg;
    char type[32];
    for (int i = 0; i < 200; i++) {
        snprintf(type, sizeof(type), "t%d.%d", id, i % 20);
        kp_aws_ice_mark(ice, "spot", type, "us-east-1a", "x");
        (void)kp_aws_ice_unavailable(ice, "spot", type, "us-east-1a");
    }
    return NULL;
}

Test(ice, concurrent_marks_are_all_kept)
{
    pthread_t th[4];
    int ids[4] = {0, 1, 2, 3};
    for (int i = 0; i < 4; i++)
        pthread_create(&th[i], NULL, marker, &ids[i]);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    cr_assert_eq(kp_aws_ice_count(ice), 80);
    cr_assert_eq(kp_aws_ice_seqnum(ice), 800);
}

Test(ice, free_accepts_null)
{
    cr_assert_null(kp_aws_ice_cache_free(NULL));
}
