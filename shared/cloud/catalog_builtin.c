/*
 * The built-in AWS catalog as generic instance types: each row of the static
 * table (aws_catalog.h) with the requirements Karpenter's AWS provider gives
 * it — its labels as single values, DoesNotExist for the well-known AWS
 * labels it lacks (so a pod asking for a GPU cannot land on a type that has
 * none), tenancy, zones and capacity types — and capacity and overhead from
 * the allocatable rules (aws_allocatable.h).
 */
#include "cloud/instance_types.h"
#include "api/wellknown.h"
#include "base/error.h"
#include "cloud/aws_allocatable.h"
#include "cloud/aws_catalog.h"
#include "cloud/aws_ebs_limits.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Labels the provider always defines: absent ones become DoesNotExist. */
static const char *const optional_labels[] = {
    "karpenter.k8s.aws/instance-cpu-manufacturer",  "karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz",
    "karpenter.k8s.aws/instance-ebs-bandwidth",     "karpenter.k8s.aws/instance-network-bandwidth",
    "karpenter.k8s.aws/instance-category",          "karpenter.k8s.aws/instance-capability-flex",
    "karpenter.k8s.aws/instance-family",            "karpenter.k8s.aws/instance-generation",
    "karpenter.k8s.aws/instance-local-nvme",        "karpenter.k8s.aws/instance-size",
    "karpenter.k8s.aws/instance-gpu-name",          "karpenter.k8s.aws/instance-gpu-manufacturer",
    "karpenter.k8s.aws/instance-gpu-count",         "karpenter.k8s.aws/instance-gpu-memory",
    "karpenter.k8s.aws/instance-accelerator-name",  "karpenter.k8s.aws/instance-accelerator-manufacturer",
    "karpenter.k8s.aws/instance-accelerator-count", "karpenter.k8s.aws/capacity-reservation-id",
    "karpenter.k8s.aws/capacity-reservation-type",  "karpenter.k8s.aws/capacity-reservation-interruptible",
    "node.kubernetes.io/windows-build",
};

static const char *const tenancies[] = {"default", "dedicated"};

static void add_labels(kp_catalog *cat, kp_instance_type *it, const kp_aws_type_info *t)
{
    kp_aws_label labels[KP_AWS_MAX_LABELS];
    size_t n = 0;
    kp_aws_catalog_labels(labels, KP_AWS_MAX_LABELS, &n, t, KP_AWS_AMI_AL2023);
    for (size_t i = 0; i < n; i++)
        kp_it_add_label(cat, it, labels[i].key, labels[i].value);
    for (size_t i = 0; i < sizeof(optional_labels) / sizeof(optional_labels[0]); i++)
        if (!kp_aws_label_get(labels, n, optional_labels[i]))
            kp_it_add_req(cat, it, optional_labels[i], KP_OP_DOES_NOT_EXIST, NULL, 0);
    kp_it_add_req(cat, it, "karpenter.k8s.aws/instance-tenancy", KP_OP_IN, tenancies, 2);
}

static void add_offerings(kp_catalog *cat, kp_instance_type *it, const kp_aws_type_info *t)
{
    kp_aws_offering offs[KP_AWS_MAX_OFFERINGS];
    size_t n = kp_aws_catalog_offerings(offs, t);
    const char *zones[KP_AWS_MAX_OFFERINGS], *zone_ids[KP_AWS_MAX_OFFERINGS], *cts[2];
    uint32_t n_zones = 0, n_cts = 0;
    for (size_t i = 0; i < n; i++) {
        const char *ct = kp_aws_capacity_type_name(offs[i].capacity_type);
        kp_it_add_offering(cat, it, offs[i].zone, ct, (double)offs[i].price_micro_usd / 1e6, offs[i].available);
        if (!offs[i].available)
            continue;
        bool seen = false;
        for (uint32_t z = 0; z < n_zones && !seen; z++)
            seen = strcmp(zones[z], offs[i].zone) == 0;
        if (!seen) {
            zone_ids[n_zones] = offs[i].zone_id;
            zones[n_zones++] = offs[i].zone;
        }
        seen = false;
        for (uint32_t c = 0; c < n_cts && !seen; c++)
            seen = strcmp(cts[c], ct) == 0;
        if (!seen)
            cts[n_cts++] = ct;
    }
    kp_it_add_req(cat, it, KP_LABEL_ZONE, n_zones ? KP_OP_IN : KP_OP_DOES_NOT_EXIST, zones, n_zones);
    kp_it_add_req(cat, it, KP_LABEL_ZONE_ID, n_zones ? KP_OP_IN : KP_OP_DOES_NOT_EXIST, zone_ids, n_zones);
    kp_it_add_req(cat, it, KP_LABEL_CAPACITY_TYPE, n_cts ? KP_OP_IN : KP_OP_DOES_NOT_EXIST, cts, n_cts);
}

int kp_catalog_builtin_aws(const kp_aws_alloc_opts *opts, kp_catalog **out)
{
    kp_catalog *cat = kp_catalog_new("builtin (AWS " KP_AWS_REGION ")");
    size_t n = 0;
    const kp_aws_type_info *rows = kp_aws_catalog_table(&n);
    for (size_t i = 0; i < n; i++) {
        kp_aws_allocatable a;
        if (kp_aws_allocatable_compute(&a, &rows[i], opts) < 0) {
            kp_catalog_free(cat);
            return kp_error_wrap(KP_EINVALID, "instance type %s", rows[i].name);
        }
        kp_instance_type *it = kp_catalog_add_type(cat, rows[i].name);
        add_labels(cat, it, &rows[i]);
        add_offerings(cat, it, &rows[i]);
        kp_aws_allocatable_to_catalog(cat, it, &a);
        it->ebs_volume_limit = kp_aws_ebs_volume_limit(&rows[i]);
    }
    *out = cat;
    return 0;
}

int kp_catalog_open(const char *spec, kp_catalog **out)
{
    if (strcmp(spec, "builtin") == 0)
        return kp_catalog_builtin_aws(NULL, out);
    if (strncmp(spec, "synthetic:", 10) == 0) {
        char *end = NULL;
        unsigned long long n = strtoull(spec + 10, &end, 10);
        if (!*(spec + 10) || *end || n == 0)
            return kp_error_set(KP_EINVALID, "--instance-types %s: want synthetic:N with N a positive count", spec);
        return kp_catalog_synthetic((size_t)n, out);
    }
    return kp_catalog_load_file(spec, out);
}
