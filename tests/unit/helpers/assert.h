/*
 * Assertions that say why a call failed: a call that returns 0 or a negative
 * KP_E* code is asserted to return 0, and a failure prints the call, the code
 * and the message the library set (kp_error_last), as libgit2's cl_git_pass
 * does, instead of each test printing it by hand.
 */
#ifndef KP_TEST_ASSERT_H
#define KP_TEST_ASSERT_H

#include "base/error.h"

#include <criterion/criterion.h>

/* Stop the test unless `call` returns 0. */
#define KP_ASSERT_OK(call)                                                                         \
    do {                                                                                           \
        long long kp_assert_ok_ = (call);                                                          \
        cr_assert_eq(kp_assert_ok_, 0, "%s: %lld: %s", #call, kp_assert_ok_, kp_error_last());     \
    } while (0)

/* Mark the test failed, and go on, unless `call` returns 0. */
#define KP_EXPECT_OK(call)                                                                         \
    do {                                                                                           \
        long long kp_expect_ok_ = (call);                                                          \
        cr_expect_eq(kp_expect_ok_, 0, "%s: %lld: %s", #call, kp_expect_ok_, kp_error_last());     \
    } while (0)

#endif
