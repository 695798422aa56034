/*
 * fuzz_xla_frame.h — what the XLA targets, fuzz_xla.c and fuzz_xla_toeplitz.c (each an entry
 * point and a checking stand-in of the C ABI), use of fuzz_xla_frame.c: the input read as a
 * stream of choices, the XLA call frame built from it, XLA's side of a call and the checks every
 * stand-in makes.
 */
#ifndef WARPFFT_FUZZ_XLA_FRAME_H
#define WARPFFT_FUZZ_XLA_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "framework/xla_ffi.h"
#include "fuzz_reader.h"

enum { MAX_BUF = 10, MAX_ATTR = 20, MAX_RANK = 6, MAX_TEXT = 2 * 96 };

/* One call frame and all it points to: XLA's structs and the storage behind them. */
typedef struct frame_t {
    XLA_FFI_CallFrame f;
    XLA_FFI_Api api;
    XLA_FFI_Buffer buf[MAX_BUF]; /* arguments, then results */
    int64_t dims[MAX_BUF][MAX_RANK];
    uint64_t bytes[MAX_BUF]; /* the size of each buffer's data */
    int n_args, n_rets;
    void *args[MAX_BUF], *rets[MAX_BUF];
    int arg_types[MAX_BUF], ret_types[MAX_BUF];
    char name_text[MAX_ATTR][16];
    XLA_FFI_ByteSpan names[MAX_ATTR], *name_ptrs[MAX_ATTR];
    XLA_FFI_Scalar scalars[MAX_ATTR];
    uint64_t values[MAX_ATTR];     /* each scalar's storage */
    char text[MAX_ATTR][MAX_TEXT]; /* string attributes' bytes (the options record in hex) */
    XLA_FFI_ByteSpan spans[MAX_ATTR];
    void *attr_ptrs[MAX_ATTR];
    int attr_types[MAX_ATTR];
    XLA_FFI_Metadata metadata;
    XLA_FFI_Metadata_Extension meta_ext;
} frame_t;

/* The frame of the current input (make_frame fills it; the stand-in checks pointers against its
 * buffers and attributes). */
extern frame_t fr;

/* Builds fr from the input; 0 when the input asks for something XLA would not hand over. */
int make_frame(reader *r);
/* The options record of the first attribute named opts, as the handler must read it over
 * `defaults`: -1 when there is none (*o = defaults), 0 when it is malformed (the handler must
 * refuse the call), 1 with *o the record. */
int opts_attr(const warpfft_opts *defaults, warpfft_opts *o);

/* ---- what both targets' oracles share ---- */

/* The target's name (each target defines it), in bug()'s messages. */
extern const char *fuzz_target;
/* An oracle's failure: the message to stderr, then abort(). */
void bug(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* With WF_FUZZ_TRACE set, the message to stderr (to see what a seed does). */
void trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* [p, p + bytes) must lie in one frame buffer of element type `dtype` (a result when `out`);
 * nothing to read or write (bytes 0) is fine for NULL only. */
void check_extent(const char *what, const void *p, uint64_t bytes, int dtype, int out);
/* a * b, saturating: a span that cannot fit. */
uint64_t mul(uint64_t a, uint64_t b);
/* XLA's side of the call about to be made on fr: its error maker (counting what it makes; a
 * message is required) and its stream (0x5150; XLA's own error when stream_fails). */
extern int stream_fails;
void xla_side(void);
/* The handler's result: XLA's error exactly when one was made (or the stream failed). */
void check_error(XLA_FFI_Error *e);

#endif
