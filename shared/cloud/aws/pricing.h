/*
 * The AWS Price List API (JSON 1.1, X-Amz-Target: AWSPriceListService.GetProducts)
 * for on-demand EC2 prices. Each PriceList element is itself a JSON document in
 * a string; from it we keep product.attributes.instanceType and the hourly
 * price under terms.OnDemand.*.priceDimensions.*.pricePerUnit.<currency>.
 * The API lives in a few regions only (kp_pricing_region). moto does not
 * implement it (HTTP 500), so tests use recorded answers.
 */
#ifndef KP_CLOUD_AWS_PRICING_H
#define KP_CLOUD_AWS_PRICING_H

#include <stddef.h>

#include "base/arena.h"
#include "cloud/aws/aws_http.h"

typedef struct kp_pricing_filter { /* a TERM_MATCH filter */
    const char *field; /* "regionCode", "operatingSystem", "tenancy" ... */
    const char *value;
} kp_pricing_filter;

typedef struct kp_pricing_price {
    const char *instance_type;
    double price; /* per hour, in the currency asked for; never 0 */
} kp_pricing_price;

typedef struct kp_pricing_price_list {
    kp_pricing_price *items;
    size_t n;
} kp_pricing_price_list;

/* The Pricing endpoint region for an EC2 region: us-east-1, ap-* -> ap-south-1,
 * eu-* -> eu-central-1, cn-* -> cn-northwest-1. */
const char *kp_pricing_region(const char *ec2_region);

/* GetProducts for ServiceCode AmazonEC2 with `filters`, all pages (MaxResults
 * 100). `currency` "USD" (NULL) or "CNY". Products without a non-zero price
 * are left out. */
int kp_pricing_get_products(kp_aws_client *client, kp_arena *arena,
                            const kp_pricing_filter *filters, size_t n_filters,
                            const char *currency, kp_pricing_price_list *out);

/* One PriceList element (the inner JSON text). KP_ENOTFOUND when it has no
 * instance type or no non-zero price. */
int kp_pricing_parse_product(kp_arena *arena, const char *product_json, const char *currency,
                             kp_pricing_price *out);

#endif
