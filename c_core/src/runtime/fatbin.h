/*
 * fatbin.h — reading the entry headers of an embedded fatbin (fatbin.c), for the module loader
 * (module.c), warpfft_runtime_info (info.c) and their tests.
 */
#ifndef WARPFFT_FATBIN_H
#define WARPFFT_FATBIN_H

#include <stddef.h>
#include <stdint.h>

#include "warpfft.h"

/* ---- fatbin entries (fatbin.c) ----
 *
 * Layout (little-endian), as written by CUDA 12/13 `fatbinary`:
 *   file header, 16 bytes: u32 magic 0xBA55ED50, u16 version (1), u16 header size (16),
 *                          u64 bytes of entries that follow the header.
 *   entry header:  +0 u16 kind (1 PTX, 2 ELF), +2 u16 version (0x0101), +4 u32 header size
 *                  (64 for most ELF, 80 for PTX, 112 for sm_100+ ELF: always use the field),
 *                  +8 u64 payload size (padded), +16 u32 compressed payload size (0 if not),
 *                  +24 u32 PTX ISA version for PTX (major << 16 | minor), +28 u32 arch (e.g.
 *                  90), +40 u64 flags (0x1 64-bit, 0x8000 compressed, 0x100000 arch-specific
 *                  "a", 0x200000 family-specific "f"), +56 u64 uncompressed size (if compressed).
 *   The payload follows the entry header; the next entry follows the payload. Several fatbins
 *   may be concatenated (each with its own file header). */

enum { WF_FATBIN_PTX = 1, WF_FATBIN_ELF = 2 };
#define WF_FATBIN_MAGIC 0xBA55ED50u

typedef struct wf_fatbin_entry {
    int kind;            /* WF_FATBIN_PTX, WF_FATBIN_ELF, or another value as found */
    int arch;            /* e.g. 90: sm_90 for ELF, compute_90 for PTX */
    int ptx_version;     /* PTX entries: ISA version * 10, e.g. 90 for PTX ISA 9.0; else 0 */
    int compressed;      /* payload stored compressed */
    int arch_specific;   /* built for sm_XXa: runs only on exactly that arch */
    int family_specific; /* built for sm_XXf: runs on that major with minor >= */
    uint64_t flags;      /* raw flags word */
    size_t payload_offset;
    size_t payload_size;
} wf_fatbin_entry;

/* Parses the entry headers of `data` (size bytes). Writes at most `max` entries to `out` (may be
 * NULL with max 0) and the total count to *n. WARPFFT_ERR_INVALID_ARG with a message if the
 * bytes are not a well-formed fatbin; never reads outside [data, data + size). */
warpfft_status wf_fatbin_parse(const void *data, size_t size, wf_fatbin_entry *out, size_t max,
                               size_t *n);

/* The image the driver will pick on a GPU of compute capability `sm` (major*10 + minor):
 * "sass" if an ELF runs there, else "ptx-jit" if a PTX entry can be compiled for it, else NULL. */
const char *wf_fatbin_image_for(const wf_fatbin_entry *e, size_t n, int sm);

/* Writes a list such as "sm_80, sm_90 (SASS); compute_75 (PTX)" for error messages. */
void wf_fatbin_describe(const wf_fatbin_entry *e, size_t n, char *buf, size_t len);

#endif /* WARPFFT_FATBIN_H */
