#include "cloud/aws/pricing.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "cloud/aws/aws_json.h"

enum { PRICING_MAX_PAGES = 1000 };

const char *kp_pricing_region(const char *r)
{
    if (strncmp(r, "ap-", 3) == 0)
        return "ap-south-1";
    if (strncmp(r, "eu-", 3) == 0)
        return "eu-central-1";
    if (strncmp(r, "cn-", 3) == 0)
        return "cn-northwest-1";
    return "us-east-1";
}

/* The first non-zero terms.OnDemand.*.priceDimensions.*.pricePerUnit.<currency>. */
static double on_demand_price(const cJSON *product, const char *currency)
{
    const cJSON *terms = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(product, "terms"), "OnDemand");
    const cJSON *term, *dim;
    cJSON_ArrayForEach(term, terms)
    {
        cJSON_ArrayForEach(dim, cJSON_GetObjectItemCaseSensitive(term, "priceDimensions"))
        {
            const char *text = kp_aws_json_string(
                cJSON_GetObjectItemCaseSensitive(dim, "pricePerUnit"), currency);
            char *end = NULL;
            double v = text ? strtod(text, &end) : 0;
            if (text && end != text && *end == '\0' && v > 0)
                return v;
        }
    }
    return 0;
}

int kp_pricing_parse_product(kp_arena *a, const char *product_json, const char *currency,
                             kp_pricing_price *out)
{
    cJSON *doc = cJSON_Parse(product_json);
    if (!cJSON_IsObject(doc)) {
        cJSON_Delete(doc);
        return kp_error_set(KP_EINVALID, "pricing: a PriceList entry is not a JSON object");
    }
    const cJSON *attrs = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(doc, "product"), "attributes");
    const char *type = kp_aws_json_string(attrs, "instanceType");
    double price = on_demand_price(doc, currency ? currency : "USD");
    int err = 0;
    if (!type || price <= 0) {
        err = kp_error_set(KP_ENOTFOUND, "pricing: entry without an instance type or a price");
    } else {
        out->instance_type = kp_arena_strdup(a, type);
        out->price = price;
    }
    cJSON_Delete(doc);
    return err;
}

static cJSON *products_request(const kp_pricing_filter *filters, size_t n, const char *token)
{
    cJSON *req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "ServiceCode", "AmazonEC2");
    cJSON_AddStringToObject(req, "FormatVersion", "aws_v1");
    cJSON_AddNumberToObject(req, "MaxResults", 100);
    cJSON *arr = cJSON_AddArrayToObject(req, "Filters");
    for (size_t i = 0; i < n; i++) {
        cJSON *f = cJSON_CreateObject();
        cJSON_AddStringToObject(f, "Type", "TERM_MATCH");
        cJSON_AddStringToObject(f, "Field", filters[i].field);
        cJSON_AddStringToObject(f, "Value", filters[i].value);
        cJSON_AddItemToArray(arr, f);
    }
    if (token)
        cJSON_AddStringToObject(req, "NextToken", token);
    return req;
}

/* Append the priced entries of one answer; *next gets its NextToken or NULL. */
static int take_page(kp_arena *a, const cJSON *answer, const char *currency,
                     kp_pricing_price_list *list, char **next)
{
    const cJSON *prices = cJSON_GetObjectItemCaseSensitive(answer, "PriceList");
    size_t add = (size_t)cJSON_GetArraySize(prices);
    list->items = kp_arena_grow(a, list->items, list->n, list->n + add, sizeof(kp_pricing_price));
    const cJSON *entry;
    cJSON_ArrayForEach(entry, prices)
    {
        if (!cJSON_IsString(entry))
            return kp_error_set(KP_EINVALID, "pricing: a PriceList entry is not a string");
        int err = kp_pricing_parse_product(a, entry->valuestring, currency, &list->items[list->n]);
        if (err == KP_EINVALID)
            return err;
        list->n += err == 0;
    }
    const char *tok = kp_aws_json_string(answer, "NextToken");
    *next = tok && *tok ? kp_arena_strdup(a, tok) : NULL;
    return 0;
}

int kp_pricing_get_products(kp_aws_client *c, kp_arena *a, const kp_pricing_filter *filters,
                            size_t n_filters, const char *currency, kp_pricing_price_list *out)
{
    kp_aws_json_service svc = {"pricing", "AWSPriceListService", KP_AWS_JSON_1_1,
                               kp_pricing_region(kp_aws_client_region(c))};
    kp_pricing_price_list list = {0};
    char *token = NULL;
    int err = 0;
    for (int page = 0; page < PRICING_MAX_PAGES; page++) {
        cJSON *req = products_request(filters, n_filters, token), *answer = NULL;
        err = kp_aws_json_call(c, &svc, "GetProducts", req, 0, &answer);
        cJSON_Delete(req);
        if (err == 0)
            err = take_page(a, answer, currency, &list, &token);
        cJSON_Delete(answer);
        if (err < 0 || !token)
            break;
    }
    if (err == 0 && token)
        err = kp_error_set(KP_ETOOLARGE, "pricing GetProducts: more than %d pages",
                           PRICING_MAX_PAGES);
    if (err == 0)
        *out = list;
    return err;
}
