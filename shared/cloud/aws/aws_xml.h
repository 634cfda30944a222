/*
 * Reading AWS XML responses (EC2 Query, AWS Query for IAM and STS) with
 * libxml2. The document is parsed once, walked with these helpers by local
 * element name (namespaces ignored: EC2 answers under several), and freed by
 * the caller; every string taken out of it is copied into an arena first.
 *
 * Parsing never touches the network (no DTD loading, no entity expansion).
 */
#ifndef KP_CLOUD_AWS_XML_H
#define KP_CLOUD_AWS_XML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libxml/tree.h>

#include "base/arena.h"

/* Parse `len` bytes. KP_EINVALID (with libxml2's reason) when malformed. */
int kp_aws_xml_parse(xmlDoc **out, const char *data, size_t len);

/* The first child element named `name` (local name), or NULL. */
xmlNode *kp_aws_xml_child(const xmlNode *parent, const char *name);
/* Follow a '/'-separated path of child names: "networkInfo/networkCards". */
xmlNode *kp_aws_xml_path(const xmlNode *node, const char *path);
/* The next sibling element after `node` with the same name ("item" lists). */
xmlNode *kp_aws_xml_next(const xmlNode *node);
/* The first <item> under the element at `path`; iterate with kp_aws_xml_next. */
xmlNode *kp_aws_xml_items(const xmlNode *node, const char *path);
/* Number of elements kp_aws_xml_items / kp_aws_xml_next would visit. */
size_t kp_aws_xml_count(const xmlNode *first);

/* Text of the element at `path` copied into `arena`; NULL when absent. */
char *kp_aws_xml_text(kp_arena *arena, const xmlNode *node, const char *path);
/* Numeric and boolean readings; `dflt` when absent or unparseable. Booleans
 * accept "true"/"false" in any case (moto answers "True"). */
int64_t kp_aws_xml_int(const xmlNode *node, const char *path, int64_t dflt);
double kp_aws_xml_double(const xmlNode *node, const char *path, double dflt);
bool kp_aws_xml_bool(const xmlNode *node, const char *path, bool dflt);

#endif
