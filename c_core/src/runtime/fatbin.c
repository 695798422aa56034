/*
 * fatbin.c — lists the images in a fatbin (kind, arch, flags) without the CUDA tools.
 *
 * The driver picks the image itself when it loads a fatbin; we read the headers only to report
 * which one it will take ("sass" or "ptx-jit") and to name what is embedded when nothing fits.
 * The layout is in fatbin.h. Every read is bounds-checked: a malformed blob is an error, never
 * an out-of-range read.
 */
#include <stdio.h>
#include <string.h>

#include "runtime/error.h"
#include "runtime/fatbin.h"

enum {
    WF_FATBIN_HEADER = 16,    /* file header bytes */
    WF_ENTRY_MIN_HEADER = 48, /* up to and including the flags word */
    WF_FLAG_COMPRESSED = 0x8000,
    WF_FLAG_ARCH_SPECIFIC = 0x100000,
    WF_FLAG_FAMILY_SPECIFIC = 0x200000
};

/* Little-endian reads, byte by byte: no alignment or host-endianness assumptions. */
static uint64_t rd_le(const unsigned char *p, int bytes) {
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static void entry_from_header(const unsigned char *h, size_t payload_offset, uint64_t psize,
                              wf_fatbin_entry *e) {
    memset(e, 0, sizeof *e);
    e->kind = (int)rd_le(h, 2);
    e->arch = (int)rd_le(h + 28, 4);
    e->flags = rd_le(h + 40, 8);
    e->compressed = rd_le(h + 16, 4) != 0 || (e->flags & WF_FLAG_COMPRESSED) != 0;
    e->arch_specific = (e->flags & WF_FLAG_ARCH_SPECIFIC) != 0;
    e->family_specific = (e->flags & WF_FLAG_FAMILY_SPECIFIC) != 0;
    if (e->kind == WF_FATBIN_PTX) {
        uint64_t v = rd_le(h + 24, 4);
        e->ptx_version = (int)((v >> 16) * 10 + (v & 0xffff));
    }
    e->payload_offset = payload_offset;
    e->payload_size = (size_t)psize;
}

/* Entries of one fatbin: `len` bytes at p, which sit at `base` from the start of the blob. */
static warpfft_status parse_entries(const unsigned char *p, size_t len, size_t base,
                                    wf_fatbin_entry *out, size_t max, size_t *count) {
    size_t q = 0;
    while (q < len) {
        if (len - q < WF_ENTRY_MIN_HEADER)
            return wf_error(WARPFFT_ERR_INVALID_ARG,
                            "fatbin: entry at byte %zu is truncated (%zu bytes left)", base + q,
                            len - q);
        uint64_t hsize = rd_le(p + q + 4, 4), psize = rd_le(p + q + 8, 8);
        if (hsize < WF_ENTRY_MIN_HEADER || hsize > len - q || psize > len - q - hsize)
            return wf_error(WARPFFT_ERR_INVALID_ARG,
                            "fatbin: entry at byte %zu has header %llu + payload %llu bytes, but "
                            "only %zu remain",
                            base + q, (unsigned long long)hsize, (unsigned long long)psize,
                            len - q);
        if (*count < max)
            entry_from_header(p + q, base + q + (size_t)hsize, psize, &out[*count]);
        (*count)++;
        q += (size_t)hsize + (size_t)psize;
    }
    return WARPFFT_SUCCESS;
}

/* Zero padding may separate (and follow) concatenated fatbins. */
static size_t skip_zeros(const unsigned char *p, size_t pos, size_t size) {
    while (pos < size && p[pos] == 0)
        pos++;
    return pos;
}

warpfft_status wf_fatbin_parse(const void *data, size_t size, wf_fatbin_entry *out, size_t max,
                               size_t *n) {
    const unsigned char *p = data;
    size_t count = 0, pos = 0;
    if (!data || !n || (!out && max > 0))
        return wf_error(WARPFFT_ERR_INVALID_ARG, "wf_fatbin_parse: NULL argument");
    if (size < WF_FATBIN_HEADER || rd_le(p, 4) != WF_FATBIN_MAGIC)
        return wf_error(WARPFFT_ERR_INVALID_ARG,
                        "fatbin: no 0x%08X magic at the start of the %zu-byte blob",
                        WF_FATBIN_MAGIC, size);
    while (pos < size) {
        if (size - pos < WF_FATBIN_HEADER || rd_le(p + pos, 4) != WF_FATBIN_MAGIC)
            return wf_error(WARPFFT_ERR_INVALID_ARG,
                            "fatbin: expected a header (magic 0x%08X) at byte %zu", WF_FATBIN_MAGIC,
                            pos);
        uint64_t hsize = rd_le(p + pos + 6, 2), body = rd_le(p + pos + 8, 8);
        if (hsize < WF_FATBIN_HEADER || hsize > size - pos || body > size - pos - hsize)
            return wf_error(WARPFFT_ERR_INVALID_ARG,
                            "fatbin: header at byte %zu claims %llu + %llu bytes, but only %zu "
                            "remain",
                            pos, (unsigned long long)hsize, (unsigned long long)body, size - pos);
        warpfft_status st =
            parse_entries(p + pos + hsize, (size_t)body, pos + (size_t)hsize, out, max, &count);
        if (st != WARPFFT_SUCCESS)
            return st;
        pos = skip_zeros(p, pos + (size_t)hsize + (size_t)body, size);
    }
    *n = count;
    return WARPFFT_SUCCESS;
}

/* SASS runs on the same major version with an equal or higher minor; "a" images only on
 * exactly their arch. */
static int elf_runs_on(const wf_fatbin_entry *e, int sm) {
    if (e->arch_specific)
        return e->arch == sm;
    return e->arch / 10 == sm / 10 && e->arch <= sm;
}

/* PTX compiles for any later arch, except "a" (exact) and "f" (same major) variants. */
static int ptx_runs_on(const wf_fatbin_entry *e, int sm) {
    if (e->arch_specific)
        return e->arch == sm;
    if (e->family_specific)
        return e->arch / 10 == sm / 10 && e->arch <= sm;
    return e->arch <= sm;
}

const char *wf_fatbin_image_for(const wf_fatbin_entry *e, size_t n, int sm) {
    for (size_t i = 0; i < n; i++)
        if (e[i].kind == WF_FATBIN_ELF && elf_runs_on(&e[i], sm))
            return "sass";
    for (size_t i = 0; i < n; i++)
        if (e[i].kind == WF_FATBIN_PTX && ptx_runs_on(&e[i], sm))
            return "ptx-jit";
    return NULL;
}

static void describe_kind(const wf_fatbin_entry *e, size_t n, int kind, char *buf, size_t len) {
    size_t used = strlen(buf);
    int first = 1;
    for (size_t i = 0; i < n && used + 1 < len; i++) {
        if (e[i].kind != kind)
            continue;
        const char *suffix = e[i].arch_specific ? "a" : e[i].family_specific ? "f" : "";
        int w = snprintf(buf + used, len - used, "%s%s_%d%s", first ? "" : ", ",
                         kind == WF_FATBIN_ELF ? "sm" : "compute", e[i].arch, suffix);
        used = w < 0 ? len : used + (size_t)w;
        first = 0;
    }
    if (!first && used + 1 < len)
        snprintf(buf + used, len - used, kind == WF_FATBIN_ELF ? " (SASS)" : " (PTX)");
}

void wf_fatbin_describe(const wf_fatbin_entry *e, size_t n, char *buf, size_t len) {
    if (!buf || len == 0)
        return;
    buf[0] = '\0';
    describe_kind(e, n, WF_FATBIN_ELF, buf, len);
    size_t used = strlen(buf);
    if (used > 0 && used + 1 < len)
        snprintf(buf + used, len - used, "; ");
    describe_kind(e, n, WF_FATBIN_PTX, buf, len);
    used = strlen(buf);
    if (used >= 2 && strcmp(buf + used - 2, "; ") == 0)
        buf[used - 2] = '\0';
    if (buf[0] == '\0')
        snprintf(buf, len, "no images");
}
