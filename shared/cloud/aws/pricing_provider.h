/*
 * Instance prices the AWS provider ranks and filters offerings by.
 *
 * On-demand: the AWS Price List API (GetProducts, two queries: shared-tenancy
 * "Compute Instance" and dedicated "Compute Instance (bare metal)", Linux,
 * no pre-installed software, capacity status Used). Until the first successful
 * update, and whenever an update fails, prices come from a static table: the
 * built-in us-east-1 prices (shared/cloud/aws_catalog.h), which Karpenter
 * also uses for regions it has no table of. A successful update is merged over
 * what is there, so a type the API stops listing keeps its last price.
 *
 * Spot: DescribeSpotPriceHistory for Linux/UNIX from "now", keeping the
 * newest record per (type, zone). Before the first successful spot update
 * every zone of a type uses the type's on-demand price; after it, a
 * (type, zone) with no record has no spot price (the offering is then
 * unavailable) — Karpenter's rule.
 *
 * Updates keep the old data on error. Refreshing is the caller's timer's job
 * (KP_AWS_PRICES_REFRESH_NS). The object borrows its clients (used only
 * inside the refresh calls: call those from one thread at a time, the thread
 * that owns the clients); the lookups are thread-safe (a lock inside).
 */
#ifndef KP_CLOUD_AWS_PRICING_PROVIDER_H
#define KP_CLOUD_AWS_PRICING_PROVIDER_H

#include <stdbool.h>
#include <stdint.h>

#include "base/clock.h"
#include "cloud/aws/aws_http.h"

#define KP_AWS_PRICES_REFRESH_NS (INT64_C(12) * 3600 * KP_NS_PER_SEC)

typedef struct kp_aws_prices kp_aws_prices;

typedef struct kp_aws_prices_opts {
    const char *region;     /* NULL: the EC2 client's */
    kp_aws_client *ec2;     /* spot history; NULL: spot updates are refused */
    kp_aws_client *pricing; /* the Price List API; NULL: static on-demand prices only */
    bool isolated_vpc;      /* --isolated-vpc: no Price List API, static prices */
    const kp_clock *clock;  /* NULL: the system clock */
} kp_aws_prices_opts;

#define KP_AWS_PRICES_OPTS_INIT                                                                    \
    {                                                                                              \
        0                                                                                          \
    }

/* Starts from the static table; no network. KP_EINVALID without a region
 * (neither opts->region nor an EC2 client to ask). */
int kp_aws_prices_new(kp_aws_prices **out, const kp_aws_prices_opts *opts);
kp_aws_prices *kp_aws_prices_free(kp_aws_prices *p);

/* Price List API update. Fails (keeping the old prices) when a query fails or
 * either of the two queries returns no prices. A no-op (0) for isolated VPCs,
 * us-gov-* regions and without a pricing client. */
int kp_aws_prices_update_on_demand(kp_aws_prices *p);
/* Spot price history update; fails, keeping the old prices, on EC2 errors or
 * an empty answer. */
int kp_aws_prices_update_spot(kp_aws_prices *p);
/* Both updates; the first error is returned, the other update still runs. */
int kp_aws_prices_refresh(kp_aws_prices *p);

/* Hourly on-demand price of `instance_type`; false when it has none. */
bool kp_aws_prices_on_demand(kp_aws_prices *p, const char *instance_type, double *price);
/* Hourly spot price of `instance_type` in `zone`; false when it has none. */
bool kp_aws_prices_spot(kp_aws_prices *p, const char *instance_type, const char *zone,
                        double *price);

/* Changes whenever any price may have changed (a successful update). */
uint64_t kp_aws_prices_seqnum(const kp_aws_prices *p);

/* Whether the first spot update has succeeded (then missing records mean no price). */
bool kp_aws_prices_spot_updated(const kp_aws_prices *p);

/* ---- for tests and offline use ----------------------------------------- */

/* Replace on-demand prices as an update would (merged over the old ones). */
void kp_aws_prices_merge_on_demand(kp_aws_prices *p, const char *const *types, const double *prices,
                                   uint32_t n);
/* Apply one spot record as an update would: a newer timestamp wins per
 * (type, zone). Marks spot data as updated. */
void kp_aws_prices_put_spot(kp_aws_prices *p, const char *instance_type, const char *zone,
                            double price, int64_t timestamp_ns);

#endif
