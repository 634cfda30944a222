/*
 * A launch template's network interfaces, as Karpenter renders them: the
 * class's networkInterfaces (EFA-only ones get no addresses, public IP or
 * connection tracking), else one EFA interface per network card when the
 * claim asks for EFA, else one primary interface. Security groups ride on
 * every interface; ipPrefixCount becomes IPv4 prefixes, or in an IPv6
 * cluster IPv6 prefixes next to a primary IPv6 address.
 */
#include "cloud/aws/launchtemplate_internal.h"

#include <string.h>

#include "base/error.h"

static bool efa_only(const char *type)
{
    return type && strcmp(type, "efa-only") == 0;
}

/* Addresses, public IP and connection tracking of an interface that carries IP traffic. */
static void addressing(const kp_ec2nodeclass *nc, bool ipv6, kp_ec2_lt_network_interface *ni)
{
    ni->associate_public_ip =
        nc->has_associate_public_ip_address ? (nc->associate_public_ip_address ? 1 : 0) : -1;
    if (nc->has_ip_prefix_count && !ipv6)
        ni->has_ipv4_prefix_count = true, ni->ipv4_prefix_count = nc->ip_prefix_count;
    if (nc->has_ip_prefix_count && ipv6)
        ni->has_ipv6_prefix_count = true, ni->ipv6_prefix_count = nc->ip_prefix_count;
    if (ipv6) ni->primary_ipv6 = true, ni->ipv6_address_count = 1;
    const kp_connection_tracking *ct = &nc->connection_tracking;
    if (ct->present) {
        ni->tcp_established_timeout = ct->has_tcp_established_timeout ? ct->tcp_established_timeout : 0;
        ni->udp_stream_timeout = ct->has_udp_stream_timeout ? ct->udp_stream_timeout : 0;
        ni->udp_timeout = ct->has_udp_timeout ? ct->udp_timeout : 0;
    }
}

static const char **group_ids(kp_arena *a, const kp_ec2nodeclass *nc)
{
    const char **ids = KP_ARENA_NEW(a, const char *, nc->n_status_security_groups);
    for (size_t i = 0; i < nc->n_status_security_groups; i++)
        ids[i] = nc->status_security_groups[i].id;
    return ids;
}

int kp_aws_lt_interfaces(kp_arena *a, const kp_aws_lt_params *p, bool ipv6,
                         kp_ec2_launch_template_data *d)
{
    const kp_ec2nodeclass *nc = p->nc;
    if (nc->n_status_security_groups == 0)
        return kp_error_set(KP_ENOTREADY, "ec2nodeclass %s: no security groups in its status",
                            nc->meta.name);
    size_t n = nc->n_network_interfaces ? nc->n_network_interfaces
               : p->efa_count > 0      ? (size_t)p->efa_count
                                       : 1;
    kp_ec2_lt_network_interface *nis = KP_ARENA_NEW(a, kp_ec2_lt_network_interface, n);
    const char **groups = group_ids(a, nc);
    for (size_t i = 0; i < n; i++) {
        kp_ec2_lt_network_interface *ni = &nis[i];
        ni->security_group_ids = groups;
        ni->n_security_group_ids = nc->n_status_security_groups;
        ni->associate_public_ip = -1;
        if (nc->n_network_interfaces) {
            const kp_nc_network_interface *want = &nc->network_interfaces[i];
            ni->network_card_index = want->network_card_index;
            ni->device_index = want->device_index;
            ni->interface_type = want->interface_type;
        } else if (p->efa_count > 0) {
            /* card 0 first, so one card wins the public IP */
            ni->network_card_index = (int32_t)i;
            ni->device_index = i == 0 ? 0 : 1;
            ni->interface_type = "efa";
        }
        if (!efa_only(ni->interface_type)) addressing(nc, ipv6, ni);
    }
    d->network_interfaces = nis;
    d->n_network_interfaces = n;
    return 0;
}

void kp_aws_lt_hash_interfaces(kp_buf *b, const kp_ec2_launch_template_data *d)
{
    for (size_t i = 0; i < d->n_network_interfaces; i++) {
        const kp_ec2_lt_network_interface *ni = &d->network_interfaces[i];
        kp_buf_printf(b, "ni%d.%d.%s.%d.%d%d.%d%d.%d.%d.%d.%d.%d|", (int)ni->network_card_index,
                      (int)ni->device_index, ni->interface_type ? ni->interface_type : "",
                      ni->associate_public_ip, ni->has_ipv4_prefix_count,
                      (int)ni->ipv4_prefix_count, ni->has_ipv6_prefix_count,
                      (int)ni->ipv6_prefix_count, ni->primary_ipv6, (int)ni->ipv6_address_count,
                      (int)ni->tcp_established_timeout, (int)ni->udp_stream_timeout,
                      (int)ni->udp_timeout);
        for (size_t j = 0; j < ni->n_security_group_ids; j++)
            kp_buf_printf(b, "%s,", ni->security_group_ids[j]);
    }
}
