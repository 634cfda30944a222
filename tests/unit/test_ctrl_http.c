/*
 * controller/http: /healthz must answer while many slow clients hold
 * connections open (the kubelet restarts a controller whose probes fail),
 * and a client that trickles its headers is cut at the request deadline
 * rather than kept for as long as it keeps trickling.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"
#include "controller/http.h"
#include "metrics/metrics.h"

enum { SLOW = 100 };

static int connect_to(uint16_t port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert_geq(fd, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    cr_assert_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0, "%s", strerror(errno));
    struct timeval tv = {5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    return fd;
}

/* The status line of GET `path`, or "" when no answer came. */
static void probe(uint16_t port, const char *path, char *status, size_t size)
{
    int fd = connect_to(port);
    char req[256];
    snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", path);
    send(fd, req, strlen(req), MSG_NOSIGNAL);
    ssize_t n = recv(fd, status, size - 1, 0);
    status[n > 0 ? n : 0] = '\0';
    char *eol = strstr(status, "\r\n");
    if (eol) *eol = '\0';
    close(fd);
}

/* 0 while the peer keeps the connection, 1 once it closed it. */
static int closed_by_server(int fd)
{
    char c;
    ssize_t n = recv(fd, &c, 1, MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

Test(ctrl_http, probes_answer_under_slow_clients_and_slow_clients_are_cut, .timeout = 60)
{
    kp_metrics *metrics = kp_metrics_new();
    kp_ctrl_http *h = NULL;
    cr_assert_eq(kp_ctrl_http_start(&h, "127.0.0.1", 0, metrics, NULL, NULL), 0, "%s",
                 kp_error_last());
    uint16_t port = kp_ctrl_http_port(h);
    int slow[SLOW];
    for (int i = 0; i < SLOW; i++) {
        slow[i] = connect_to(port);
        send(slow[i], "GET /healthz HTTP/1.1\r\n", 23, MSG_NOSIGNAL);
    }
    char status[256];
    probe(port, "/healthz", status, sizeof(status));
    cr_expect_str_eq(status, "HTTP/1.1 200 OK", "a probe among %d slow clients got \"%s\"", SLOW,
                     status);

    /* Each slow client sends a header byte twice a second: never idle. */
    int closed = 0;
    time_t until = time(NULL) + 25;
    while (closed < SLOW && time(NULL) < until) {
        closed = 0;
        for (int i = 0; i < SLOW; i++) {
            send(slow[i], "X", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
            closed += closed_by_server(slow[i]);
        }
        usleep(500 * 1000);
    }
    cr_expect_eq(closed, SLOW, "%d of %d trickling clients were cut at the deadline", closed,
                 SLOW);
    for (int i = 0; i < SLOW; i++)
        close(slow[i]);
    probe(port, "/healthz", status, sizeof(status));
    cr_expect_str_eq(status, "HTTP/1.1 200 OK");
    kp_ctrl_http_stop(h);
    kp_metrics_free(metrics);
}
