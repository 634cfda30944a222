/*
 * simulate's manifests against careless or hostile input: replica counts the
 * API server would refuse or that would exhaust memory, negative requests,
 * duplicate keys, and files in a directory that are not read.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "format/load.h"
#include "scheduling/manifests.h"

/* Load `yaml` as the file "w.yaml" and add it; the result of adding. */
static int add(kp_manifests *m, const char *yaml)
{
    kp_doc_list *docs = kp_doc_list_new();
    int err = kp_load_buffer(docs, yaml, strlen(yaml), "w.yaml", KP_LOAD_YAML, NULL);
    if (err == 0) err = kp_manifests_add_docs(m, docs);
    kp_doc_list_free(docs);
    return err;
}

static const char deployment[] = "apiVersion: apps/v1\n"
                                 "kind: Deployment\n"
                                 "metadata: {name: web}\n"
                                 "spec:\n"
                                 "  replicas: %s\n"
                                 "  selector: {matchLabels: {app: web}}\n"
                                 "  template:\n"
                                 "    metadata: {labels: {app: web}}\n"
                                 "    spec:\n"
                                 "      containers:\n"
                                 "      - name: app\n"
                                 "        image: nginx\n"
                                 "        resources: {requests: {cpu: %s}}\n";

static int add_deployment(kp_manifests *m, const char *replicas, const char *cpu)
{
    char yaml[1024];
    snprintf(yaml, sizeof(yaml), "---\n---\n");
    snprintf(yaml + strlen(yaml), sizeof(yaml) - strlen(yaml), deployment, replicas, cpu);
    return add(m, yaml);
}

/* 600 bytes asking for two billion Pods used to take every byte of memory. */
Test(manifests_limits, replicas_past_the_cap_are_refused_naming_file_document_and_field,
     .timeout = 30)
{
    kp_manifests *m = kp_manifests_new();
    cr_assert_eq(add_deployment(m, "2147483647", "100m"), KP_ETOOLARGE);
    cr_expect(strstr(kp_error_last(), "w.yaml: document 2: spec.replicas: 2147483647 Pods") ==
                  kp_error_last(),
              "%s", kp_error_last());
    kp_manifests_free(m);
}

Test(manifests_limits, the_cap_counts_every_workload)
{
    kp_manifests *m = kp_manifests_new();
    cr_assert_eq(add_deployment(m, "60000", "100m"), 0, "%s", kp_error_last());
    cr_assert_eq(add_deployment(m, "60000", "100m"), KP_ETOOLARGE);
    cr_expect(strstr(kp_error_last(), "60000 so far") != NULL, "%s", kp_error_last());
    kp_manifests_free(m);
}

Test(manifests_limits, negative_replicas_are_refused_as_the_api_server_does)
{
    kp_manifests *m = kp_manifests_new();
    cr_assert_eq(add_deployment(m, "-1", "100m"), KP_EINVALID);
    cr_expect_str_eq(kp_error_last(), "w.yaml: document 2: spec.replicas: Invalid value: -1: must "
                                      "be greater than or equal to 0");
    kp_manifests_free(m);
}

Test(manifests_limits, negative_job_parallelism_is_refused)
{
    kp_manifests *m = kp_manifests_new();
    int err = add(m, "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n"
                     "  parallelism: -3\n  template:\n    spec:\n      containers: [{name: c}]\n");
    cr_assert_eq(err, KP_EINVALID);
    cr_expect(strstr(kp_error_last(), "spec.parallelism: Invalid value: -3") != NULL, "%s",
              kp_error_last());
    kp_manifests_free(m);
}

Test(manifests_limits, negative_requests_are_refused_as_the_api_server_does)
{
    kp_manifests *m = kp_manifests_new();
    cr_assert_eq(add_deployment(m, "1", "\"-1\""), KP_EINVALID);
    cr_expect(strstr(kp_error_last(), "w.yaml: document 2") == kp_error_last(), "%s",
              kp_error_last());
    cr_expect(strstr(kp_error_last(), "resources.requests.cpu: Invalid value: \"-1\": must be "
                                      "greater than or equal to 0") != NULL,
              "%s", kp_error_last());
    kp_manifests_free(m);
}

Test(manifests_limits, duplicate_keys_are_refused_as_kubectl_does)
{
    kp_manifests *m = kp_manifests_new();
    int err = add(m, "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
                     "  containers: [{name: a}]\n  containers: [{name: b}]\n");
    cr_assert_eq(err, KP_EINVALID);
    cr_expect_str_eq(kp_error_last(), "w.yaml: document 1, line 6 column 3: mapping key "
                                      "\"containers\" already defined at line 5");
    kp_manifests_free(m);
}

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

Test(manifests_limits, skipped_files_in_a_directory_are_named_in_notes)
{
    char dir[] = "/tmp/kp-manifests-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    write_file(dir, "pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
                                "spec: {containers: [{name: a}]}\n");
    write_file(dir, "README.md", "# not a manifest\n");
    write_file(dir, ".hidden.yaml", "not: read\n");
    kp_doc_list *docs = kp_doc_list_new();
    kp_load_opts opts = KP_LOAD_OPTS_INIT;
    cr_assert_eq(kp_load_path(docs, dir, &opts), 0, "%s", kp_error_last());
    kp_manifests *m = kp_manifests_new();
    cr_assert_eq(kp_manifests_add_docs(m, docs), 0, "%s", kp_error_last());
    cr_assert_eq(kp_manifests_note_count(m), 1);
    char want[600];
    snprintf(want, sizeof(want), "skipped %s/README.md (not .yaml, .yml or .json)", dir);
    cr_expect_str_eq(kp_manifests_note(m, 0), want);
    kp_manifests_free(m);
    kp_doc_list_free(docs);
    char path[600];
    const char *names[] = {"pod.yaml", "README.md", ".hidden.yaml"};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
}
