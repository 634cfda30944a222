/*
 * libFuzzer target for the live what-if's object side (controller/
 * simulate_merge.c): --without arguments and manifests laid over "live"
 * objects. The input's first line holds up to four --without arguments
 * (space-separated); the rest is YAML whose documents alternate between the
 * live objects and the -f files, so names repeat and replacements happen.
 * Any input must merge or fail with a message, never crash or leak; nothing
 * comes out that did not go in.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "controller/simulate_merge.h"
#include "format/load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Space-separated arguments of `line` (written over with NULs). */
static size_t parse_without(char *line, kp_sim_without *w)
{
    size_t n = 0;
    for (char *tok = line; *tok && n < 4;) {
        char *end = strchr(tok, ' ');
        if (end)
            *end = '\0';
        if (*tok && kp_sim_without_parse(tok, &w[n]) == 0)
            n++;
        if (!end)
            break;
        tok = end + 1;
    }
    return n;
}

static void split(kp_doc_list *all, kp_doc_list *live, kp_doc_list *files)
{
    for (size_t i = 0; i < kp_doc_list_count(all); i++) {
        const kp_doc *d = kp_doc_list_at(all, i);
        cJSON *obj = kp_doc_list_take(all, i);
        if (obj)
            kp_doc_list_append(i % 2 ? files : live, obj, d->file, d->doc, d->item);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nl = memchr(data, '\n', size);
    size_t first = nl ? (size_t)(nl - data) : size;
    if (first > 512)
        return 0;
    char line[513];
    memcpy(line, data, first);
    line[first] = '\0';
    kp_sim_without w[4];
    size_t n_without = parse_without(line, w);
    kp_doc_list *all = kp_doc_list_new(), *live = kp_doc_list_new(), *files = kp_doc_list_new();
    kp_doc_list *out = kp_doc_list_new();
    size_t rest = nl ? size - first - 1 : 0;
    if (kp_load_buffer(all, nl ? (const char *)nl + 1 : "", rest, "fuzz.yaml", KP_LOAD_YAML, NULL) == 0) {
        split(all, live, files);
        size_t in = kp_doc_list_count(live) + kp_doc_list_count(files);
        kp_sim_merge_opts o = {"fuzz", w, n_without};
        kp_sim_merge_report rep;
        kp_sim_merge(live, files, &o, out, &rep);
        if (kp_doc_list_count(out) > in)
            abort();
        kp_sim_merge_report_clear(&rep);
    }
    kp_doc_list_free(out);
    kp_doc_list_free(files);
    kp_doc_list_free(live);
    kp_doc_list_free(all);
    return 0;
}
