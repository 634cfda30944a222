/*
 * An interruption source backed by a directory: every `*.json` file in it is
 * one notice, its body in the format the parser given reads (the controller
 * passes the EventBridge event parser, so a file holds exactly what AWS would
 * put on the SQS queue). Acknowledging a notice deletes its file.
 *
 * This is how the kwok provider (which has no cloud to warn it) and the
 * end-to-end tests inject spot interruptions, scheduled changes and state
 * changes: write the event into the directory, atomically (write a temporary
 * name not ending in .json, then rename). Files are taken in name order;
 * files over 256 KiB are refused as notices that do not parse.
 */
#ifndef KP_CLOUD_INTERRUPTION_DIR_H
#define KP_CLOUD_INTERRUPTION_DIR_H

#include "cloud/interruption.h"

/* Parses one notice body into *out (strings in `arena`); a negative KP_E*
 * with the message set when the body is not a notice. */
typedef int (*kp_interruption_parse_fn)(const char *body, kp_arena *arena, kp_interruption *out);

/* KP_ENOTFOUND when `dir` is not a directory. The source copies `dir`. */
int kp_interruption_dir_new(const char *dir, kp_interruption_parse_fn parse, kp_interruption_source **out);

#endif
