/*
 * Plumbing shared by the AWS provider's files (nodeclass*.c, launch*.c,
 * launchtemplate*.c, provider*.c): a small TTL cache of AWS answers and the
 * hash behind class hashes and template names. Not an interface.
 */
#ifndef KP_CLOUD_AWS_PROVIDER_INTERNAL_H
#define KP_CLOUD_AWS_PROVIDER_INTERNAL_H

#include <cjson/cJSON.h>
#include <stdint.h>

#include "api/objects.h"
#include "base/arena.h"
#include "base/clock.h"
#include "cloud/aws/ec2.h"

/* ---- TTL cache of JSON values ------------------------------------------- */

typedef struct kp_aws_cache kp_aws_cache;

kp_aws_cache *kp_aws_cache_new(const kp_clock *clock);
kp_aws_cache *kp_aws_cache_free(kp_aws_cache *c);
/* A copy of the value under `key` (the caller deletes it), NULL when absent
 * or expired. */
cJSON *kp_aws_cache_get(kp_aws_cache *c, const char *key);
/* Store a copy of `value` for `ttl_ns`, replacing what `key` held. */
void kp_aws_cache_put(kp_aws_cache *c, const char *key, const cJSON *value, int64_t ttl_ns);
void kp_aws_cache_delete(kp_aws_cache *c, const char *key);
/* The live keys starting with `prefix` (copies in `arena`); returns how many. */
size_t kp_aws_cache_keys(kp_aws_cache *c, const char *prefix, kp_arena *arena, const char ***out);
void kp_aws_cache_flush(kp_aws_cache *c);

/* FNV-1a, 64 bits: the hash behind class hashes and template names. */
uint64_t kp_aws_fnv1a(uint64_t h, const void *data, size_t len);
#define KP_AWS_FNV_OFFSET UINT64_C(14695981039346656037)

#endif
