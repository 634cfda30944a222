/*
 * The caBundle on a real cluster (see cabundle.h for the patch itself): a
 * kp_cabundle_client that reads and patches the admissionregistration.k8s.io/v1
 * webhook configurations through shared/kube, and the bundle that several
 * webhook replicas share.
 *
 * Why a shared bundle: every replica started with --self-signed makes its own
 * CA, and the API server sends a review to whichever replica the Service
 * picks, so the caBundle has to trust all of them. kp_cabundle_share() puts
 * this replica's CA into the bundle next to the other CAs already there that
 * are still valid, instead of replacing them. The bundle is written in one
 * canonical order (newest first, ties by fingerprint) and canonical PEM, so
 * replicas that see the same set of CAs write the same bytes and a resync
 * that finds its CA present patches nothing. Past `max_cas` the oldest CAs
 * (most often those of replicas that are gone) are dropped; a live replica
 * whose CA was dropped puts it back at its next resync.
 */
#ifndef KP_WEBHOOK_CABUNDLE_KUBE_H
#define KP_WEBHOOK_CABUNDLE_KUBE_H

#include "kube/rest.h"
#include "webhook/cabundle.h"

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

/* Enough for two replicas, a rolling update's surge, and one spare. */
#define KP_CABUNDLE_MAX_CAS 4

/* Fill `out` with callbacks over `kube`, which is borrowed: it must outlive
 * every use of `out`. GET answers 404 as KP_ENOTFOUND; PATCH answers 409 and
 * 422 (the API server's answer to a failed JSON Patch "test") as
 * KP_ECONFLICT; other failures keep shared/kube's codes and messages. */
void kp_cabundle_kube_client(kp_cabundle_client *out, kp_kube_client *kube);

/* The PEM bundle to publish into `config`: `ca_pem` (one certificate) and
 * the certificates found in the caBundles of config's webhooks that have not
 * expired at `now_s` (seconds since the epoch), without duplicates, at most
 * `max_cas` (>= 1) in all, ours always kept. Entries that do not decode are
 * dropped. *out is malloc'd PEM text. KP_EINVALID when `ca_pem` holds no
 * certificate. */
int kp_cabundle_merge(char **out, const cJSON *config, const char *ca_pem, size_t max_cas,
                      int64_t now_s);

/* Read the configuration, merge (above), and patch it when its webhooks do
 * not all hold the merged bundle; a KP_ECONFLICT (someone else wrote in
 * between) starts again from a fresh read, up to 5 times. *changed (may be
 * NULL) says whether a patch was sent. */
int kp_cabundle_share(const kp_cabundle_client *client, const char *resource, const char *name,
                      const char *ca_pem, size_t max_cas, int64_t now_s, int *changed);

#endif
