/*
 * format/load: files, directories, buffers and streams into one list of
 * objects with their origins; Lists unpacked; JSON input; failures leave the
 * list as it was.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "format/json_out.h"
#include "format/load.h"

#define DATA KP_SOURCE_DIR "/tests/unit/data/yaml"

static const char *name_of(const kp_doc *d)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(d->obj, "metadata");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(meta, "name");
    return cJSON_IsString(name) ? name->valuestring : "";
}

static const char *kind_of(const kp_doc *d)
{
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(d->obj, "kind");
    return cJSON_IsString(kind) ? kind->valuestring : "";
}

Test(load, directory_in_sorted_order_with_origins)
{
    kp_doc_list *list = kp_doc_list_new();
    cr_assert_eq(kp_load_path(list, DATA "/tree", NULL), 0, "%s", kp_error_last());
    static const struct {
        const char *file, *name;
        size_t doc, line;
        long item;
    } want[] = {
        {"a.yaml", "default", 0, 2, -1},    {"a.yaml", "settings", 2, 8, -1},
        {"b.yml", "first", 0, 1, 0},        {"b.yml", "second", 0, 1, 1},
        {"c.json", "from-json", 0, 1, 0},   {"c.json", "big", 1, 4, -1},
        {"sub/d.yaml", "nested", 0, 1, -1}, {"sub/deeper/e.yaml", "deepest", 0, 1, -1},
    };
    size_t n = sizeof(want) / sizeof(want[0]);
    cr_assert_eq(kp_doc_list_count(list), n);
    for (size_t i = 0; i < n; i++) {
        const kp_doc *d = kp_doc_list_at(list, i);
        cr_expect_str_eq(d->file + strlen(DATA "/tree/"), want[i].file, "entry %zu", i);
        cr_expect_str_eq(name_of(d), want[i].name, "entry %zu", i);
        cr_expect_eq(d->doc, want[i].doc, "entry %zu", i);
        cr_expect_eq(d->item, want[i].item, "entry %zu", i);
        cr_expect_eq(d->line, want[i].line, "entry %zu", i);
    }
    cr_expect_null(kp_doc_list_at(list, n));
    cr_expect_null(kp_doc_list_free(list));
}

Test(load, non_recursive_directory_stays_at_the_top)
{
    kp_load_opts opts = KP_LOAD_OPTS_INIT;
    opts.recursive = 0;
    kp_doc_list *list = kp_doc_list_new();
    cr_assert_eq(kp_load_path(list, DATA "/tree/", &opts), 0, "%s", kp_error_last());
    cr_expect_eq(kp_doc_list_count(list), 6);
    /* a trailing slash does not double up */
    cr_expect_str_eq(kp_doc_list_at(list, 0)->file, DATA "/tree/a.yaml");
    kp_doc_list_free(list);
}

Test(load, explicit_file_is_read_whatever_its_extension)
{
    kp_doc_list *list = kp_doc_list_new();
    cr_assert_eq(kp_load_path(list, DATA "/manifest.txt", NULL), 0, "%s", kp_error_last());
    cr_assert_eq(kp_doc_list_count(list), 1);
    cr_expect_str_eq(kind_of(kp_doc_list_at(list, 0)), "ExplicitPathAnyExtension");
    kp_doc_list_free(list);
}

Test(load, missing_path_is_not_found)
{
    kp_doc_list *list = kp_doc_list_new();
    cr_expect_eq(kp_load_path(list, DATA "/no-such-file.yaml", NULL), KP_ENOTFOUND);
    cr_expect(strstr(kp_error_last(), "no-such-file.yaml: No such file or directory"), "%s",
              kp_error_last());
    kp_doc_list_free(list);
}

Test(load, yaml_error_names_file_document_line_and_column)
{
    kp_doc_list *list = kp_doc_list_new();
    cr_assert_eq(kp_load_path(list, DATA "/bad/broken.yaml", NULL), KP_EINVALID);
    cr_expect_str_eq(kp_error_last(),
                     DATA "/bad/broken.yaml: document 2, line 8 column 10: mapping values are "
                          "not allowed in this context");
    cr_expect_eq(kp_doc_list_count(list), 0, "the first document is rolled back");
    kp_doc_list_free(list);
}

/* cJSON reports where it stopped: at or just after the offending byte. */
Test(load, json_error_names_byte_offset_line_and_column)
{
    kp_doc_list *list = kp_doc_list_new();
    cr_assert_eq(kp_load_path(list, DATA "/bad/broken.json", NULL), KP_EINVALID);
    cr_expect_str_eq(kp_error_last(),
                     DATA "/bad/broken.json: byte offset 64, line 3 column 28: invalid JSON");
    kp_doc_list_free(list);
}

Test(load, a_document_must_be_an_object)
{
    kp_doc_list *list = kp_doc_list_new();
    cr_assert_eq(kp_load_path(list, DATA "/bad/scalar.yaml", NULL), KP_EINVALID);
    cr_expect_str_eq(kp_error_last(), DATA "/bad/scalar.yaml: document 1: expected a mapping (an "
                                           "object), got a string");
    cr_assert_eq(kp_load_buffer(list, "- a\n", 4, "seq", KP_LOAD_AUTO, NULL), KP_EINVALID);
    cr_expect_str_eq(kp_error_last(), "seq: document 1: expected a mapping (an object), got a "
                                      "sequence");
    cr_assert_eq(kp_load_buffer(list, "[1]", 3, "arr.json", KP_LOAD_JSON, NULL), KP_EINVALID);
    cr_expect_str_eq(kp_error_last(), "arr.json: document 1: expected a mapping (an object), got "
                                      "a sequence");
    kp_doc_list_free(list);
}

Test(load, failed_load_leaves_the_list_as_it_was)
{
    kp_doc_list *list = kp_doc_list_new();
    cr_assert_eq(kp_load_path(list, DATA "/tree/sub", NULL), 0);
    cr_assert_eq(kp_doc_list_count(list), 2);
    cr_expect_eq(kp_load_path(list, DATA "/bad", NULL), KP_EINVALID);
    cr_expect_eq(kp_doc_list_count(list), 2);
    cr_expect_str_eq(name_of(kp_doc_list_at(list, 1)), "deepest");
    kp_doc_list_free(list);
}

/* ---- Lists ------------------------------------------------------------------ */

Test(load, lists_unpack_into_their_items)
{
    const char *text = "kind: List\nitems:\n- {kind: A}\n- {kind: B}\n"
                       "---\nkind: PodList\nitems: [{kind: Pod}]\n"
                       "---\nkind: List\n"
                       "---\nkind: List\nitems: ~\n"
                       "---\nkind: WatchList\nitems: not-a-list\n"
                       "---\nkind: List\nitems: [{kind: List, items: [{kind: Inner}]}]\n";
    kp_doc_list *list = kp_doc_list_new();
    cr_assert_eq(kp_load_buffer(list, text, strlen(text), "lists", KP_LOAD_AUTO, NULL), 0, "%s",
                 kp_error_last());
    cr_assert_eq(kp_doc_list_count(list), 5);
    cr_expect_str_eq(kind_of(kp_doc_list_at(list, 0)), "A");
    cr_expect_str_eq(kind_of(kp_doc_list_at(list, 1)), "B");
    cr_expect_eq(kp_doc_list_at(list, 1)->item, 1);
    cr_expect_str_eq(kind_of(kp_doc_list_at(list, 2)), "Pod");
    cr_expect_eq(kp_doc_list_at(list, 2)->doc, 1);
    /* not a list without an items array */
    cr_expect_str_eq(kind_of(kp_doc_list_at(list, 3)), "WatchList");
    cr_expect_eq(kp_doc_list_at(list, 3)->item, -1);
    /* one level only */
    cr_expect_str_eq(kind_of(kp_doc_list_at(list, 4)), "List");
    cr_expect_eq(kp_doc_list_at(list, 4)->item, 0);
    char origin[128];
    cr_expect_str_eq(kp_doc_origin(kp_doc_list_at(list, 1), origin, sizeof(origin)),
                     "lists: document 1, items[1]");
    cr_expect_str_eq(kp_doc_origin(kp_doc_list_at(list, 3), origin, sizeof(origin)),
                     "lists: document 5");
    kp_doc_list_free(list);
}

Test(load, list_items_must_be_objects)
{
    const char *text = "kind: List\nitems: [{kind: A}, 3]\n";
    kp_doc_list *list = kp_doc_list_new();
    cr_assert_eq(kp_load_buffer(list, text, strlen(text), "l.yaml", KP_LOAD_YAML, NULL),
                 KP_EINVALID);
    cr_expect_str_eq(kp_error_last(), "l.yaml: document 1, items[1]: expected a mapping (an "
                                      "object), got a number");
    cr_expect_eq(kp_doc_list_count(list), 0);
    kp_doc_list_free(list);
}

/* ---- JSON ------------------------------------------------------------------- */

Test(load, json_numbers_stay_exact)
{
    kp_doc_list *list = kp_doc_list_new();
    cr_assert_eq(kp_load_path(list, DATA "/tree/c.json", NULL), 0, "%s", kp_error_last());
    const cJSON *spec = cJSON_GetObjectItem(kp_doc_list_at(list, 1)->obj, "spec");
    int64_t v = 0;
    cr_assert_eq(kp_json_int64(&v, cJSON_GetObjectItem(spec, "resourceVersion")), 0);
    cr_expect_eq(v, INT64_MAX);
    cr_assert_eq(kp_json_int64(&v, cJSON_GetObjectItem(spec, "size")), 0);
    cr_expect_eq(v, INT64_C(137438953472));
    kp_doc_list_free(list);
}

Test(load, json_stream_duplicates_nulls_and_sniffing)
{
    const char *text = "\xEF\xBB\xBF {\"kind\": \"A\", \"n\": [1.5, -9007199254740993, 3e2],"
                       " \"kind\": \"B\"}\n null \n{\"kind\": \"C\"}";
    kp_doc_list *list = kp_doc_list_new();
    cr_assert_eq(kp_load_buffer(list, text, strlen(text), "-", KP_LOAD_AUTO, NULL), 0, "%s",
                 kp_error_last());
    cr_assert_eq(kp_doc_list_count(list), 2);
    const kp_doc *d = kp_doc_list_at(list, 0);
    cr_expect_str_eq(kind_of(d), "B");
    cr_expect_eq(cJSON_GetArraySize(d->obj), 2);
    kp_buf b = KP_BUF_INIT(256);
    kp_json_out_json(&b, cJSON_GetObjectItem(d->obj, "n"), 0);
    cr_expect_str_eq(kp_buf_cstr(&b), "[1.5,-9007199254740993,300]");
    kp_buf_free(&b);
    cr_expect_eq(kp_doc_list_at(list, 1)->doc, 2);
    cr_expect_eq(kp_doc_list_at(list, 1)->line, 3);
    kp_doc_list_free(list);
}

struct json_error {
    const char *text;
    int code;
    const char *message;
};

static const struct json_error json_errors[] = {
    {"{\"a\": 1,}", KP_EINVALID, "j.json: byte offset 8, line 1 column 9: invalid JSON"},
    {"{\"a\": 1}\n{\"b\": }", KP_EINVALID, "j.json: byte offset 15, line 2 column 7: invalid JSON"},
    {"{\"a\": \"\xff\"}", KP_EINVALID, "j.json: byte offset 7, line 1 column 8: invalid UTF-8"},
    {"{\"a\": \"x\\u0000y\"}", KP_EINVALID,
     "j.json: byte offset 8, line 1 column 9: strings containing NUL are not supported"},
    {"{\"a\": {\"b\": {\"c\": {}}}}", KP_ETOOLARGE,
     "j.json: byte offset 18, line 1 column 19: nesting too deep"},
    {"\"text\"", KP_EINVALID, "j.json: document 1: expected a mapping (an object), got a string"},
};

Test(load, json_errors_carry_positions)
{
    kp_load_opts opts = KP_LOAD_OPTS_INIT;
    opts.limits.max_depth = 3;
    for (size_t i = 0; i < sizeof(json_errors) / sizeof(json_errors[0]); i++) {
        kp_doc_list *list = kp_doc_list_new();
        const struct json_error *c = &json_errors[i];
        cr_expect_eq(kp_load_buffer(list, c->text, strlen(c->text), "j.json", KP_LOAD_JSON, &opts),
                     c->code, "case %zu", i);
        cr_expect_str_eq(kp_error_last(), c->message, "case %zu: %s", i, kp_error_last());
        cr_expect_eq(kp_doc_list_count(list), 0);
        kp_doc_list_free(list);
    }
}

/* ---- buffers, streams, limits, ownership -------------------------------------- */

Test(load, buffer_sniffs_yaml_unless_it_starts_with_a_brace)
{
    kp_doc_list *list = kp_doc_list_new();
    cr_assert_eq(kp_load_buffer(list, "kind: A\n", 8, NULL, KP_LOAD_AUTO, NULL), 0);
    cr_assert_eq(kp_load_buffer(list, "  {\"kind\": \"B\"}", 15, NULL, KP_LOAD_AUTO, NULL), 0);
    /* YAML flow mappings are fine when the caller says YAML */
    cr_assert_eq(kp_load_buffer(list, "{kind: C}", 9, "c", KP_LOAD_YAML, NULL), 0);
    cr_expect_eq(kp_load_buffer(list, "{kind: D}", 9, "d", KP_LOAD_AUTO, NULL), KP_EINVALID);
    cr_assert_eq(kp_load_buffer(list, "", 0, "empty", KP_LOAD_AUTO, NULL), 0);
    cr_assert_eq(kp_doc_list_count(list), 3);
    cr_expect_str_eq(kp_doc_list_at(list, 0)->file, "<input>");
    cr_expect_str_eq(kind_of(kp_doc_list_at(list, 2)), "C");
    kp_doc_list_free(list);
}

Test(load, stream_reads_to_the_end)
{
    FILE *f = tmpfile();
    cr_assert_not_null(f);
    fputs("kind: A\n---\nkind: B\n", f);
    rewind(f);
    kp_doc_list *list = kp_doc_list_new();
    cr_assert_eq(kp_load_stream(list, f, "-", KP_LOAD_AUTO, NULL), 0, "%s", kp_error_last());
    cr_expect_eq(kp_doc_list_count(list), 2);
    cr_expect_str_eq(kp_doc_list_at(list, 1)->file, "-");
    kp_doc_list_free(list);
    fclose(f);
}

Test(load, size_limit_applies_to_files_and_streams)
{
    kp_load_opts opts = KP_LOAD_OPTS_INIT;
    opts.limits.max_bytes = 40;
    kp_doc_list *list = kp_doc_list_new();
    cr_expect_eq(kp_load_path(list, DATA "/tree/a.yaml", &opts), KP_ETOOLARGE);
    cr_expect(strstr(kp_error_last(), "a.yaml: input is more than the limit of 40 bytes"), "%s",
              kp_error_last());
    cr_expect_eq(kp_load_buffer(list, "kind: A\nkinb: B\nkinc: C\nkine: D\nkinx: E\n", 40, "x",
                                KP_LOAD_AUTO, &opts),
                 0);
    cr_expect_eq(kp_load_buffer(list, "kind: A\nkinb: B\nkinc: C\nkine: D\nkinx: EE\n", 41, "x",
                                KP_LOAD_AUTO, &opts),
                 KP_ETOOLARGE);
    cr_expect_str_eq(kp_error_last(), "x: input is 41 bytes, more than the limit of 40");
    kp_doc_list_free(list);
}

Test(load, object_count_is_capped)
{
    kp_load_opts opts = KP_LOAD_OPTS_INIT;
    opts.max_docs = 2;
    const char *text = "kind: List\nitems: [{a: 1}, {a: 2}, {a: 3}]\n";
    kp_doc_list *list = kp_doc_list_new();
    cr_expect_eq(kp_load_buffer(list, text, strlen(text), "many", KP_LOAD_AUTO, &opts),
                 KP_ETOOLARGE);
    cr_expect_str_eq(kp_error_last(), "many: document 1: more than 2 objects");
    cr_expect_eq(kp_doc_list_count(list), 0);
    kp_doc_list_free(list);
}

Test(load, take_hands_a_tree_to_the_caller)
{
    kp_doc_list *list = kp_doc_list_new();
    cr_assert_eq(kp_load_buffer(list, "kind: A\n", 8, "t", KP_LOAD_AUTO, NULL), 0);
    cJSON *obj = kp_doc_list_take(list, 0);
    cr_assert_not_null(obj);
    cr_expect_null(kp_doc_list_at(list, 0)->obj);
    cr_expect_null(kp_doc_list_take(list, 0));
    cr_expect_null(kp_doc_list_take(list, 5));
    kp_doc_list_free(list);
    cr_expect_str_eq(cJSON_GetObjectItem(obj, "kind")->valuestring, "A");
    cJSON_Delete(obj);
    cr_expect_null(kp_doc_list_free(NULL));
}

/* Symbolic links: to files followed, to directories not (no cycles). */
Test(load, symlinks_to_files_only)
{
    char dir[] = "/tmp/kp-load-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[256], target[256];
    snprintf(path, sizeof(path), "%s/real.yaml", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("kind: Real\n", f);
    fclose(f);
    snprintf(path, sizeof(path), "%s/link.yaml", dir);
    cr_assert_eq(symlink("real.yaml", path), 0);
    snprintf(path, sizeof(path), "%s/loop", dir);
    cr_assert_eq(symlink(".", path), 0);
    snprintf(path, sizeof(path), "%s/dangling.yaml", dir);
    cr_assert_eq(symlink("nowhere.yaml", path), 0);

    kp_doc_list *list = kp_doc_list_new();
    int err = kp_load_path(list, dir, NULL);
    size_t count = kp_doc_list_count(list);
    kp_doc_list_free(list);

    static const char *names[] = {"real.yaml", "link.yaml", "loop", "dangling.yaml"};
    for (size_t i = 0; i < 4; i++) {
        snprintf(target, sizeof(target), "%s/%s", dir, names[i]);
        unlink(target);
    }
    rmdir(dir);
    cr_assert_eq(err, 0, "%s", kp_error_last());
    cr_expect_eq(count, 2);
}
