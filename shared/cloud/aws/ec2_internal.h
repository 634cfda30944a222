/* Shared plumbing of the ec2_*.c files: form building, the call and pager,
 * and common XML readings. Not an interface. */
#ifndef KP_CLOUD_AWS_EC2_INTERNAL_H
#define KP_CLOUD_AWS_EC2_INTERNAL_H

#include "base/buf.h"
#include "cloud/aws/aws_xml.h"
#include "cloud/aws/ec2.h"

enum { KP_EC2_FORM_MAX = 4 << 20, KP_EC2_MAX_PAGES = 1000 };

/* Called with each answer's root element. */
typedef int (*kp_ec2_page_fn)(void *ctx, kp_arena *arena, xmlNode *root);

/* Send `action` with the form fields in `params` (may be empty). When `paged`,
 * repeat with NextToken until the answer has none. */
int kp_ec2_call(kp_aws_client *client, kp_arena *arena, const char *action, const kp_buf *params,
                bool paged, kp_ec2_page_fn fn, void *ctx);

int kp_ec2_form_list(kp_buf *form, const char *prefix, const char *const *values, size_t n);
int kp_ec2_form_filters(kp_buf *form, const kp_ec2_filter *filters, size_t n);
/* prefix.N.Key / prefix.N.Value */
int kp_ec2_form_tags(kp_buf *form, const char *prefix, const kp_ec2_tag *tags, size_t n);
/* prefix.N.ResourceType / prefix.N.Tag.M.Key ... */
int kp_ec2_form_tag_specs(kp_buf *form, const char *prefix, const kp_ec2_tag_spec *specs,
                          size_t n);
int kp_ec2_form_int(kp_buf *form, const char *key, int64_t value);
/* Only when value is non-NULL. */
int kp_ec2_form_opt(kp_buf *form, const char *key, const char *value);

/* Grow `items` (of *n elements) by `add` zeroed ones; returns the new array. */
void *kp_ec2_grow(kp_arena *arena, void *items, size_t n, size_t add, size_t size);
/* The tagSet under `node`. */
kp_ec2_tag *kp_ec2_parse_tags(kp_arena *arena, const xmlNode *node, size_t *n);
/* The <item> texts under `path`. */
const char **kp_ec2_parse_strings(kp_arena *arena, const xmlNode *node, const char *path,
                                  size_t *n);

/* A page callback for a list type {T *items; size_t n;}: each <item> under
 * set_path is parsed into a new element by parse(arena, item, T *). */
#define PAGE_FN(fn_name, list_type, item_type, set_path, parse)                                    \
    static int fn_name(void *ctx, kp_arena *a, xmlNode *root)                                      \
    {                                                                                              \
        list_type *out = ctx;                                                                      \
        xmlNode *first = kp_aws_xml_items(root, set_path);                                         \
        size_t add = kp_aws_xml_count(first);                                                      \
        out->items = kp_ec2_grow(a, out->items, out->n, add, sizeof(item_type));                   \
        for (xmlNode *it = first; it; it = kp_aws_xml_next(it))                                    \
            parse(a, it, &out->items[out->n++]);                                                   \
        return 0;                                                                                  \
    }

#endif
