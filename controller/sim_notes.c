/* Notes for `simulate` (see sim_notes.h). */
#include "controller/sim_notes.h"

#include "base/xalloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void kp_sim_note(kp_sim_notes *notes, const char *fmt, ...)
{
    va_list ap, again;
    va_start(ap, fmt);
    va_copy(again, ap);
    int len = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    size_t size = len < 0 ? 1 : (size_t)len + 1;
    char *line = kp_xmalloc(size);
    line[0] = '\0';
    if (len >= 0) vsnprintf(line, size, fmt, again);
    va_end(again);
    notes->items = kp_xgrow(notes->items, &notes->cap, notes->count + 1, sizeof(char *));
    notes->items[notes->count++] = line;
}

void kp_sim_notes_free(kp_sim_notes *notes)
{
    for (size_t i = 0; i < notes->count; i++)
        free(notes->items[i]);
    free(notes->items);
    *notes = (kp_sim_notes){0};
}
