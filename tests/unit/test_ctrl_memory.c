/* The controller's allocator settings and trimmer (controller/memory.h). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "controller/memory.h"

TestSuite(memory, .timeout = 30);

Test(memory, settings_in_the_environment_are_left_alone)
{
    setenv("MALLOC_ARENA_MAX", "1", 1);
    cr_expect(!kp_memory_tune(), "MALLOC_ARENA_MAX set: nothing changed");
    unsetenv("MALLOC_ARENA_MAX");
    setenv("GLIBC_TUNABLES", "glibc.malloc.arena_max=1", 1);
    cr_expect(!kp_memory_tune(), "GLIBC_TUNABLES set: nothing changed");
    unsetenv("GLIBC_TUNABLES");
    extern char **environ;
    for (char **e = environ; *e; e++)
        cr_assert(strncmp(*e, "MALLOC_", 7) != 0, "run without MALLOC_* in the environment (%s)", *e);
    cr_expect(kp_memory_tune(), "nothing set: the controller's settings apply");
}

Test(memory, the_trimmer_trims_every_period_and_stops_when_asked)
{
    kp_memory_trimmer *t = kp_memory_trimmer_start(10);
    cr_assert_not_null(t);
    struct timespec ms = {0, 10 * 1000000};
    for (int i = 0; i < 1000 && kp_memory_trimmer_runs(t) < 3; i++)
        nanosleep(&ms, NULL);
    cr_expect_geq(kp_memory_trimmer_runs(t), 3);
    cr_expect_null(kp_memory_trimmer_stop(t));
    cr_expect_null(kp_memory_trimmer_stop(NULL));
}

Test(memory, stopping_does_not_wait_for_the_period)
{
    /* A period of an hour: stop wakes the thread at once (the suite's
     * timeout is what would catch a stop that waited). */
    kp_memory_trimmer *t = kp_memory_trimmer_start(3600 * 1000);
    cr_assert_not_null(t);
    cr_expect_eq(kp_memory_trimmer_runs(t), 0);
    kp_memory_trimmer_stop(t);
}
