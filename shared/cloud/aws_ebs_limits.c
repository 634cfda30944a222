/*
 * The EBS CSI driver's per-node volume count (see aws_ebs_limits.h). The
 * driver starts from EC2's attachment limit of the instance type and takes
 * away the root volume (and any other volume mapped at launch); where the
 * limit is shared with other attachments it also takes away the network
 * interfaces beyond the first. EC2's limit comes in three kinds:
 *
 *   - Xen types: 39 volumes, not shared with anything.
 *   - Nitro types with a dedicated EBS limit (Intel and AMD 7th generation,
 *     every 8th generation, the g6 / gr6 / p4d / p5 GPU families): a count
 *     that grows with the size, 32 up to 48 vCPUs, then 48, 64, 88, 128;
 *     bare-metal sizes 39 or 79.
 *   - Other Nitro types: 28 attachments shared by the volumes, the network
 *     interfaces, the NVMe instance-store disks and the GPUs (and first
 *     generation Inferentia chips); bare-metal sizes 31 less the root.
 *
 * What is approximated, and why: the catalog knows the total NVMe size, not
 * the number of instance-store disks, so the disks are estimated from it
 * (the 5th-generation Intel families split their storage at smaller sizes);
 * the network interfaces are taken as one, the count when the driver starts
 * on a node Karpenter just launched; and extra blockDeviceMappings of an
 * EC2NodeClass are not subtracted. Checked against EC2's published limits
 * for the built-in catalog, the estimate is exact for all but 14 of its 607
 * types (some 6th-generation `d` sizes, g5, inf2, trn1, p3dn: off by 1 to 6).
 * A node's real CSINode, once registered, is what counts for it.
 */
#include "cloud/aws_ebs_limits.h"

#include <string.h>

enum { XEN_LIMIT = 39, SHARED_LIMIT = 28, SHARED_METAL_LIMIT = 31 };

static bool is_family(const kp_aws_type_info *t, const char *const *families)
{
    for (; *families; families++)
        if (t->family && strcmp(t->family, *families) == 0) return true;
    return false;
}

static bool dedicated(const kp_aws_type_info *t)
{
    static const char *const gpu_families[] = {"g6",   "g6e", "g6f", "gr6",  "p4d",
                                               "p4de", "p5",  "p5e", "p5en", NULL};
    bool graviton = t->cpu_manufacturer && strcmp(t->cpu_manufacturer, "aws") == 0;
    return is_family(t, gpu_families) || t->generation >= 8 || (t->generation == 7 && !graviton);
}

static int32_t dedicated_limit(const kp_aws_type_info *t)
{
    static const char *const p4[] = {"p4d", "p4de", NULL};
    static const char *const p5[] = {"p5", "p5e", "p5en", NULL};
    if (is_family(t, p4)) return 28;
    if (is_family(t, p5) && t->vcpu > 96) return 64;
    if (t->flags & KP_AWS_TYPE_BAREMETAL) return t->vcpu <= 96 ? 39 : 79;
    if (t->vcpu <= 48) return 32;
    return t->vcpu <= 64 ? 48 : t->vcpu <= 96 ? 64 : t->vcpu <= 128 ? 88 : 128;
}

/* NVMe instance-store disks, from the total size (see the top). */
static int32_t nvme_disks(const kp_aws_type_info *t)
{
    if (t->local_nvme_gb <= 0) return 0;
    bool intel5 =
        t->generation == 5 && t->cpu_manufacturer && strcmp(t->cpu_manufacturer, "intel") == 0;
    if (intel5 && t->category && strcmp(t->category, "c") == 0)
        return t->vcpu <= 36 ? 1 : t->vcpu <= 72 ? 2 : 4;
    if (intel5) return t->vcpu <= 8 ? 1 : t->vcpu <= 48 ? 2 : 4;
    return (int32_t)((t->local_nvme_gb + 1899) / 1900);
}

static int32_t shared_left(const kp_aws_type_info *t)
{
    if (t->flags & KP_AWS_TYPE_BAREMETAL) return SHARED_METAL_LIMIT;
    int32_t devices = t->gpu_count + nvme_disks(t);
    if (t->accel_name && strcmp(t->accel_name, "inferentia") == 0) devices += t->accel_count;
    return SHARED_LIMIT - 1 /* the primary network interface */ - devices;
}

int32_t kp_aws_ebs_volume_limit(const kp_aws_type_info *t)
{
    int32_t limit = t->hypervisor == KP_AWS_HV_XEN ? XEN_LIMIT
                    : dedicated(t)                 ? dedicated_limit(t)
                                                   : shared_left(t);
    limit -= 1;                   /* the root volume */
    return limit < 1 ? 1 : limit; /* the driver never reports less than one */
}
