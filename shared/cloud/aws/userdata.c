/*
 * User data: the entry point, the node's labels and taints, the kubelet flags
 * the shell-based families share, and the AL2, Windows and Custom renderers.
 */
#include "cloud/aws/userdata_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base64.h"
#include "api/quantity.h"
#include "api/wellknown.h"
#include "base/error.h"
#include "kube/config.h"

/* ---------------------------------------------------------- labels, taints */

static bool restricted_label(const char *key)
{
    const char *slash = strchr(key, '/');
    if (!slash) return false;
    size_t n = (size_t)(slash - key);
    static const char *const domains[] = {"kubernetes.io", "k8s.io"};
    for (size_t i = 0; i < sizeof(domains) / sizeof(domains[0]); i++) {
        size_t d = strlen(domains[i]);
        if (n == d && memcmp(key, domains[i], d) == 0) return true;
        if (n > d && key[n - d - 1] == '.' && memcmp(key + n - d, domains[i], d) == 0) return true;
    }
    return false;
}

static int label_cmp(const void *a, const void *b)
{
    return strcmp(((const kp_label *)a)->key, ((const kp_label *)b)->key);
}

/* Set `key` in a sorted-later list, replacing an earlier value. */
static void put_label(kp_label *items, size_t *n, const char *key, const char *value)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp(items[i].key, key) == 0) {
            items[i].value = value;
            return;
        }
    items[*n].key = key;
    items[*n].value = value;
    (*n)++;
}

void kp_aws_userdata_labels(kp_arena *arena, const kp_labels *claim_labels,
                            const char *capacity_type, enum kp_aws_ami_family family,
                            kp_labels *out)
{
    size_t have = claim_labels ? claim_labels->count : 0;
    kp_label *items = KP_ARENA_NEW(arena, kp_label, have + 2);
    size_t n = 0;
    for (size_t i = 0; i < have; i++)
        if (!restricted_label(claim_labels->items[i].key))
            put_label(items, &n, claim_labels->items[i].key, claim_labels->items[i].value);
    if (capacity_type && *capacity_type)
        put_label(items, &n, KP_LABEL_CAPACITY_TYPE, capacity_type);
    if (family != KP_AWS_AMI_CUSTOM) put_label(items, &n, KP_LABEL_DO_NOT_SYNC_TAINTS, "true");
    qsort(items, n, sizeof(*items), label_cmp);
    out->items = n ? items : NULL;
    out->count = n;
}

void kp_aws_userdata_taints(kp_arena *arena, const kp_nodeclaim_spec *spec, kp_taint **out,
                            size_t *n)
{
    size_t total = spec->n_taints + spec->n_startup_taints;
    kp_taint *t = KP_ARENA_NEW(arena, kp_taint, total + 1);
    size_t k = 0;
    bool have_unregistered = false;
    for (size_t i = 0; i < total; i++) {
        t[k] = i < spec->n_taints ? spec->taints[i] : spec->startup_taints[i - spec->n_taints];
        if (strcmp(t[k].key, KP_TAINT_UNREGISTERED) == 0 && t[k].effect == KP_EFFECT_NO_EXECUTE)
            have_unregistered = true;
        k++;
    }
    if (!have_unregistered) t[k++] = (kp_taint){KP_TAINT_UNREGISTERED, "", KP_EFFECT_NO_EXECUTE};
    *out = t;
    *n = k;
}

/* ------------------------------------------------------------ kubelet flags */

const char *kp_ud_cluster_dns(const kp_aws_userdata_opts *o)
{
    if (o->kubelet && o->kubelet->cluster_dns.count > 0) return o->kubelet->cluster_dns.items[0];
    return o->kube_dns_ip && *o->kube_dns_ip ? o->kube_dns_ip : NULL;
}

int kp_ud_taint_string(kp_buf *out, const kp_taint *t)
{
    const char *effect = kp_taint_effect_name(t->effect);
    const char *value = t->value ? t->value : "";
    if (!*effect)
        return *value ? kp_buf_printf(out, "%s=%s:", t->key, value) : kp_buf_puts(out, t->key);
    if (!*value) return kp_buf_printf(out, "%s:%s", t->key, effect);
    return kp_buf_printf(out, "%s=%s:%s", t->key, value, effect);
}

int kp_ud_quote(kp_buf *out, const char *s)
{
    int err = kp_buf_putc(out, '"');
    for (const unsigned char *p = (const unsigned char *)s; err == 0 && *p; p++) {
        if (*p == '"' || *p == '\\')
            err = kp_buf_printf(out, "\\%c", *p);
        else if (*p == '\n')
            err = kp_buf_puts(out, "\\n");
        else if (*p == '\t')
            err = kp_buf_puts(out, "\\t");
        else if (*p == '\r')
            err = kp_buf_puts(out, "\\r");
        else if (*p < 0x20 || *p == 0x7f)
            err = kp_buf_printf(out, "\\x%02x", *p);
        else
            err = kp_buf_putc(out, (char)*p);
    }
    return err ? err : kp_buf_putc(out, '"');
}

bool kp_ud_static_quantity(const char *value)
{
    kp_quantity q;
    return value && kp_quantity_parse(value, &q) == 0;
}

/* `name="k<sep>v,..."` for a string map; nothing for an empty one. */
static int map_arg(kp_buf *out, const char *name, const kp_labels *m, const char *sep,
                   bool reserved)
{
    kp_buf joined = KP_BUF_INIT(KP_UD_BUF_MAX);
    int err = 0;
    for (size_t i = 0; i < m->count && err == 0; i++) {
        if (reserved && !kp_ud_static_quantity(m->items[i].value)) continue;
        err = kp_buf_printf(&joined, "%s%s%s%s", joined.len ? "," : "", m->items[i].key, sep,
                            m->items[i].value);
    }
    if (err == 0 && joined.len > 0) {
        err = kp_buf_printf(out, " %s=", name);
        if (err == 0) err = kp_ud_quote(out, kp_buf_cstr(&joined));
    }
    kp_buf_free(&joined);
    return err;
}

static int grace_period_arg(kp_buf *out, const kp_labels *m)
{
    kp_buf joined = KP_BUF_INIT(KP_UD_BUF_MAX);
    int err = 0;
    for (size_t i = 0; i < m->count && err == 0; i++) {
        kp_duration d;
        char text[KP_DURATION_STRLEN];
        if (kp_duration_parse(m->items[i].value, &d) < 0)
            continue; /* validation refuses these; never hand the kubelet garbage */
        err = kp_buf_printf(&joined, "%s%s=%s", joined.len ? "," : "", m->items[i].key,
                            kp_duration_format(d, text, sizeof(text)));
    }
    if (err == 0 && joined.len > 0) {
        err = kp_buf_puts(out, " --eviction-soft-grace-period=");
        if (err == 0) err = kp_ud_quote(out, kp_buf_cstr(&joined));
    }
    kp_buf_free(&joined);
    return err;
}

static int labels_and_taints_args(kp_buf *out, const kp_aws_userdata_opts *o)
{
    kp_buf joined = KP_BUF_INIT(KP_UD_BUF_MAX);
    int err = 0;
    for (size_t i = 0; i < o->labels.count && err == 0; i++)
        err = kp_buf_printf(&joined, "%s%s=%s", i ? "," : "", o->labels.items[i].key,
                            o->labels.items[i].value);
    if (err == 0 && o->labels.count > 0) {
        err = kp_buf_puts(out, "--node-labels=");
        if (err == 0) err = kp_ud_quote(out, kp_buf_cstr(&joined));
        if (err == 0) err = kp_buf_putc(out, ' ');
    }
    kp_buf_reset(&joined);
    for (size_t i = 0; i < o->n_taints && err == 0; i++) {
        if (i) err = kp_buf_putc(&joined, ',');
        if (err == 0) err = kp_ud_taint_string(&joined, &o->taints[i]);
    }
    if (err == 0) err = kp_buf_puts(out, "--register-with-taints=");
    if (err == 0) err = kp_ud_quote(out, kp_buf_cstr(&joined));
    kp_buf_free(&joined);
    return err;
}

int kp_ud_kubelet_args(kp_buf *out, const kp_aws_userdata_opts *o)
{
    const kp_kubelet_config *k = o->kubelet;
    int err = labels_and_taints_args(out, o);
    if (err == 0 && o->max_pods > 0) err = kp_buf_printf(out, " --max-pods=%d", (int)o->max_pods);
    if (!k || !k->present || err < 0) return err;
    if (k->has_pods_per_core)
        err = kp_buf_printf(out, " --pods-per-core=%d", (int)k->pods_per_core);
    if (err == 0) err = map_arg(out, "--system-reserved", &k->system_reserved, "=", true);
    if (err == 0) err = map_arg(out, "--kube-reserved", &k->kube_reserved, "=", true);
    if (err == 0) err = map_arg(out, "--eviction-hard", &k->eviction_hard, "<", false);
    if (err == 0) err = map_arg(out, "--eviction-soft", &k->eviction_soft, "<", false);
    if (err == 0) err = grace_period_arg(out, &k->eviction_soft_grace_period);
    if (err == 0 && k->has_eviction_max_pod_grace_period)
        err = kp_buf_printf(out, " --eviction-max-pod-grace-period=%d",
                            (int)k->eviction_max_pod_grace_period);
    if (err == 0 && k->has_image_gc_high_threshold_percent)
        err = kp_buf_printf(out, " --image-gc-high-threshold=%d",
                            (int)k->image_gc_high_threshold_percent);
    if (err == 0 && k->has_image_gc_low_threshold_percent)
        err = kp_buf_printf(out, " --image-gc-low-threshold=%d",
                            (int)k->image_gc_low_threshold_percent);
    if (err == 0 && k->has_cpu_cfs_quota)
        err = kp_buf_printf(out, " --cpu-cfs-quota=%s", k->cpu_cfs_quota ? "true" : "false");
    return err;
}

/* --------------------------------------------------------------------- AL2 */

static int al2_script(const kp_aws_userdata_opts *o, kp_buf *s)
{
    const char *dns = kp_ud_cluster_dns(o);
    int err = kp_buf_puts(s, "#!/bin/bash -xe\nexec > >(tee /var/log/user-data.log|logger -t "
                             "user-data -s 2>/dev/console) 2>&1\n");
    if (err == 0)
        err = kp_buf_printf(s, "/etc/eks/bootstrap.sh '%s' --apiserver-endpoint '%s' ",
                            o->cluster_name, o->cluster_endpoint);
    if (err == 0 && o->ca_bundle) err = kp_buf_printf(s, "--b64-cluster-ca '%s'", o->ca_bundle);
    if (err == 0 && dns && strchr(dns, ':')) err = kp_buf_puts(s, " \\\n--ip-family ipv6");
    if (err == 0 && dns) err = kp_buf_printf(s, " \\\n--dns-cluster-ip '%s'", dns);
    if (err == 0 && o->max_pods > 0) err = kp_buf_puts(s, " \\\n--use-max-pods false");
    if (err == 0) err = kp_buf_puts(s, " \\\n--kubelet-extra-args '");
    if (err == 0) err = kp_ud_kubelet_args(s, o);
    if (err == 0) err = kp_buf_putc(s, '\'');
    if (err == 0 && o->raid0) err = kp_buf_puts(s, " \\\n--local-disks raid0");
    return err;
}

int kp_ud_al2(kp_arena *arena, const kp_aws_userdata_opts *o, kp_buf *out)
{
    kp_ud_parts parts = {0};
    int err = 0;
    if (o->custom && *o->custom) {
        if (kp_ud_is_mime(o->custom))
            err = kp_ud_mime_parse(arena, o->custom, &parts);
        else
            kp_ud_parts_add(arena, &parts, KP_UD_TYPE_SHELL, o->custom);
    }
    kp_buf script = KP_BUF_INIT(KP_UD_BUF_MAX);
    if (err == 0) err = al2_script(o, &script);
    if (err == 0) {
        kp_ud_parts_add(arena, &parts, KP_UD_TYPE_SHELL,
                        kp_arena_strdup(arena, kp_buf_cstr(&script)));
        err = kp_ud_mime_write(out, &parts);
    }
    kp_buf_free(&script);
    return err;
}

/* ----------------------------------------------------------------- Windows */

static int windows(const kp_aws_userdata_opts *o, kp_buf *out)
{
    const char *dns = kp_ud_cluster_dns(o);
    int err = kp_buf_puts(out, "<powershell>\n");
    if (err == 0 && o->custom && *o->custom) err = kp_buf_printf(out, "%s\n", o->custom);
    if (err == 0)
        err = kp_buf_puts(out, "[string]$EKSBootstrapScriptFile = "
                               "\"$env:ProgramFiles\\Amazon\\EKS\\Start-EKSBootstrap.ps1\"\n");
    if (err == 0)
        err = kp_buf_printf(out,
                            "& $EKSBootstrapScriptFile -EKSClusterName '%s' "
                            "-APIServerEndpoint '%s'",
                            o->cluster_name, o->cluster_endpoint);
    if (err == 0 && o->ca_bundle) err = kp_buf_printf(out, " -Base64ClusterCA '%s'", o->ca_bundle);
    if (err == 0) err = kp_buf_puts(out, " -KubeletExtraArgs '");
    if (err == 0) err = kp_ud_kubelet_args(out, o);
    if (err == 0) err = kp_buf_putc(out, '\'');
    if (err == 0 && dns) err = kp_buf_printf(out, " -DNSClusterIP '%s'", dns);
    return err ? err : kp_buf_puts(out, "\n</powershell>");
}

/* ------------------------------------------------------------------ render */

static int check_ca(const char *ca)
{
    if (!ca || !*ca) return 0;
    char *raw = NULL;
    size_t len = 0;
    int err = kp_base64_decode(&raw, &len, ca);
    free(raw);
    if (err < 0) return kp_error_set(KP_EINVALID, "user data: the cluster CA bundle is not base64");
    return 0;
}

int kp_aws_userdata_render(kp_arena *arena, const kp_aws_userdata_opts *o, char **out)
{
    int err = check_ca(o->ca_bundle);
    kp_buf text = KP_BUF_INIT(KP_UD_BUF_MAX);
    if (err < 0) return err;
    switch (o->family) {
    case KP_AWS_AMI_AL2023:
        err = kp_ud_al2023(arena, o, &text);
        break;
    case KP_AWS_AMI_AL2:
        err = kp_ud_al2(arena, o, &text);
        break;
    case KP_AWS_AMI_BOTTLEROCKET:
        err = kp_ud_bottlerocket(arena, o, &text);
        break;
    case KP_AWS_AMI_WINDOWS:
        err = windows(o, &text);
        break;
    case KP_AWS_AMI_CUSTOM:
        err = kp_buf_puts(&text, o->custom ? o->custom : "");
        break;
    }
    if (err == KP_ETOOLARGE)
        err = kp_error_set(KP_EINVALID, "user data: longer than %zu bytes", KP_UD_BUF_MAX);
    if (err == 0 && text.len > KP_AWS_USERDATA_MAX)
        err = kp_error_set(KP_EINVALID,
                           "user data: %zu bytes, EC2 takes at most %d (User data is limited to "
                           "16384 bytes)",
                           text.len, KP_AWS_USERDATA_MAX);
    if (err == 0) *out = kp_arena_strdup(arena, kp_buf_cstr(&text));
    kp_buf_free(&text);
    return err;
}

char *kp_aws_userdata_base64(kp_arena *arena, const char *text)
{
    kp_buf b = KP_BUF_INIT((strlen(text) / 3 + 2) * 4 + 1);
    kp_base64_append(&b, text, strlen(text));
    char *s = kp_arena_strdup(arena, kp_buf_cstr(&b));
    kp_buf_free(&b);
    return s;
}
