/*
 * The controller's registry against Karpenter v1.14's metrics reference
 * (docs/reference/karpenter-v1.14-metrics.tsv, written from the public
 * reference and the v1.14 sources) and against docs/reference/metrics.md:
 * a family missing, renamed, retyped or relabelled fails here, and so does
 * a family served but not listed, or listed as not served but registered.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "controller/metrics_ctrl.h"

#define TSV KP_SOURCE_DIR "/docs/reference/karpenter-v1.14-metrics.tsv"
#define DOC KP_SOURCE_DIR "/docs/reference/metrics.md"
#define MAX_ROWS 256

typedef struct row {
    char *name, *type, *labels, *status, *note;
    int line;
} row;

static kp_metrics *registry;
static kp_ctrl_metrics metrics;
static char *tsv_text, *doc_text;
static row rows[MAX_ROWS];
static size_t n_rows;

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = calloc((size_t)n + 1, 1);
    cr_assert_eq(fread(s, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    return s;
}

/* Cut `s` at the next `sep` (or the end); the rest after it, or NULL. */
static char *cut(char *s, char sep)
{
    char *p = s ? strchr(s, sep) : NULL;
    if (!p)
        return NULL;
    *p = '\0';
    return p + 1;
}

static void parse_tsv(void)
{
    int line = 0;
    for (char *l = tsv_text, *next; l && *l; l = next) {
        next = cut(l, '\n');
        line++;
        if (*l == '#' || *l == '\0')
            continue;
        cr_assert_lt(n_rows, MAX_ROWS);
        row *r = &rows[n_rows++];
        r->line = line;
        r->name = l;
        r->type = cut(r->name, '\t');
        r->labels = cut(r->type, '\t');
        r->status = cut(r->labels, '\t');
        r->note = cut(r->status, '\t');
        cr_assert(r->note, "line %d: five tab-separated columns", line);
    }
}

static void setup(void)
{
    registry = kp_metrics_new();
    cr_assert_eq(kp_ctrl_metrics_init(&metrics, registry), 0, "%s", kp_error_last());
    cr_assert_eq(kp_ctrl_metrics_init_status(&metrics, registry, "karpenter.k8s.aws", "EC2NodeClass"), 0, "%s",
                 kp_error_last());
    tsv_text = slurp(TSV);
    doc_text = slurp(DOC);
    parse_tsv();
}

static void teardown(void)
{
    kp_ctrl_metrics_fini(&metrics);
    registry = kp_metrics_free(registry);
    free(tsv_text);
    free(doc_text);
    n_rows = 0;
}

TestSuite(metrics_reference, .init = setup, .fini = teardown);

static const row *find_row(const char *name)
{
    for (size_t i = 0; i < n_rows; i++)
        if (!strcmp(rows[i].name, name))
            return &rows[i];
    return NULL;
}

static bool desc_of(const char *name, kp_metric_desc *out)
{
    kp_metric_desc d[MAX_ROWS];
    size_t n = kp_metrics_describe(registry, d, MAX_ROWS);
    cr_assert_leq(n, MAX_ROWS);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(d[i].name, name)) {
            *out = d[i];
            return true;
        }
    return false;
}

/* Whether the comma-separated `want` ("-" for none) names exactly the
 * family's labels, in any order (Prometheus does not order labels). */
static bool same_labels(const char *want, const kp_metric_desc *d, char *why, size_t size)
{
    size_t n = 0;
    char copy[2048];
    snprintf(copy, sizeof(copy), "%s", strcmp(want, "-") ? want : "");
    for (char *l = copy, *next; *copy && l; l = next, n++) {
        next = cut(l, ',');
        bool found = false;
        for (size_t i = 0; i < d->n_labels && !found; i++)
            found = !strcmp(d->labels[i], l);
        if (!found) {
            snprintf(why, size, "label %.200s is not registered", l);
            return false;
        }
    }
    if (n != d->n_labels)
        snprintf(why, size, "%zu labels registered, %zu listed", d->n_labels, n);
    return n == d->n_labels;
}

Test(metrics_reference, every_listed_family_is_served_as_listed)
{
    size_t served = 0, omitted = 0, ours = 0;
    for (size_t i = 0; i < n_rows; i++) {
        const row *r = &rows[i];
        kp_metric_desc d;
        bool registered = desc_of(r->name, &d);
        if (!strcmp(r->status, "omitted")) {
            omitted++;
            cr_expect_not(registered, "%s is listed as not served but is registered", r->name);
            cr_expect(*r->note, "line %d: %s is not served: the note must say why", r->line, r->name);
            continue;
        }
        cr_assert(!strcmp(r->status, "served") || !strcmp(r->status, "ours"), "line %d: status %s", r->line,
                  r->status);
        served += !strcmp(r->status, "served"), ours += !strcmp(r->status, "ours");
        if (!strcmp(r->status, "ours"))
            cr_expect(*r->note, "line %d: %s: the note must say where it comes from", r->line, r->name);
        if (!registered) {
            cr_expect_fail("%s (line %d) is not registered", r->name, r->line);
            continue;
        }
        cr_expect_str_eq(kp_metric_type_name(d.type), r->type, "%s", r->name);
        char why[256] = "";
        if (strcmp(r->labels, "*") != 0)
            cr_expect(same_labels(r->labels, &d, why, sizeof(why)), "%s: %s", r->name, why);
    }
    cr_log_info("reference: %zu served, %zu not served; %zu more of ours", served, omitted, ours);
    cr_expect_geq(served, 100, "Karpenter's families are the bulk of the list");
}

Test(metrics_reference, every_registered_family_is_listed)
{
    kp_metric_desc d[MAX_ROWS];
    size_t n = kp_metrics_describe(registry, d, MAX_ROWS);
    for (size_t i = 0; i < n; i++) {
        const row *r = find_row(d[i].name);
        cr_expect(r, "%s is registered but not in the reference list", d[i].name);
        if (r)
            cr_expect(strcmp(r->status, "omitted") != 0, "%s", d[i].name);
    }
}

/* ------------------------------------------------------ metrics.md */

/* The section of the page from `heading` to the next heading of its level. */
static char *section(const char *heading)
{
    const char *start = strstr(doc_text, heading);
    cr_assert(start, "metrics.md has no \"%s\"", heading);
    const char *end = strstr(start + strlen(heading), "\n## ");
    size_t n = end ? (size_t)(end - start) : strlen(start);
    char *s = calloc(n + 1, 1);
    memcpy(s, start, n);
    return s;
}

/* Backquoted words of `cell`, comma-joined, into `out`. */
static void quoted(const char *cell, char *out, size_t size)
{
    size_t len = 0;
    out[0] = '\0';
    for (const char *p = strchr(cell, '`'); p; p = strchr(p, '`')) {
        const char *end = strchr(p + 1, '`');
        if (!end)
            break;
        len += (size_t)snprintf(out + len, len < size ? size - len : 0, "%s%.*s", len ? "," : "",
                                (int)(end - p - 1), p + 1);
        p = end + 1;
    }
}

/* The node labels the page lists after "node labels:" in its Nodes part. */
static bool node_label(const char *name)
{
    for (size_t i = 0; i < KP_NODE_METRIC_LABELS; i++)
        if (!strcmp(kp_node_metric_labels[i].metric, name))
            return true;
    return !strcmp(name, "node_name") || !strcmp(name, "phase") || !strcmp(name, "managed");
}

/* One table row "| `name` | type | labels | ... |": checked against the registry. */
static void check_doc_row(char *line, size_t *documented)
{
    char *cells[4] = {NULL};
    char *p = line + 1;
    for (int i = 0; i < 4 && p; i++) {
        cells[i] = p;
        p = cut(p, '|');
    }
    cr_assert(cells[3], "a metrics.md row has four cells: %s", line);
    char name[256], type[32], labels[2048];
    quoted(cells[0], name, sizeof(name));
    sscanf(cells[1], " %31s", type);
    kp_metric_desc d;
    if (!desc_of(name, &d)) {
        cr_expect_fail("metrics.md documents %s, which is not registered", name);
        return;
    }
    (*documented)++;
    cr_expect_str_eq(type, kp_metric_type_name(d.type), "metrics.md: the type of %s", name);
    quoted(cells[2], labels, sizeof(labels));
    bool with_node_labels = strstr(cells[2], "node labels") != NULL;
    for (size_t i = 0; i < d.n_labels; i++) {
        char want[128];
        snprintf(want, sizeof(want), ",%s,", d.labels[i]);
        char have[2100];
        snprintf(have, sizeof(have), ",%s,", labels);
        cr_expect(strstr(have, want) || (with_node_labels && node_label(d.labels[i])),
                  "metrics.md: %s lacks its label %s", name, d.labels[i]);
    }
    size_t listed = 0;
    for (const char *q = labels; *labels && q; q = strchr(q + 1, ','))
        listed++;
    cr_expect_leq(listed, d.n_labels, "metrics.md lists labels %s of %s that it does not have", labels, name);
}

Test(metrics_reference, metrics_md_documents_the_registry)
{
    char *controller = section("## Controller");
    size_t documented = 0;
    for (char *l = controller, *next; l && *l; l = next) {
        next = cut(l, '\n');
        if (!strncmp(l, "| `", 3))
            check_doc_row(l, &documented);
    }
    free(controller);
    kp_metric_desc d[MAX_ROWS];
    size_t n = kp_metrics_describe(registry, d, MAX_ROWS);
    cr_expect_eq(documented, n, "metrics.md documents %zu of the %zu registered families", documented, n);
    for (size_t i = 0; i < KP_NODE_METRIC_LABELS; i++) {
        char want[128];
        snprintf(want, sizeof(want), "`%s`", kp_node_metric_labels[i].metric);
        cr_expect(strstr(doc_text, want), "metrics.md does not list the node label %s", want);
    }
}

Test(metrics_reference, metrics_md_says_why_each_omitted_family_is_not_served)
{
    char *omitted = section("### Not served");
    for (size_t i = 0; i < n_rows; i++) {
        if (strcmp(rows[i].status, "omitted") != 0)
            continue;
        char want[256];
        snprintf(want, sizeof(want), "`%s`", rows[i].name);
        cr_expect(strstr(omitted, want), "metrics.md's \"Not served\" does not name %s", rows[i].name);
    }
    free(omitted);
}
