/*
 * memo.h — small process-wide memos of plan creation's host work (memo.c): a fixed number of
 * entries, key bytes -> value bytes, copied in and out, the least recently used replaced. The
 * (sigma, w) search's result per request (cost.c) and the width-from-points tables per shape
 * (offsets.c) are kept here, so a second plan of a problem pays neither. Thread-safe (one lock
 * for every memo, re-made in the child of a fork(), where the entries stay valid host memory).
 * Nothing on the GPU.
 */
#ifndef WARPFFT_PARAMS_MEMO_H
#define WARPFFT_PARAMS_MEMO_H

#include <stddef.h>
#include <stdint.h>

typedef struct wf_memo_entry {
    void *key, *val;
    size_t key_len, val_len;
    uint64_t stamp; /* of the last get or put: the smallest is replaced first */
} wf_memo_entry;

typedef struct wf_memo {
    size_t cap, n;
    wf_memo_entry *e;
} wf_memo;

/* A memo `name` of `capacity` entries, at file scope. */
#define WF_MEMO(name, capacity)                                                                    \
    static wf_memo_entry name##_entries[capacity];                                                 \
    static wf_memo name = {(capacity), 0, name##_entries}

/* A malloc'd copy of key's value into *val (free() it) and its length into *val_len (may be
 * NULL): 1; 0 when the memo does not hold key (*val NULL); -1 when the copy could not be
 * allocated (*val NULL). */
int wf_memo_get(wf_memo *m, const void *key, size_t key_len, void **val, size_t *val_len);
/* Keeps copies of key and val, replacing key's value or the least recently used entry; when
 * there is no memory for the copies nothing is kept (only time is lost). */
void wf_memo_put(wf_memo *m, const void *key, size_t key_len, const void *val, size_t val_len);

#endif
