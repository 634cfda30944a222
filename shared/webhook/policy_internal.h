/*
 * The parsed policy, shared by the loader and the rule files. Every string
 * and array lives in the policy's arena.
 */
#ifndef KP_WEBHOOK_POLICY_INTERNAL_H
#define KP_WEBHOOK_POLICY_INTERNAL_H

#include "api/quantity.h"
#include "base/arena.h"
#include "webhook/policy.h"

#include <stdatomic.h>
#include <stdbool.h>

typedef struct kp_policy_list {
    const char **items;
    size_t count;
    bool set; /* the key was present: the rule is on, even with an empty list */
} kp_policy_list;

typedef struct kp_policy_quantity {
    const char *resource;
    const char *text; /* as written */
    kp_quantity value;
} kp_policy_quantity;

typedef struct kp_policy_selector {
    const char **label_keys, **label_values;
    size_t n_labels;
    kp_policy_list owner_kinds;
    kp_policy_list resources;
    kp_policy_list namespaces;
} kp_policy_selector;

struct kp_policy {
    atomic_int refs;
    kp_arena *arena;
    bool empty; /* parsed from a document with no rule section */
    struct {
        kp_policy_list require_limits;
        kp_policy_quantity *max_limits;
        size_t n_max_limits;
        kp_policy_list capacity_types, categories, families, architectures;
        long max_instance_types; /* 0: off */
        bool require_budget;
    } nodepools;
    struct {
        bool require_imdsv2;
        bool require_encrypted;
        kp_policy_list ami_aliases; /* fnmatch patterns */
    } nodeclasses;
    struct {
        kp_policy_quantity *default_requests;
        size_t n_default_requests;
        bool warn_missing_requests;
        kp_policy_selector *do_not_disrupt;
        size_t n_do_not_disrupt;
    } pods;
};

bool kp_policy_list_has(const kp_policy_list *list, const char *value);
/* "[a, b, c]" for messages. */
const char *kp_policy_list_string(kp_arena *arena, const char *const *items, size_t count);

#endif
