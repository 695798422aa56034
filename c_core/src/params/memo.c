/*
 * memo.c — the memos of memo.h: one lock for all of them (their work under it is a few
 * comparisons and copies of at most ~0.5 MB), re-made in a fork() child.
 */
#include "params/memo.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t memo_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t memo_stamp; /* guarded by memo_lock, as every memo's entries */

/* A fork() while another thread holds the lock leaves it held in the child. */
static void memo_atfork_child(void) {
    pthread_mutex_init(&memo_lock, NULL);
}

__attribute__((constructor)) static void memo_register_atfork(void) {
    pthread_atfork(NULL, NULL, memo_atfork_child);
}

static void *copy_of(const void *p, size_t n) {
    void *c = malloc(n ? n : 1);
    if (c && n)
        memcpy(c, p, n);
    return c;
}

static wf_memo_entry *find(wf_memo *m, const void *key, size_t key_len) {
    for (size_t i = 0; i < m->n; i++)
        if (m->e[i].key_len == key_len && memcmp(m->e[i].key, key, key_len) == 0)
            return &m->e[i];
    return NULL;
}

int wf_memo_get(wf_memo *m, const void *key, size_t key_len, void **val, size_t *val_len) {
    *val = NULL;
    int found = 0;
    pthread_mutex_lock(&memo_lock);
    wf_memo_entry *e = find(m, key, key_len);
    if (e) {
        e->stamp = ++memo_stamp;
        *val = copy_of(e->val, e->val_len);
        found = *val ? 1 : -1;
        if (val_len)
            *val_len = e->val_len;
    }
    pthread_mutex_unlock(&memo_lock);
    return found;
}

void wf_memo_put(wf_memo *m, const void *key, size_t key_len, const void *val, size_t val_len) {
    void *k = copy_of(key, key_len), *v = copy_of(val, val_len);
    if (!k || !v) {
        free(k);
        free(v);
        return;
    }
    pthread_mutex_lock(&memo_lock);
    wf_memo_entry *e = find(m, key, key_len); /* another thread kept it meanwhile: keep one */
    if (!e && m->n < m->cap)
        e = &m->e[m->n++];
    if (!e) { /* full: the least recently used goes */
        size_t lru = 0;
        for (size_t i = 1; i < m->n; i++)
            if (m->e[i].stamp < m->e[lru].stamp)
                lru = i;
        e = &m->e[lru];
    }
    void *old_k = e->key, *old_v = e->val;
    e->key = k;
    e->val = v;
    e->key_len = key_len;
    e->val_len = val_len;
    e->stamp = ++memo_stamp;
    pthread_mutex_unlock(&memo_lock);
    free(old_k);
    free(old_v);
}
