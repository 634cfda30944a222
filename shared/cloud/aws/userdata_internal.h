/*
 * Pieces shared by the user-data renderers (userdata*.c): MIME archives, the
 * kubelet flags the shell-based families pass, and a TOML reader and writer
 * for Bottlerocket. Not an interface for anything outside userdata*.c.
 */
#ifndef KP_CLOUD_AWS_USERDATA_INTERNAL_H
#define KP_CLOUD_AWS_USERDATA_INTERNAL_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "base/buf.h"
#include "cloud/aws/userdata.h"

/* Cap on the text a renderer builds: well above EC2's limit, so the limit
 * check reports the real size. */
#define KP_UD_BUF_MAX ((size_t)1 << 20)

/* ---- MIME multi-part archives ------------------------------------------ */

#define KP_UD_BOUNDARY        "//"
#define KP_UD_TYPE_SHELL      "text/x-shellscript; charset=\"us-ascii\""
#define KP_UD_TYPE_NODECONFIG "application/node.eks.aws"

typedef struct kp_ud_header {
    const char *name; /* canonical: "Content-Type" */
    const char *value;
} kp_ud_header;

typedef struct kp_ud_part {
    kp_ud_header *headers;
    size_t n_headers;
    const char *content;
} kp_ud_part;

typedef struct kp_ud_parts {
    kp_ud_part *items;
    size_t count, cap;
} kp_ud_parts;

/* Whether `text` starts (after white space) like a MIME message. */
bool kp_ud_is_mime(const char *text);
/* Split a multipart MIME message into its parts (appended to `parts`).
 * KP_EINVALID when it has no Content-Type or is not multipart. */
int kp_ud_mime_parse(kp_arena *arena, const char *text, kp_ud_parts *parts);
/* Append a part with one Content-Type header. */
void kp_ud_parts_add(kp_arena *arena, kp_ud_parts *parts, const char *content_type,
                     const char *content);
/* The archive as Karpenter writes it: boundary "//", LF line ends. */
int kp_ud_mime_write(kp_buf *out, const kp_ud_parts *parts);

/* ---- kubelet settings ---------------------------------------------------- */

/* The cluster DNS address the node uses: the kubelet block's first
 * clusterDNS, else the kube-dns IP; NULL when neither. */
const char *kp_ud_cluster_dns(const kp_aws_userdata_opts *o);
/* "key=value:effect" as Kubernetes prints a taint. */
int kp_ud_taint_string(kp_buf *out, const kp_taint *t);
/* Go's %q of `s`. */
int kp_ud_quote(kp_buf *out, const char *s);
/* Whether a reserved-resource value is a plain quantity (CEL expressions are
 * not resolved here and are left out, as Karpenter does without its gate). */
bool kp_ud_static_quantity(const char *value);
/* The kubelet flags, space-separated: --node-labels, --register-with-taints,
 * --max-pods and the kubelet block's settings. */
int kp_ud_kubelet_args(kp_buf *out, const kp_aws_userdata_opts *o);

/* Sort objects' members by key (Go marshals maps sorted): every object in
 * the tree, or only `item`'s own members. */
void kp_ud_json_sort_keys(cJSON *item);
void kp_ud_json_sort_keys_shallow(cJSON *item);

/* ---- renderers ---------------------------------------------------------- */

int kp_ud_al2023(kp_arena *arena, const kp_aws_userdata_opts *o, kp_buf *out);
int kp_ud_al2(kp_arena *arena, const kp_aws_userdata_opts *o, kp_buf *out);
int kp_ud_bottlerocket(kp_arena *arena, const kp_aws_userdata_opts *o, kp_buf *out);

/* ---- TOML ---------------------------------------------------------------- */

/* Parse TOML into a tree of objects (tables), arrays, strings and booleans;
 * numbers and date-times are raw items holding their text. KP_EINVALID with
 * the line number on errors. */
int kp_ud_toml_parse(const char *text, cJSON **out);
/* Write `root` (an object) as TOML: each table's plain keys, then its
 * sub-tables as [a.b] sections. Keys keep the tree's order. */
int kp_ud_toml_write(kp_buf *out, const cJSON *root);

#endif
