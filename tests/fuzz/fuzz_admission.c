/*
 * libFuzzer target for the admission handler: arbitrary bytes as a request
 * body to /validate and /mutate, under a policy with every rule on. Beyond
 * "no crash, no leak, no undefined behaviour" it checks that the handler
 * fails closed: every answer is JSON; a 200 is an AdmissionReview whose
 * response echoes a uid; and nothing that does not parse as an
 * AdmissionReview is ever allowed.
 *
 *   CC=clang cmake -S . -B build-fuzz -DKP_FUZZ=ON \
 *     -DCMAKE_C_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -DKP_ARENA_DEBUG=1"
 *   cmake --build build-fuzz --target fuzz_admission
 *   build-fuzz/tests/fuzz_admission -max_total_time=120 -max_len=65536
 */
#include "base/arena.h"
#include "base/buf.h"
#include "webhook/handler.h"
#include "webhook/review.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char fuzz_policy[] = "nodePools:\n"
                                  "  requireLimits: [cpu, memory]\n"
                                  "  maxLimits: {cpu: 1000, memory: 4000Gi}\n"
                                  "  allowedCapacityTypes: [on-demand, spot]\n"
                                  "  allowedInstanceCategories: [c, m, r]\n"
                                  "  allowedInstanceFamilies: [c6i, m6i, r6i]\n"
                                  "  allowedArchitectures: [amd64]\n"
                                  "  maxInstanceTypes: 3\n"
                                  "  requireDisruptionBudget: true\n"
                                  "ec2NodeClasses:\n"
                                  "  requireIMDSv2: true\n"
                                  "  requireEncryptedVolumes: true\n"
                                  "  allowedAMIAliases: [\"al2023@*\"]\n"
                                  "pods:\n"
                                  "  defaultRequests: {cpu: 100m, memory: 128Mi}\n"
                                  "  doNotDisrupt:\n"
                                  "    - matchLabels: {workload: training}\n"
                                  "    - ownerKinds: [Job]\n"
                                  "      namespaces: [batch]\n"
                                  "    - resources: [nvidia.com/gpu]\n";

/* The harness's one piece of state: the policy, parsed once. */
static kp_policy *policy;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    if (kp_policy_parse(&policy, fuzz_policy, strlen(fuzz_policy), "fuzz-policy") < 0) abort();
    return 0;
}

static void check_answer(const kp_buf *out, const kp_webhook_outcome *o, int parses)
{
    cJSON *root = cJSON_Parse(kp_buf_cstr(out));
    if (!root) abort(); /* every answer is JSON */
    if (o->http_status == 200) {
        const cJSON *resp = cJSON_GetObjectItemCaseSensitive(root, "response");
        const cJSON *uid = cJSON_GetObjectItemCaseSensitive(resp, "uid");
        const cJSON *allowed = cJSON_GetObjectItemCaseSensitive(resp, "allowed");
        if (!cJSON_IsString(uid) || !cJSON_IsBool(allowed)) abort();
        if (cJSON_IsTrue(allowed) && !parses) abort(); /* fail closed */
    } else if (o->http_status < 400 || o->http_status > 599 || parses) {
        abort(); /* a parsed review is answered with a review */
    }
    cJSON_Delete(root);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    kp_review review;
    int parses = kp_review_parse(&review, (const char *)data, size) == 0;
    if (parses) kp_review_clear(&review);
    kp_arena *arena = kp_arena_new();
    kp_buf out = KP_BUF_INIT(KP_WEBHOOK_MAX_RESPONSE);
    for (int ep = KP_WEBHOOK_VALIDATE; ep <= KP_WEBHOOK_MUTATE; ep++) {
        kp_webhook_outcome outcome;
        kp_buf_reset(&out);
        kp_webhook_handle(policy, (enum kp_webhook_endpoint)ep, (const char *)data, size, arena,
                          &out, &outcome);
        check_answer(&out, &outcome, parses);
    }
    kp_buf_free(&out);
    kp_arena_free(arena);
    return 0;
}
