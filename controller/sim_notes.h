/*
 * Notes `simulate` prints after its plan: one line for each thing the merge
 * of live objects and -f files, or the cloud set-up, replaced or left out.
 * A note is kept whole, however long (names and error messages included).
 */
#ifndef KP_CONTROLLER_SIM_NOTES_H
#define KP_CONTROLLER_SIM_NOTES_H

#include <stddef.h>

typedef struct kp_sim_notes {
    char **items; /* heap strings, owned */
    size_t count, cap;
} kp_sim_notes;

/* Append a printf-formatted note. */
void kp_sim_note(kp_sim_notes *notes, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Free the notes; the list is left empty, ready for reuse. */
void kp_sim_notes_free(kp_sim_notes *notes);

#endif
