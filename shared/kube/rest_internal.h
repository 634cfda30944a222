/*
 * The client's insides, shared by rest.c, handle.c, cancel.c and watch.c
 * (not an interface for other modules).
 */
#ifndef KP_KUBE_REST_INTERNAL_H
#define KP_KUBE_REST_INTERNAL_H

#include "kube/ratelimit.h"
#include "kube/rest.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>

/* One thread's curl handle. */
typedef struct kp_kube_handle {
    kp_kube_client *client;
    CURL *easy;
    bool busy;      /* a transfer is under way (a re-entrant call gets a temporary handle) */
    bool temporary; /* freed after one request */
    struct kp_kube_handle *next;      /* every pooled handle */
    struct kp_kube_handle *next_idle; /* handles whose thread has exited */
    char errbuf[CURL_ERROR_SIZE];
} kp_kube_handle;

typedef struct kp_kube_auth {
    pthread_mutex_t lock;
    char *token;      /* current bearer token, or NULL */
    char *token_file; /* re-read from here, or NULL */
    struct stat token_stat;
    int64_t token_read_ns; /* monotonic time of the last read */
} kp_kube_auth;

struct kp_kube_client {
    kp_kube_client_opts opts;
    const kp_clock *clock;
    char *server;
    char *namespace;
    char *user_agent;
    char *ca_file, *ca_data, *cert_file, *cert_data, *key_file, *key_data;
    size_t ca_len, cert_len, key_len;
    bool insecure;
    kp_kube_auth auth;
    kp_ratelimit limit;

    pthread_mutex_t lock; /* handles, discovery */
    pthread_key_t thread_handle;
    bool has_key;
    kp_kube_handle *handles;
    kp_kube_handle *idle;
    int policy_v1; /* -1 unknown, 0 no, 1 yes */
};

struct kp_kube_cancel {
    CURLM *multi; /* drives watches, so that firing can wake them */
    atomic_bool fired;
    pthread_mutex_t lock;
    pthread_cond_t cond;
};

/* libcurl's global initialisation, once per process. */
void kp_kube_curl_init(void);

/* Set up the per-thread handle key. */
int kp_kube_handles_init(kp_kube_client *c);
/* The calling thread's handle (busy until released). */
kp_kube_handle *kp_kube_handle_acquire(kp_kube_client *c);
void kp_kube_handle_release(kp_kube_handle *h);
/* Free every pooled handle (the client is going away). */
void kp_kube_handles_free(kp_kube_client *c);

/* Reset the handle and set up URL, method, body, headers, TLS and timeouts
 * for `req`. *headers is for curl_slist-freeing with kp_kube_headers_free
 * after the transfer. `timeout_ms` 0: none (watches). */
int kp_kube_handle_prepare(kp_kube_handle *h, const kp_kube_request *req, long timeout_ms,
                           struct curl_slist **headers);
/* Free headers, wiping the Authorization line first. */
void kp_kube_headers_free(struct curl_slist *headers);

/* Read the token (file) for the first time. */
int kp_kube_auth_init(kp_kube_auth *auth, const kp_kube_config *config);
void kp_kube_auth_destroy(kp_kube_auth *auth);

/* Wait for the rate limiter (or until `cancel` fires). */
void kp_kube_throttle(kp_kube_client *c, kp_kube_cancel *cancel);

/* kp_kube_do, also saying how many bytes the answer's body had (lists cap
 * the sum over their pages). */
int kp_kube_do_counted(kp_kube_client *c, const kp_kube_request *req, cJSON **out, size_t *bytes);

/* The pages of one list being gathered (ops.c; the fuzzer feeds it too). */
typedef struct kp_kube_pager {
    cJSON *items;
    char *rv;     /* the first page's resourceVersion */
    char *next;   /* continue token, or NULL */
    size_t bytes; /* bodies of the pages so far */
    size_t pages;
} kp_kube_pager;

/* Take one decoded page (its items move into p->items): KP_ETOOLARGE once the
 * pages add up to more than `max` bytes, KP_EINVALID when the page repeats
 * the continue token it answered. `path` names the request in messages. */
int kp_kube_pager_add(kp_kube_pager *p, cJSON *page, size_t bytes, size_t max, const char *path);
void kp_kube_pager_reset(kp_kube_pager *p);

/* The KP_E* and message for a failed transfer. */
int kp_kube_curl_error(CURLcode rc, const kp_kube_handle *h, const kp_kube_request *req);

/* Progress callback aborting a transfer when its cancel token fires. */
int kp_kube_cancel_progress(void *cancel, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                            curl_off_t ulnow);

#endif
