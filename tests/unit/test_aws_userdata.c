/*
 * User data per AMI family, against golden files under
 * tests/unit/data/aws/userdata/ (KP_UPDATE_GOLDEN=1 rewrites them after a
 * deliberate change; read the diff before committing it), plus the merge
 * rules, the TOML reader/writer and malformed input.
 */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base64.h"
#include "api/decode.h"
#include "base/error.h"
#include "cloud/aws/userdata.h"
#include "cloud/aws/userdata_internal.h"
#include "kube/config.h"

static kp_arena *arena;

static void setup(void)
{
    arena = kp_arena_new();
}

static void teardown(void)
{
    arena = kp_arena_free(arena);
}

TestSuite(userdata, .init = setup, .fini = teardown);

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *data = malloc((size_t)len + 1);
    size_t got = fread(data, 1, (size_t)len, f);
    data[got] = '\0';
    fclose(f);
    return data;
}

static void golden(const char *name, const char *actual)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/tests/unit/data/aws/userdata/%s", KP_SOURCE_DIR, name);
    if (getenv("KP_UPDATE_GOLDEN")) {
        FILE *f = fopen(path, "wb");
        cr_assert_not_null(f, "cannot write %s", path);
        fputs(actual, f);
        fclose(f);
    }
    char *want = read_file(path);
    cr_assert_not_null(want, "missing golden file %s", path);
    cr_assert_str_eq(actual, want, "%s differs:\n--- got ---\n%s\n--- want ---\n%s", name, actual,
                     want);
    free(want);
}

static char *input(const char *name)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/tests/unit/data/aws/userdata/%s", KP_SOURCE_DIR, name);
    char *text = read_file(path);
    cr_assert_not_null(text, "missing input %s", path);
    char *copy = kp_arena_strdup(arena, text);
    free(text);
    return copy;
}

static const kp_kubelet_config *kubelet(const char *json)
{
    char *doc =
        kp_arena_printf(arena,
                        "{\"apiVersion\":\"karpenter.k8s.aws/v1\",\"kind\":\"EC2NodeClass\","
                        "\"metadata\":{\"name\":\"default\"},\"spec\":{\"kubelet\":%s}}",
                        json);
    cJSON *j = cJSON_Parse(doc);
    cr_assert_not_null(j);
    kp_ec2nodeclass *nc = KP_ARENA_NEW(arena, kp_ec2nodeclass, 1);
    cr_assert_eq(kp_decode_ec2nodeclass(arena, j, nc), 0, "%s", kp_error_last());
    cJSON_Delete(j);
    return &nc->kubelet;
}

/* The cluster every case joins: labels and taints as a NodeClaim would have. */
static kp_aws_userdata_opts base_opts(enum kp_aws_ami_family family, const char *capacity_type)
{
    static kp_label claim[] = {
        {"karpenter.k8s.aws/ec2nodeclass", "default"},
        {"karpenter.sh/nodepool", "general"},
        {"kubernetes.io/arch", "amd64"}, /* the kubelet sets these itself */
        {"node.kubernetes.io/instance-type", "m5.large"},
        {"testing/cluster", "unspecified"},
    };
    static kp_taint taints[] = {
        {"foo", "bar", KP_EFFECT_NO_EXECUTE},
        {"baz", "bin", KP_EFFECT_NO_EXECUTE},
    };
    kp_labels in = {claim, sizeof(claim) / sizeof(claim[0])};
    kp_nodeclaim_spec spec = {0};
    spec.taints = taints;
    spec.n_taints = 2;
    kp_aws_userdata_opts o = {0};
    o.family = family;
    o.cluster_name = "test-cluster";
    o.cluster_endpoint = "https://test-cluster";
    o.ca_bundle = "Y2EtYnVuZGxlCg==";
    o.cluster_cidr = "10.100.0.0/16";
    o.kube_dns_ip = "10.0.100.10";
    o.max_pods = 110;
    kp_aws_userdata_labels(arena, &in, capacity_type, family, &o.labels);
    kp_taint *t;
    kp_aws_userdata_taints(arena, &spec, &t, &o.n_taints);
    o.taints = t;
    return o;
}

static char *render(const kp_aws_userdata_opts *o)
{
    char *out = NULL;
    int err = kp_aws_userdata_render(arena, o, &out);
    cr_assert_eq(err, 0, "render: %s", kp_error_last());
    return out;
}

/* ------------------------------------------------------------- labels/taints */

Test(userdata, node_labels_drop_kubelet_domains_and_add_karpenters)
{
    kp_aws_userdata_opts o = base_opts(KP_AWS_AMI_AL2023, "spot");
    const char *want[][2] = {
        {"karpenter.k8s.aws/ec2nodeclass", "default"},
        {"karpenter.sh/capacity-type", "spot"},
        {"karpenter.sh/do-not-sync-taints", "true"},
        {"karpenter.sh/nodepool", "general"},
        {"testing/cluster", "unspecified"},
    };
    cr_assert_eq(o.labels.count, 5);
    for (size_t i = 0; i < 5; i++) {
        cr_assert_str_eq(o.labels.items[i].key, want[i][0]);
        cr_assert_str_eq(o.labels.items[i].value, want[i][1]);
    }
}

Test(userdata, custom_family_gets_no_do_not_sync_label)
{
    kp_label l[] = {{"a.k8s.io/x", "1"}, {"k8s.io/y", "2"}, {"notk8s.io/z", "3"}};
    kp_labels in = {l, 3}, out;
    kp_aws_userdata_labels(arena, &in, "on-demand", KP_AWS_AMI_CUSTOM, &out);
    cr_assert_eq(out.count, 2);
    cr_assert_str_eq(out.items[0].key, "karpenter.sh/capacity-type");
    cr_assert_str_eq(out.items[1].key, "notk8s.io/z");
}

Test(userdata, unregistered_taint_added_once)
{
    kp_taint existing[] = {{"karpenter.sh/unregistered", "", KP_EFFECT_NO_EXECUTE}};
    kp_taint startup[] = {{"example.com/startup", "x", KP_EFFECT_NO_SCHEDULE}};
    kp_nodeclaim_spec spec = {0};
    spec.startup_taints = existing;
    spec.n_startup_taints = 1;
    kp_taint *t;
    size_t n;
    kp_aws_userdata_taints(arena, &spec, &t, &n);
    cr_assert_eq(n, 1);
    spec.startup_taints = startup;
    kp_aws_userdata_taints(arena, &spec, &t, &n);
    cr_assert_eq(n, 2);
    cr_assert_str_eq(t[0].key, "example.com/startup");
    cr_assert_str_eq(t[1].key, "karpenter.sh/unregistered");
    cr_assert_eq(t[1].effect, KP_EFFECT_NO_EXECUTE);
}

/* ------------------------------------------------------------------ AL2023 */

Test(userdata, al2023_plain)
{
    kp_aws_userdata_opts o = base_opts(KP_AWS_AMI_AL2023, "on-demand");
    golden("al2023_plain.golden", render(&o));
}

Test(userdata, al2023_shell_script_goes_first)
{
    kp_aws_userdata_opts o = base_opts(KP_AWS_AMI_AL2023, "on-demand");
    o.custom = "#!/bin/bash\necho \"Hello, AL2023!\"\n";
    golden("al2023_shell_merged.golden", render(&o));
}

Test(userdata, al2023_mime_parts_keep_only_content_type)
{
    kp_aws_userdata_opts o = base_opts(KP_AWS_AMI_AL2023, "on-demand");
    o.custom = input("al2023_mime_input.txt");
    char *out = render(&o);
    cr_assert_null(strstr(out, "X-Extra"), "only Content-Type survives");
    golden("al2023_mime_merged.golden", out);
}

Test(userdata, al2023_yaml_is_a_node_config)
{
    kp_aws_userdata_opts o = base_opts(KP_AWS_AMI_AL2023, "on-demand");
    o.custom = "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n"
               "    config:\n      shutdownGracePeriod: 30s\n";
    char *out = render(&o);
    const char *first = strstr(out, "Content-Type: application/node.eks.aws\n\napiVersion");
    cr_assert_not_null(first, "%s", out);
    cr_assert_not_null(strstr(first + 10, "# Karpenter Generated NodeConfig"));
}

Test(userdata, al2023_kubelet_block_passes_through_with_karpenters_values)
{
    kp_aws_userdata_opts o = base_opts(KP_AWS_AMI_AL2023, "spot");
    o.kubelet = kubelet("{\"maxPods\":20,\"clusterDNS\":[\"10.0.0.10\"],"
                        "\"kubeReserved\":{\"cpu\":\"200m\",\"memory\":\"self.x * 2\"},"
                        "\"evictionHard\":{\"memory.available\":\"5%\"},"
                        "\"cpuCFSQuota\":false,\"shutdownGracePeriod\":\"1m\"}");
    o.max_pods = 20;
    o.raid0 = true;
    golden("al2023_kubelet.golden", render(&o));
}

Test(userdata, al2023_without_cidr_is_not_ready)
{
    kp_aws_userdata_opts o = base_opts(KP_AWS_AMI_AL2023, "on-demand");
    o.cluster_cidr = NULL;
    char *out = NULL;
    cr_assert_eq(kp_aws_userdata_render(arena, &o, &out), KP_ENOTREADY);
    cr_assert_not_null(strstr(kp_error_last(), "cluster CIDR"));
    cr_assert_null(out);
}

/* --------------------------------------------------------------------- AL2 */

Test(userdata, al2_merges_mime_parts_before_bootstrap)
{
    kp_aws_userdata_opts o = base_opts(KP_AWS_AMI_AL2, "on-demand");
    o.custom = input("al2_mime_input.txt");
    golden("al2_mime_merged.golden", render(&o));
}

Test(userdata, al2_kubelet_flags_raid0_and_ipv6)
{
    kp_aws_userdata_opts o = base_opts(KP_AWS_AMI_AL2, "spot");
    o.kube_dns_ip = "fd00::a";
    o.custom = "#!/bin/bash\necho hi";
    o.kubelet = kubelet("{\"podsPerCore\":4,\"systemReserved\":{\"memory\":\"1Gi\",\"cpu\":\"1\"},"
                        "\"evictionSoft\":{\"memory.available\":\"1Gi\"},"
                        "\"evictionSoftGracePeriod\":{\"memory.available\":\"90s\"},"
                        "\"evictionMaxPodGracePeriod\":60,\"imageGCHighThresholdPercent\":85,"
                        "\"imageGCLowThresholdPercent\":80}");
    o.raid0 = true;
    golden("al2_kubelet.golden", render(&o));
}

Test(userdata, al2_without_ca_or_dns)
{
    kp_aws_userdata_opts o = base_opts(KP_AWS_AMI_AL2, "on-demand");
    o.ca_bundle = NULL;
    o.kube_dns_ip = NULL;
    o.max_pods = 0;
    char *out = render(&o);
    cr_assert_null(strstr(out, "--b64-cluster-ca"));
    cr_assert_null(strstr(out, "--dns-cluster-ip"));
    cr_assert_null(strstr(out, "--use-max-pods"));
    cr_assert_null(strstr(out, "--max-pods"));
}

/* ------------------------------------------------------------ Bottlerocket */

Test(userdata, bottlerocket_takes_over_kubernetes_settings)
{
    kp_aws_userdata_opts o = base_opts(KP_AWS_AMI_BOTTLEROCKET, "on-demand");
    o.custom = input("br_input.toml");
    char *out = render(&o);
    golden("br_merged.golden", out);
    /* what it says, read back */
    cJSON *root = NULL;
    cr_assert_eq(kp_ud_toml_parse(out, &root), 0, "%s", kp_error_last());
    cJSON *k8s = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "settings"), "kubernetes");
    cr_assert_str_eq(cJSON_GetObjectItem(k8s, "api-server")->valuestring, "https://test-cluster");
    cr_assert_str_eq(cJSON_GetObjectItem(k8s, "max-pods")->valuestring, "110");
    cr_assert_null(cJSON_GetObjectItem(k8s, "unknown-setting"));
    cr_assert_null(cJSON_GetObjectItem(k8s, "labels"));
    cJSON *labels = cJSON_GetObjectItem(k8s, "node-labels");
    cr_assert_str_eq(cJSON_GetObjectItem(labels, "custom-node-label")->valuestring, "custom");
    cr_assert_str_eq(cJSON_GetObjectItem(labels, "karpenter.sh/nodepool")->valuestring, "general");
    cJSON *taints = cJSON_GetObjectItem(k8s, "node-taints");
    cr_assert_null(cJSON_GetObjectItem(taints, "replace"), "taints are replaced, not merged");
    cr_assert_str_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(taints, "foo"), 0)->valuestring,
                     "bar:NoExecute");
    cr_assert_not_null(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "settings"), "network"));
    cr_assert_null(cJSON_GetObjectItem(root, "extra"), "only [settings] survives");
    cJSON_Delete(root);
}

Test(userdata, bottlerocket_without_user_data_and_with_raid0)
{
    kp_aws_userdata_opts o = base_opts(KP_AWS_AMI_BOTTLEROCKET, "spot");
    o.raid0 = true;
    o.kubelet = kubelet("{\"kubeReserved\":{\"cpu\":\"100m\"},\"imageGCHighThresholdPercent\":90,"
                        "\"cpuCFSQuota\":true}");
    golden("br_raid0.golden", render(&o));
}

/* ----------------------------------------------------------- Windows, Custom */

Test(userdata, windows_wraps_powershell)
{
    kp_aws_userdata_opts o = base_opts(KP_AWS_AMI_WINDOWS, "spot");
    o.custom = "Write-Host \"Running custom user data script\"";
    golden("windows_merged.golden", render(&o));
}

Test(userdata, custom_is_the_users_text)
{
    kp_aws_userdata_opts o = base_opts(KP_AWS_AMI_CUSTOM, "spot");
    o.custom = "#!/bin/sh\nexec /my/bootstrap\n";
    cr_assert_str_eq(render(&o), o.custom);
    o.custom = NULL;
    cr_assert_str_eq(render(&o), "");
}

Test(userdata, base64_round_trips)
{
    const char *texts[] = {"", "a", "ab", "abc", "MIME-Version: 1.0\n--//--\n"};
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
        char *enc = kp_aws_userdata_base64(arena, texts[i]);
        char *dec = NULL;
        size_t len = 0;
        cr_assert_eq(kp_base64_decode(&dec, &len, enc), 0);
        cr_assert_eq(len, strlen(texts[i]));
        cr_assert_str_eq(dec, texts[i]);
        free(dec);
    }
    cr_assert_str_eq(kp_aws_userdata_base64(arena, "ca-bundle\n"), "Y2EtYnVuZGxlCg==");
}

/* -------------------------------------------------------------- malformed */

Test(userdata, malformed_input_is_refused)
{
    struct {
        enum kp_aws_ami_family family;
        const char *custom;
        const char *ca;
        const char *message;
    } cases[] = {
        {KP_AWS_AMI_AL2023, "MIME-Version: 1.0\nContent-Type: text/plain\n\nhi", NULL,
         "not multipart"},
        {KP_AWS_AMI_AL2, "Content-Type: multipart/mixed\n\n--x\n", NULL, "no boundary"},
        {KP_AWS_AMI_AL2, "MIME-Version: 1.0\nbroken header\n\n", NULL, "malformed MIME header"},
        {KP_AWS_AMI_BOTTLEROCKET, "[settings\nx = 1", NULL, "TOML line 1"},
        {KP_AWS_AMI_BOTTLEROCKET, "[settings]\na = 1\na = 2\n", NULL, "defined twice"},
        {KP_AWS_AMI_BOTTLEROCKET, "[settings]\na = \"open\n", NULL, "unterminated"},
        {KP_AWS_AMI_BOTTLEROCKET, "[settings]\na = nope\n", NULL, "expected a value"},
        {KP_AWS_AMI_AL2023, NULL, "not base64!", "not base64"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        kp_aws_userdata_opts o = base_opts(cases[i].family, "spot");
        o.custom = cases[i].custom;
        if (cases[i].ca) o.ca_bundle = cases[i].ca;
        char *out = NULL;
        cr_assert_eq(kp_aws_userdata_render(arena, &o, &out), KP_EINVALID, "case %zu", i);
        cr_assert_not_null(strstr(kp_error_last(), cases[i].message), "case %zu: %s", i,
                           kp_error_last());
    }
}

Test(userdata, over_ec2s_limit_is_refused)
{
    kp_aws_userdata_opts o = base_opts(KP_AWS_AMI_CUSTOM, "spot");
    char *big = kp_arena_alloc(arena, KP_AWS_USERDATA_MAX + 2);
    memset(big, 'x', KP_AWS_USERDATA_MAX + 1);
    big[KP_AWS_USERDATA_MAX + 1] = '\0';
    o.custom = big;
    char *out = NULL;
    cr_assert_eq(kp_aws_userdata_render(arena, &o, &out), KP_EINVALID);
    cr_assert_not_null(strstr(kp_error_last(), "User data is limited to"));
    big[KP_AWS_USERDATA_MAX] = '\0';
    cr_assert_eq(kp_aws_userdata_render(arena, &o, &out), 0);
}

/* -------------------------------------------------------------------- TOML */

Test(userdata, toml_round_trips)
{
    const char *docs[] = {
        "a = 1\nb = 'x'\n[t]\nc = [1, 2, [3]]\n",
        "[a.b.c]\nd = true\n[a]\ne = -1.5e3\n",
        "x.y.z = \"dotted\"\n\"quoted key\" = 'v'\n",
        "arr = [\n  'one', # comment\n  'two',\n]\n",
        "inline = { a = 1, b = { c = 'd' } }\n",
        "[[products]]\nname = 'a'\n[[products]]\nname = 'b'\n",
        "s = \"tab\\tquote\\\" \\u00e9\"\nm = '''\nline1\nline2'''\n",
        "when = 1979-05-27 07:32:00Z\nhex = 0xDEAD_BEEF\n",
        "ml = \"\"\"\nfirst \\\n   second\"\"\"\n",
    };
    for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
        cJSON *a = NULL, *b = NULL;
        cr_assert_eq(kp_ud_toml_parse(docs[i], &a), 0, "doc %zu: %s", i, kp_error_last());
        kp_buf out = KP_BUF_INIT(1 << 16);
        cr_assert_eq(kp_ud_toml_write(&out, a), 0);
        cr_assert_eq(kp_ud_toml_parse(kp_buf_cstr(&out), &b), 0, "doc %zu rewritten:\n%s: %s", i,
                     kp_buf_cstr(&out), kp_error_last());
        cr_assert(cJSON_Compare(a, b, 1), "doc %zu changed:\n%s", i, kp_buf_cstr(&out));
        kp_buf_free(&out);
        cJSON_Delete(a);
        cJSON_Delete(b);
    }
}

Test(userdata, toml_values_read_as_written)
{
    cJSON *root = NULL;
    cr_assert_eq(kp_ud_toml_parse("s = \"a\\u00e9\\n\"\nml = \"\"\"\nfirst \\\n   second\"\"\"\n"
                                  "lit = 'C:\\path'\nn = 1_000\n",
                                  &root),
                 0);
    cr_assert_str_eq(cJSON_GetObjectItem(root, "s")->valuestring, "a\xc3\xa9\n");
    cr_assert_str_eq(cJSON_GetObjectItem(root, "ml")->valuestring, "first second");
    cr_assert_str_eq(cJSON_GetObjectItem(root, "lit")->valuestring, "C:\\path");
    cr_assert_str_eq(cJSON_GetObjectItem(root, "n")->valuestring, "1_000");
    cJSON_Delete(root);
}
