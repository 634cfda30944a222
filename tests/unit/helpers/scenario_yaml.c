/* Scenario manifests as YAML text (see scenario.h). */
#include "helpers/scenario.h"

#include <criterion/criterion.h>
#include <string.h>

#define KP_YAML_MAX (4u << 20)

void kp_yaml_vadd(kp_yaml *y, const char *fmt, va_list ap)
{
    if (!y->buf.max) kp_buf_init(&y->buf, KP_YAML_MAX);
    cr_assert_eq(kp_buf_vprintf(&y->buf, fmt, ap), 0, "scenario larger than %u bytes", KP_YAML_MAX);
}

void kp_yaml_add(kp_yaml *y, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kp_yaml_vadd(y, fmt, ap);
    va_end(ap);
}

void kp_yaml_vdoc(kp_yaml *y, const char *fmt, va_list ap)
{
    kp_yaml_add(y, "---\n");
    kp_yaml_vadd(y, fmt, ap);
    if (y->buf.data[y->buf.len - 1] != '\n') kp_yaml_add(y, "\n");
}

void kp_yaml_doc(kp_yaml *y, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kp_yaml_vdoc(y, fmt, ap);
    va_end(ap);
}

const char *kp_yaml_text(const kp_yaml *y)
{
    return kp_buf_cstr(&y->buf);
}

void kp_yaml_reset(kp_yaml *y)
{
    kp_buf_reset(&y->buf);
}

void kp_yaml_free(kp_yaml *y)
{
    kp_buf_free(&y->buf);
    memset(y, 0, sizeof(*y));
}

/* ", " before `part` when it is set and not empty. */
#define OPT(part) ((part) && *(part) ? ", " : ""), ((part) ? (part) : "")

static void template_metadata(kp_yaml *y, const kp_yaml_pool *p)
{
    bool labels = p->template_labels != NULL, meta = p->template_meta && *p->template_meta;
    if (!labels && !meta) return;
    kp_yaml_add(y, "metadata: {");
    if (labels) kp_yaml_add(y, "labels: {%s}", p->template_labels);
    kp_yaml_add(y, "%s%s}, ", labels && meta ? ", " : "", meta ? p->template_meta : "");
}

void kp_yaml_nodepool(kp_yaml *y, const kp_yaml_pool *p)
{
    kp_yaml_add(y,
                "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: %s%s%s}\nspec: "
                "{template: {",
                p->name, OPT(p->meta));
    template_metadata(y, p);
    kp_yaml_add(
        y,
        "spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}, "
        "requirements: [%s]%s%s}}%s%s}\n",
        p->requirements ? p->requirements : "", OPT(p->template_spec), OPT(p->spec));
}
