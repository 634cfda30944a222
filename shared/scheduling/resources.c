#include "scheduling/resources.h"
#include "base/error.h"

#include <stdio.h>
#include <string.h>

void kp_restab_init(kp_restab *tab)
{
    memset(tab, 0, sizeof(*tab));
    tab->names[KP_RES_CPU] = "cpu";
    tab->names[KP_RES_MEMORY] = "memory";
    tab->names[KP_RES_PODS] = "pods";
    tab->names[KP_RES_EPHEMERAL] = "ephemeral-storage";
    tab->count = KP_RES_FIXED;
}

int kp_restab_find(const kp_restab *tab, const char *name)
{
    for (uint32_t i = 0; i < tab->count; i++)
        if (strcmp(tab->names[i], name) == 0)
            return (int)i;
    return -1;
}

int kp_restab_index(kp_restab *tab, const char *name)
{
    int i = kp_restab_find(tab, name);
    if (i >= 0)
        return i;
    if (tab->count == KP_RES_MAX)
        return kp_error_set(KP_ETOOLARGE, "more than %d distinct resource names (at %s)",
                            KP_RES_MAX, name);
    /* The caller keeps `name` alive for the table's lifetime (arena or static). */
    tab->names[tab->count] = name;
    return (int)tab->count++;
}

void kp_resvec_add(kp_resvec *a, const kp_resvec *b, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (__builtin_add_overflow(a->v[i], b->v[i], &a->v[i]))
            a->v[i] = b->v[i] > 0 ? INT64_MAX : INT64_MIN;
}

void kp_resvec_sub(kp_resvec *a, const kp_resvec *b, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (__builtin_sub_overflow(a->v[i], b->v[i], &a->v[i]))
            a->v[i] = b->v[i] > 0 ? INT64_MIN : INT64_MAX;
}

int kp_resvec_first_misfit(const kp_resvec *req, const kp_resvec *avail, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (req->v[i] > avail->v[i])
            return (int)i;
    return -1;
}

char *kp_resvec_format(const kp_restab *tab, const kp_resvec *r, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < tab->count && used < size; i++) {
        if (r->v[i] == 0)
            continue;
        char q[KP_QUANTITY_STRLEN];
        enum kp_quantity_format fmt =
            i == KP_RES_MEMORY || i == KP_RES_EPHEMERAL ? KP_QUANTITY_BINARY_SI : KP_QUANTITY_DECIMAL_SI;
        kp_quantity_format(kp_quantity_from_milli(r->v[i], fmt), q, sizeof(q));
        int n = snprintf(buf + used, size - used, "%s%s: %s", used ? ", " : "", tab->names[i], q);
        if (n < 0)
            break;
        used += (size_t)n;
    }
    return buf;
}
