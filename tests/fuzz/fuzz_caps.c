/*
 * libFuzzer target for the caps as users write them (api/caps.c): the four
 * settings and the dollar amounts of the NodePool annotation. Any input must
 * be accepted with a value in range or refused with a message, never crash;
 * what is accepted must describe itself without overflowing.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/caps.h"
#include "base/error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void one_setting(const char *flag, const char *text)
{
    kp_caps c = KP_CAPS_INIT;
    char buf[256];
    if (kp_caps_parse_setting(&c, flag, text, "--fuzz") < 0) {
        if (kp_caps_any(&c) || !*kp_error_last())
            abort(); /* a refusal sets nothing and says why */
        return;
    }
    if (!kp_caps_any(&c) || c.max_nodes > 1000000000000LL || (c.has_cores && c.cores < 0) ||
        (c.has_memory && c.memory < 0) || c.max_hourly_cost > KP_CAPS_MAX_DOLLARS)
        abort();
    kp_caps_describe(&c, buf, sizeof(buf));
    if (strlen(buf) >= sizeof(buf))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const flags[] = {"max-nodes-total", "cores-total", "memory-total", "max-hourly-cost"};
    char text[128];
    size_t n = size < sizeof(text) - 1 ? size : sizeof(text) - 1;
    memcpy(text, data, n);
    text[n] = '\0';
    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
        one_setting(flags[i], text);
    double v = -1;
    if (kp_caps_parse_dollars(text, "annotation", &v) == 0 && (v < 0 || v > KP_CAPS_MAX_DOLLARS))
        abort();
    return 0;
}
