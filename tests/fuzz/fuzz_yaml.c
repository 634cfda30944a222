/*
 * libFuzzer target for format/yaml and format/json_out: any input must either
 * parse or fail with a message, never crash, leak or hang; and every document
 * that parses must survive JSON -> YAML -> JSON unchanged (the emitter's
 * quoting is exactly what the reader needs). The same bytes also go through
 * the JSON loader path.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/buf.h"
#include "format/json_out.h"
#include "format/load.h"
#include "format/yaml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const kp_yaml_limits limits = {1 << 20, 64, 200000, 20000};

static int round_trip(void *ctx, cJSON *root, const kp_yaml_doc_info *info)
{
    (void)ctx;
    (void)info;
    kp_buf out = KP_BUF_INIT(8 << 20);
    cJSON *again = NULL;
    if (kp_json_out_yaml(&out, root, 0) == 0) {
        if (kp_yaml_parse_one(&again, out.data, out.len, "again", &limits) != 0 ||
            !cJSON_Compare(root, again, 1))
            abort(); /* what we write, we must read back the same */
    }
    kp_buf_reset(&out);
    kp_json_out_json(&out, root, 1);
    kp_buf_free(&out);
    cJSON_Delete(again);
    cJSON_Delete(root);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    kp_yaml_parse_stream((const char *)data, size, "fuzz", &limits, round_trip, NULL);

    kp_load_opts opts = KP_LOAD_OPTS_INIT;
    opts.limits = limits;
    kp_doc_list *list = kp_doc_list_new();
    kp_load_buffer(list, (const char *)data, size, "fuzz.json", KP_LOAD_JSON, &opts);
    kp_doc_list_free(list);
    return 0;
}
