/*
 * A tiny in-process HTTP server for the AWS unit tests: it answers a fixed
 * script of responses in order on a loopback port (one connection per request,
 * "Connection: close") and records every request it saw, so tests can assert
 * what the client sent. Test-only; included by tests/unit/test_aws_*.c.
 */
#ifndef KP_TEST_AWS_DOUBLE_H
#define KP_TEST_AWS_DOUBLE_H

#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#define DBL_FN static __attribute__((unused))
#define DBL_MAX_REQUESTS 32

typedef struct dbl_response {
    int status;
    const char *headers; /* extra header lines, each ending "\r\n"; NULL for none */
    const char *body;    /* NULL for empty */
} dbl_response;

typedef struct dbl_request {
    char method[16];
    char path[1024];
    char headers[16384]; /* raw header block */
    char *body;          /* malloc'd, NUL-terminated */
    size_t body_len;
} dbl_request;

typedef struct dbl_server {
    int fd;
    int port;
    char url[64];
    pthread_t thread;
    const dbl_response *script;
    size_t n_script;
    dbl_request requests[DBL_MAX_REQUESTS];
    size_t n_requests;
} dbl_server;

/* Read one request: headers up to the blank line, then Content-Length bytes. */
static int dbl_read_request(int fd, dbl_request *r)
{
    char buf[65536];
    size_t len = 0;
    char *end = NULL;
    while (!end && len < sizeof(buf) - 1) {
        ssize_t n = read(fd, buf + len, sizeof(buf) - 1 - len);
        if (n <= 0)
            return -1;
        len += (size_t)n;
        buf[len] = '\0';
        end = strstr(buf, "\r\n\r\n");
    }
    if (!end)
        return -1;
    size_t head_len = (size_t)(end - buf) + 4;
    sscanf(buf, "%15s %1023s", r->method, r->path);
    snprintf(r->headers, sizeof(r->headers), "%.*s", (int)head_len, buf);
    size_t want = 0;
    for (char *p = r->headers; (p = strchr(p, '\n')) != NULL; p++)
        if (strncasecmp(p + 1, "Content-Length:", 15) == 0)
            want = strtoul(p + 16, NULL, 10);
    r->body = malloc(want + 1);
    size_t have = len - head_len < want ? len - head_len : want;
    memcpy(r->body, buf + head_len, have);
    while (have < want) {
        ssize_t n = read(fd, r->body + have, want - have);
        if (n <= 0)
            break;
        have += (size_t)n;
    }
    r->body[have] = '\0';
    r->body_len = have;
    return 0;
}

static void dbl_write_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, data, len);
        if (n <= 0)
            return;
        data += n;
        len -= (size_t)n;
    }
}

static void dbl_answer(int fd, const dbl_response *resp)
{
    const char *body = resp->body ? resp->body : "";
    char head[4096];
    int n = snprintf(head, sizeof(head),
                     "HTTP/1.1 %d X\r\nContent-Length: %zu\r\nConnection: close\r\n%s\r\n",
                     resp->status, strlen(body), resp->headers ? resp->headers : "");
    dbl_write_all(fd, head, (size_t)n);
    dbl_write_all(fd, body, strlen(body));
}

static void *dbl_loop(void *arg)
{
    dbl_server *s = arg;
    for (size_t i = 0; i < s->n_script; i++) {
        int c = accept(s->fd, NULL, NULL);
        if (c < 0)
            break;
        if (s->n_requests < DBL_MAX_REQUESTS &&
            dbl_read_request(c, &s->requests[s->n_requests]) == 0) {
            s->n_requests++;
            dbl_answer(c, &s->script[i]);
        }
        shutdown(c, SHUT_WR);
        char drain[256];
        while (read(c, drain, sizeof(drain)) > 0)
            ;
        close(c);
    }
    return NULL;
}

DBL_FN void dbl_start(dbl_server *s, const dbl_response *script, size_t n)
{
    memset(s, 0, sizeof(*s));
    s->script = script;
    s->n_script = n;
    s->fd = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert_geq(s->fd, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    cr_assert_eq(bind(s->fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
    cr_assert_eq(listen(s->fd, 16), 0);
    socklen_t alen = sizeof(addr);
    getsockname(s->fd, (struct sockaddr *)&addr, &alen);
    s->port = ntohs(addr.sin_port);
    snprintf(s->url, sizeof(s->url), "http://127.0.0.1:%d", s->port);
    cr_assert_eq(pthread_create(&s->thread, NULL, dbl_loop, s), 0);
}

/* Stop (also when fewer requests came than scripted); the recorded requests
 * stay readable until dbl_free. */
DBL_FN void dbl_stop(dbl_server *s)
{
    if (s->fd < 0)
        return;
    shutdown(s->fd, SHUT_RDWR);
    pthread_join(s->thread, NULL);
    close(s->fd);
    s->fd = -1;
}

DBL_FN void dbl_free(dbl_server *s)
{
    dbl_stop(s);
    for (size_t i = 0; i < s->n_requests; i++)
        free(s->requests[i].body);
    s->n_requests = 0;
}

/* The value of header `name` in recorded request `r` (copied into out), or NULL. */
DBL_FN const char *dbl_header(const dbl_request *r, const char *name, char *out, size_t size)
{
    size_t nl = strlen(name);
    for (const char *p = r->headers; (p = strchr(p, '\n')) != NULL; p++) {
        if (strncasecmp(p + 1, name, nl) == 0 && p[1 + nl] == ':') {
            const char *v = p + 2 + nl;
            while (*v == ' ')
                v++;
            snprintf(out, size, "%.*s", (int)strcspn(v, "\r\n"), v);
            return out;
        }
    }
    return NULL;
}

/* A recorded response under tests/unit/data/aws/ (free() it). */
DBL_FN char *dbl_fixture(const char *name)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/tests/unit/data/aws/%s", KP_SOURCE_DIR, name);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "missing fixture %s", path);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *data = malloc((size_t)len + 1);
    cr_assert_eq(fread(data, 1, (size_t)len, f), (size_t)len);
    data[len] = '\0';
    fclose(f);
    return data;
}

#endif
