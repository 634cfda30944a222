/*
 * What EC2 says exists, as rows of the built-in table's shape: the fetch half
 * of the instance-type provider (cloud/aws/instancetypes.h), kept apart from
 * the catalog half so that neither needs both the EC2 client's types and the
 * Kubernetes object types (they share a few names).
 *
 * A fetch runs DescribeInstanceTypes (hvm; x86_64 and arm64; 100 per page)
 * and DescribeInstanceTypeOfferings (by availability zone; 1000 per page)
 * and joins them. Conversion follows Karpenter: architecture from the first
 * one we know, GPU and accelerator fields only from a single GPU / device
 * entry, names in lower-kebab label form, ENI limits from the default network
 * card, EBS bandwidth only where EBS optimisation is on by default, local
 * NVMe only where the store supports NVMe. Network bandwidth and branch ENIs
 * are not in EC2's answer and come from the built-in table when it knows
 * the type (Karpenter uses static tables for both).
 */
#ifndef KP_CLOUD_AWS_INSTANCETYPES_FETCH_H
#define KP_CLOUD_AWS_INSTANCETYPES_FETCH_H

#include <stdbool.h>
#include <stdint.h>

#include "base/arena.h"
#include "cloud/aws/aws_http.h"
#include "cloud/aws_catalog.h"

/* One discovered type. price_micro_usd is always 0: prices come from the
 * pricing provider. */
typedef struct kp_aws_type_row {
    kp_aws_type_info info;
    const char *const *zones; /* where EC2 offers it, sorted */
    uint32_t n_zones;
    bool on_demand;      /* SupportedUsageClasses has "on-demand" */
    bool spot;           /* ... "spot" */
    bool nitro_enclaves; /* NitroEnclavesSupport "supported" (the nitro-sandbox label) */
    /* What node-class compatibility checks read. `known` false (rows from the
     * built-in table): none of it is known and no check refuses the type. */
    bool known;
    bool nested_virtualization; /* processor feature "nested-virtualization" */
    bool ena_unsupported;
    uint8_t placement_strategies; /* KP_AWS_PG_* bits */
    const int32_t *card_max_enis; /* per network card index */
    uint32_t n_cards;
} kp_aws_type_row;

enum { KP_AWS_PG_CLUSTER = 1, KP_AWS_PG_PARTITION = 2, KP_AWS_PG_SPREAD = 4 };

/* KP_AWS_PG_* of a strategy name ("cluster" ...), 0 for others. */
uint8_t kp_aws_pg_strategy_bit(const char *strategy);

/* Fetch and convert every type (all strings in `arena`), sorted by name.
 * Types EC2 lists without vCPUs or memory are left out. */
int kp_aws_instancetypes_fetch(kp_aws_client *ec2, kp_arena *arena, kp_aws_type_row **out,
                               uint32_t *n);

/* "Up to 10 Gigabit" -> "up-to-10-gigabit": Karpenter's label form. */
char *kp_aws_lower_kebab(kp_arena *arena, const char *s);

#endif
