/* The string map's conditional removal (shared/kube/strmap.c), which the
 * event queue and the consistency controller use to forget expired keys. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "kube/strmap.h"

static bool below(void *ctx, const char *key, void *value)
{
    (void)key;
    return (intptr_t)value < *(const intptr_t *)ctx;
}

static int freed;
static void count_free(void *value)
{
    (void)value;
    freed++;
}

Test(strmap, remove_if_drops_exactly_the_entries_asked_for)
{
    kp_strmap m = KP_STRMAP_INIT;
    char key[16];
    for (intptr_t i = 1; i <= 100; i++) {
        snprintf(key, sizeof(key), "k%ld", (long)i);
        kp_strmap_put(&m, key, (void *)i);
    }
    intptr_t limit = 41;
    freed = 0;
    cr_expect_eq(kp_strmap_remove_if(&m, below, &limit, count_free), 40);
    cr_expect_eq(freed, 40, "each dropped value is given to free_value");
    cr_expect_eq(m.count, 60);
    cr_expect_not(kp_strmap_has(&m, "k1"));
    cr_expect_not(kp_strmap_has(&m, "k40"));
    cr_expect_eq((intptr_t)kp_strmap_get(&m, "k41"), 41);
    cr_expect_eq((intptr_t)kp_strmap_get(&m, "k100"), 100);
    limit = 0;
    cr_expect_eq(kp_strmap_remove_if(&m, below, &limit, NULL), 0);
    limit = 1000;
    cr_expect_eq(kp_strmap_remove_if(&m, below, &limit, NULL), 60);
    cr_expect_eq(m.count, 0);
    kp_strmap_clear(&m, NULL);
}

Test(strmap, remove_if_on_an_empty_map)
{
    kp_strmap m = KP_STRMAP_INIT;
    intptr_t limit = 5;
    cr_expect_eq(kp_strmap_remove_if(&m, below, &limit, NULL), 0);
}
