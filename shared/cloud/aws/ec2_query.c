/* EC2 Query plumbing: forms, the paged call, tags (see ec2_internal.h). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "cloud/aws/ec2_internal.h"

int kp_ec2_form_list(kp_buf *form, const char *prefix, const char *const *values, size_t n)
{
    int err = 0;
    for (size_t i = 0; i < n && err == 0; i++)
        err = kp_aws_form_addf(form, values[i], "%s.%zu", prefix, i + 1);
    return err;
}

int kp_ec2_form_filters(kp_buf *form, const kp_ec2_filter *filters, size_t n)
{
    int err = 0;
    for (size_t i = 0; i < n && err == 0; i++) {
        err = kp_aws_form_addf(form, filters[i].name, "Filter.%zu.Name", i + 1);
        for (size_t j = 0; j < filters[i].n_values && err == 0; j++)
            err = kp_aws_form_addf(form, filters[i].values[j], "Filter.%zu.Value.%zu", i + 1,
                                   j + 1);
    }
    return err;
}

int kp_ec2_form_tags(kp_buf *form, const char *prefix, const kp_ec2_tag *tags, size_t n)
{
    int err = 0;
    for (size_t i = 0; i < n && err == 0; i++) {
        err = kp_aws_form_addf(form, tags[i].key, "%s.%zu.Key", prefix, i + 1);
        if (err == 0)
            err = kp_aws_form_addf(form, tags[i].value ? tags[i].value : "", "%s.%zu.Value",
                                   prefix, i + 1);
    }
    return err;
}

int kp_ec2_form_tag_specs(kp_buf *form, const char *prefix, const kp_ec2_tag_spec *specs,
                          size_t n)
{
    int err = 0;
    char sub[128];
    for (size_t i = 0; i < n && err == 0; i++) {
        err = kp_aws_form_addf(form, specs[i].resource_type, "%s.%zu.ResourceType", prefix, i + 1);
        snprintf(sub, sizeof(sub), "%s.%zu.Tag", prefix, i + 1);
        if (err == 0)
            err = kp_ec2_form_tags(form, sub, specs[i].tags, specs[i].n_tags);
    }
    return err;
}

int kp_ec2_form_int(kp_buf *form, const char *key, int64_t value)
{
    char text[32];
    snprintf(text, sizeof(text), "%" PRId64, value);
    return kp_aws_form_add(form, key, text);
}

int kp_ec2_form_opt(kp_buf *form, const char *key, const char *value)
{
    return value ? kp_aws_form_add(form, key, value) : 0;
}

void *kp_ec2_grow(kp_arena *arena, void *items, size_t n, size_t add, size_t size)
{
    return kp_arena_grow(arena, items, n, n + add, size);
}

kp_ec2_tag *kp_ec2_parse_tags(kp_arena *arena, const xmlNode *node, size_t *n)
{
    xmlNode *first = kp_aws_xml_items(node, "tagSet");
    *n = kp_aws_xml_count(first);
    kp_ec2_tag *tags = KP_ARENA_NEW(arena, kp_ec2_tag, *n ? *n : 1);
    size_t i = 0;
    for (xmlNode *it = first; it; it = kp_aws_xml_next(it), i++) {
        tags[i].key = kp_aws_xml_text(arena, it, "key");
        tags[i].value = kp_aws_xml_text(arena, it, "value");
        if (!tags[i].value)
            tags[i].value = "";
    }
    return tags;
}

const char **kp_ec2_parse_strings(kp_arena *arena, const xmlNode *node, const char *path,
                                  size_t *n)
{
    xmlNode *first = kp_aws_xml_items(node, path);
    *n = kp_aws_xml_count(first);
    const char **out = KP_ARENA_NEW(arena, const char *, *n ? *n : 1);
    size_t i = 0;
    for (xmlNode *it = first; it; it = kp_aws_xml_next(it))
        out[i++] = kp_aws_xml_text(arena, it, "");
    return out;
}

const char *kp_ec2_tag_get(const kp_ec2_tag *tags, size_t n_tags, const char *key)
{
    for (size_t i = 0; i < n_tags; i++)
        if (strcmp(tags[i].key, key) == 0)
            return tags[i].value;
    return NULL;
}

static int one_page(kp_aws_client *c, kp_arena *arena, const char *action, const kp_buf *params,
                    const char *token, kp_ec2_page_fn fn, void *ctx, char **next)
{
    kp_buf form = KP_BUF_INIT(KP_EC2_FORM_MAX), answer = KP_BUF_INIT(SIZE_MAX / 2);
    int err = kp_aws_form_add(&form, "Action", action);
    if (err == 0)
        err = kp_aws_form_add(&form, "Version", KP_EC2_API_VERSION);
    if (err == 0 && params && params->len)
        err = kp_buf_printf(&form, "&%s", kp_buf_cstr(params));
    if (err == 0 && token)
        err = kp_aws_form_add(&form, "NextToken", token);
    kp_aws_request req = {"ec2", action, KP_AWS_QUERY, NULL, form.data, form.len, NULL, 0, NULL, NULL};
    if (err == 0)
        err = kp_aws_client_send(c, &req, &answer);
    xmlDoc *doc = NULL;
    if (err == 0 && (err = kp_aws_xml_parse(&doc, answer.data, answer.len)) < 0)
        kp_error_wrap(err, "ec2 %s", action);
    if (err == 0) {
        xmlNode *root = xmlDocGetRootElement(doc);
        err = fn(ctx, arena, root);
        char *tok = kp_aws_xml_text(arena, root, "nextToken");
        *next = tok && *tok ? tok : NULL;
    }
    if (doc)
        xmlFreeDoc(doc);
    kp_buf_free(&answer);
    kp_buf_free(&form);
    return err;
}

int kp_ec2_call(kp_aws_client *c, kp_arena *arena, const char *action, const kp_buf *params,
                bool paged, kp_ec2_page_fn fn, void *ctx)
{
    char *token = NULL;
    for (int page = 0; page < KP_EC2_MAX_PAGES; page++) {
        char *next = NULL;
        int err = one_page(c, arena, action, params, token, fn, ctx, &next);
        if (err < 0)
            return err;
        if (!paged || !next)
            return 0;
        if (token && strcmp(token, next) == 0)
            return kp_error_set(KP_ERROR, "ec2 %s: the same NextToken twice", action);
        token = next;
    }
    return kp_error_set(KP_ETOOLARGE, "ec2 %s: more than %d pages", action, KP_EC2_MAX_PAGES);
}
