/* The process collector (see process.h). */
#include "metrics/process.h"
#include "base/error.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

enum { P_CPU, P_OPEN_FDS, P_MAX_FDS, P_VIRT, P_VIRT_MAX, P_RSS, P_START, P_RX, P_TX };

/* Read a small /proc file whole (they are short: a cap, not a stream). */
static int read_small(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return kp_error_set(KP_EIO, "%s: %s", path, strerror(errno));
    size_t n = fread(buf, 1, size - 1, f);
    buf[n] = '\0';
    fclose(f);
    return 0;
}

/* Field `n` (1-based, as proc(5) numbers them) of /proc/<pid>/stat, counting
 * from the state after the command name, which may hold spaces and ')'. */
static int stat_field(const char *after_comm, int n, double *out)
{
    const char *p = after_comm;
    for (int field = 3; field < n; field++) {
        p = strchr(p, ' ');
        if (!p)
            return kp_error_set(KP_EINVALID, "/proc stat: field %d missing", n);
        p++;
    }
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(p, &end, 10);
    if (end == p || errno)
        return kp_error_set(KP_EINVALID, "/proc stat: field %d is not a number", n);
    *out = (double)v;
    return 0;
}

int kp_metrics_process_parse_stat(const char *stat, double boot_time, double ticks_per_sec, double page_size,
                          kp_process_stats *out)
{
    const char *close = stat ? strrchr(stat, ')') : NULL;
    if (!close || close[1] != ' ')
        return kp_error_set(KP_EINVALID, "/proc stat: no command name");
    const char *after = close + 2; /* field 3, the state */
    double utime = 0, stime = 0, start = 0, vsize = 0, rss = 0; /* set on success; gcc -O3 cannot see that */
    int err = stat_field(after, 14, &utime);
    if (!err)
        err = stat_field(after, 15, &stime);
    if (!err)
        err = stat_field(after, 22, &start);
    if (!err)
        err = stat_field(after, 23, &vsize);
    if (!err)
        err = stat_field(after, 24, &rss);
    if (err < 0)
        return err;
    out->cpu_seconds = (utime + stime) / ticks_per_sec;
    out->start_time_seconds = boot_time + start / ticks_per_sec;
    out->virtual_bytes = vsize;
    out->resident_bytes = rss * page_size;
    return 0;
}

/* Sum of every interface's received and sent bytes (columns 1 and 9). */
int kp_metrics_process_parse_netdev(const char *netdev, kp_process_stats *out)
{
    out->rx_bytes = out->tx_bytes = 0;
    for (const char *line = netdev; line && *line;) {
        const char *colon = strchr(line, ':'), *eol = strchr(line, '\n');
        if (colon && (!eol || colon < eol)) {
            char *end;
            double v[9];
            const char *p = colon + 1;
            int i = 0;
            for (; i < 9; i++, p = end) {
                v[i] = strtod(p, &end);
                if (end == p)
                    break;
            }
            if (i == 9)
                out->rx_bytes += v[0], out->tx_bytes += v[8];
        }
        line = eol ? eol + 1 : NULL;
    }
    return 0;
}

/* /proc/stat's btime, read line by line: the file grows with the CPUs. */
static double boot_time(void)
{
    FILE *f = fopen("/proc/stat", "r");
    char line[512];
    double t = 0;
    while (f && fgets(line, sizeof(line), f))
        if (!strncmp(line, "btime ", 6)) {
            t = strtod(line + 6, NULL);
            break;
        }
    if (f)
        fclose(f);
    return t;
}

static double open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return NAN;
    double n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += e->d_name[0] != '.';
    closedir(d);
    return n - 1; /* the directory being read */
}

static double limit(int resource)
{
    struct rlimit rl;
    if (getrlimit(resource, &rl) != 0)
        return NAN;
    return rl.rlim_cur == RLIM_INFINITY ? 18446744073709551615.0 : (double)rl.rlim_cur;
}

int kp_metrics_process_read(kp_process_stats *out)
{
    char stat[4096];
    memset(out, 0, sizeof(*out));
    int err = read_small("/proc/self/stat", stat, sizeof(stat));
    if (!err)
        err = kp_metrics_process_parse_stat(stat, boot_time(), (double)sysconf(_SC_CLK_TCK), (double)sysconf(_SC_PAGESIZE),
                                    out);
    if (err < 0)
        return err;
    out->open_fds = open_fds();
    out->max_fds = limit(RLIMIT_NOFILE);
    out->virtual_max_bytes = limit(RLIMIT_AS);
    enum { NETDEV_CAP = 65536 }; /* a few hundred interfaces; not on a worker's stack */
    char *nd = malloc(NETDEV_CAP);
    if (nd && read_small("/proc/self/net/dev", nd, NETDEV_CAP) == 0)
        kp_metrics_process_parse_netdev(nd, out);
    free(nd);
    return 0;
}

static void collect(void *ctx)
{
    kp_metric **m = ctx;
    kp_process_stats st;
    if (kp_metrics_process_read(&st) < 0)
        return;
    const double v[9] = {st.cpu_seconds,       st.open_fds,      st.max_fds,
                         st.virtual_bytes,     st.virtual_max_bytes, st.resident_bytes,
                         st.start_time_seconds, st.rx_bytes,    st.tx_bytes};
    for (int i = 0; i < 9; i++) {
        kp_metric_series *s = kp_metric_with(m[i], NULL);
        if (i == P_CPU || i == P_RX || i == P_TX) {
            /* Counters: set by adding what they lack (they never go down). */
            double have = kp_metric_series_value(s);
            kp_counter_add(s, v[i] - have);
        } else {
            kp_gauge_set(s, v[i]);
        }
    }
}

int kp_metrics_process_init(kp_metric *slots[9], kp_metrics *r)
{
    static const struct {
        enum kp_metric_type type;
        const char *name, *help;
    } f[9] = {
        {KP_METRIC_COUNTER, "process_cpu_seconds_total", "User and system CPU seconds the process has used."},
        {KP_METRIC_GAUGE, "process_open_fds", "File descriptors the process holds open."},
        {KP_METRIC_GAUGE, "process_max_fds", "The most file descriptors the process may open."},
        {KP_METRIC_GAUGE, "process_virtual_memory_bytes", "Virtual memory the process maps, in bytes."},
        {KP_METRIC_GAUGE, "process_virtual_memory_max_bytes", "The most virtual memory the process may map, in bytes."},
        {KP_METRIC_GAUGE, "process_resident_memory_bytes", "Memory of the process resident in RAM, in bytes."},
        {KP_METRIC_GAUGE, "process_start_time_seconds", "When the process started, in seconds since the Unix epoch."},
        {KP_METRIC_COUNTER, "process_network_receive_bytes_total", "Bytes received on the process's network namespace."},
        {KP_METRIC_COUNTER, "process_network_transmit_bytes_total", "Bytes sent on the process's network namespace."},
    };
    for (int i = 0; i < 9; i++) {
        int err = f[i].type == KP_METRIC_COUNTER ? kp_metrics_counter(&slots[i], r, f[i].name, f[i].help, NULL, 0)
                                                 : kp_metrics_gauge(&slots[i], r, f[i].name, f[i].help, NULL, 0);
        if (err < 0)
            return err;
    }
    return kp_metrics_on_collect(r, collect, slots);
}
