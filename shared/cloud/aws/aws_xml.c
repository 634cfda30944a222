#include "cloud/aws/aws_xml.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libxml/parser.h>

#include "base/error.h"

int kp_aws_xml_parse(xmlDoc **out, const char *data, size_t len)
{
    if (len > INT32_MAX)
        return kp_error_set(KP_ETOOLARGE, "XML response of %zu bytes is too large", len);
    xmlDoc *doc = xmlReadMemory(data, (int)len, "response.xml", NULL,
                                XML_PARSE_NONET | XML_PARSE_NOBLANKS | XML_PARSE_NOERROR |
                                    XML_PARSE_NOWARNING);
    if (!doc || !xmlDocGetRootElement(doc)) {
        const xmlError *e = xmlGetLastError();
        int err = kp_error_set(KP_EINVALID, "malformed XML response: %s",
                               e && e->message ? e->message : "no root element");
        xmlFreeDoc(doc);
        return err;
    }
    *out = doc;
    return 0;
}

static bool named(const xmlNode *n, const char *name, size_t len)
{
    return n->type == XML_ELEMENT_NODE && strlen((const char *)n->name) == len &&
           memcmp(n->name, name, len) == 0;
}

static xmlNode *child_n(const xmlNode *parent, const char *name, size_t len)
{
    if (!parent)
        return NULL;
    for (xmlNode *c = parent->children; c; c = c->next)
        if (named(c, name, len))
            return c;
    return NULL;
}

xmlNode *kp_aws_xml_child(const xmlNode *parent, const char *name)
{
    return child_n(parent, name, strlen(name));
}

xmlNode *kp_aws_xml_path(const xmlNode *node, const char *path)
{
    const xmlNode *cur = node;
    while (cur && path && *path) {
        const char *slash = strchr(path, '/');
        size_t len = slash ? (size_t)(slash - path) : strlen(path);
        cur = child_n(cur, path, len);
        path = slash ? slash + 1 : NULL;
    }
    return (xmlNode *)cur;
}

xmlNode *kp_aws_xml_next(const xmlNode *node)
{
    if (!node)
        return NULL;
    size_t len = strlen((const char *)node->name);
    for (xmlNode *s = node->next; s; s = s->next)
        if (named(s, (const char *)node->name, len))
            return s;
    return NULL;
}

xmlNode *kp_aws_xml_items(const xmlNode *node, const char *path)
{
    return kp_aws_xml_child(kp_aws_xml_path(node, path), "item");
}

size_t kp_aws_xml_count(const xmlNode *first)
{
    size_t n = 0;
    for (const xmlNode *c = first; c; c = kp_aws_xml_next(c))
        n++;
    return n;
}

char *kp_aws_xml_text(kp_arena *arena, const xmlNode *node, const char *path)
{
    xmlNode *n = kp_aws_xml_path(node, path);
    if (!n)
        return NULL;
    xmlChar *content = xmlNodeGetContent(n);
    char *out = kp_arena_strdup(arena, content ? (const char *)content : "");
    xmlFree(content);
    return out;
}

/* Text into a bounded stack buffer, for numbers and booleans. */
static bool small_text(const xmlNode *node, const char *path, char *buf, size_t size)
{
    xmlNode *n = kp_aws_xml_path(node, path);
    if (!n)
        return false;
    xmlChar *content = xmlNodeGetContent(n);
    bool ok = content && strlen((const char *)content) < size;
    if (ok)
        memcpy(buf, content, strlen((const char *)content) + 1);
    xmlFree(content);
    return ok;
}

int64_t kp_aws_xml_int(const xmlNode *node, const char *path, int64_t dflt)
{
    char buf[64], *end;
    if (!small_text(node, path, buf, sizeof(buf)))
        return dflt;
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    return (errno || end == buf || *end) ? dflt : (int64_t)v;
}

double kp_aws_xml_double(const xmlNode *node, const char *path, double dflt)
{
    char buf[64], *end;
    if (!small_text(node, path, buf, sizeof(buf)))
        return dflt;
    errno = 0;
    double v = strtod(buf, &end);
    return (errno || end == buf || *end) ? dflt : v;
}

bool kp_aws_xml_bool(const xmlNode *node, const char *path, bool dflt)
{
    char buf[8];
    if (!small_text(node, path, buf, sizeof(buf)))
        return dflt;
    if (strcasecmp(buf, "true") == 0)
        return true;
    if (strcasecmp(buf, "false") == 0)
        return false;
    return dflt;
}
