/*
 * kcache.h — the compiled-kernel disk cache (kcache.c): images kept across processes under a
 * key (sha256.h's wf_kkey), verified when read, evicted least recently used.
 */
#ifndef WARPFFT_RUNTIME_KCACHE_H
#define WARPFFT_RUNTIME_KCACHE_H

#include <stddef.h>

#include "runtime/kimage.h"

/* The cache directory: $WARPFFT_CACHE_DIR (set and empty: cache off), else
 * $XDG_CACHE_HOME/warpfft, else $HOME/.cache/warpfft (read at each call), created with mode
 * 0700 when missing. Each call opens it once (O_NOFOLLOW: not a symbolic link itself) and does
 * not use it when, as opened, it is owned by another user or group/world-writable; entries are
 * then opened, written, renamed and deleted relative to that descriptor only (kcache.c says
 * why). Entries are named <key>.wfk and must be regular files. Unusable directories and failed
 * writes are not errors: the caller compiles and goes on, and warpfft_runtime_info says why
 * (wf_kcache_state). */

/* Looks `key` (64 hex digits) up: 1 and *img (malloc'ed) on a valid entry, whose mtime is then
 * touched (least-recently-used eviction); 0 on a miss. An entry that fails verification (not a
 * regular file, magic, format, kind, size, payload hash) is deleted, if it is still the file
 * that was read, and counts as a miss. */
int wf_kcache_get(const char *key, wf_kimage *img);
/* Stores img under `key`: a unique temp file in the directory, then renamed over the entry
 * (atomic; concurrent writers of one key both leave a valid entry). Then evicts the
 * least-recently-used entries until the entries total at most $WARPFFT_CACHE_MAX_SIZE bytes
 * (default 256 MiB). Failures are recorded, not returned. */
void wf_kcache_put(const char *key, const wf_kimage *img);
/* Removes `key`'s entry (one that the driver refused to load). */
void wf_kcache_drop(const char *key);
/* For warpfft_runtime_info: the directory the environment names now ("" when the cache is
 * off) and a note: why it is off, else the last problem met ("" when none); cut to fit. */
void wf_kcache_state(char *dir, size_t dir_len, char *note, size_t note_len);

#endif /* WARPFFT_RUNTIME_KCACHE_H */
