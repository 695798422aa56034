/*
 * xla_ffi.h — the few declarations of XLA's FFI C ABI that warpfft's XLA handlers (xla_ffi.c,
 * xla_toeplitz.c) read; the handlers' exports are public, in warpfft_xla.h (which declares the
 * two XLA types they take as incomplete: completed here).
 *
 * Written from the public specification of XLA's typed FFI (xla/ffi/api/c_api.h, API major
 * version 0, minor 1): a plain C ABI whose structs all start with their size, so the library
 * builds without jaxlib's headers. Only what the handler reads is declared in full; the API
 * table is declared up to XLA_FFI_Stream_Get (its first members never move within major 0).
 * Not installed.
 */
#ifndef WARPFFT_XLA_FFI_H
#define WARPFFT_XLA_FFI_H

#include <stddef.h>
#include <stdint.h>

#include "warpfft.h"
#include "warpfft_xla.h"

#define WF_XLA_API_MAJOR 0
#define WF_XLA_API_MINOR 1

typedef struct XLA_FFI_Extension_Base {
    size_t struct_size;
    int type; /* 1 = metadata */
    struct XLA_FFI_Extension_Base *next;
} XLA_FFI_Extension_Base;

enum { WF_XLA_EXTENSION_METADATA = 1 };

typedef struct XLA_FFI_Api_Version {
    size_t struct_size;
    XLA_FFI_Extension_Base *extension_start;
    int major_version;
    int minor_version;
} XLA_FFI_Api_Version;

typedef struct XLA_FFI_ExecutionContext XLA_FFI_ExecutionContext;

enum {
    WF_XLA_ERR_INVALID_ARGUMENT = 3,
    WF_XLA_ERR_NOT_FOUND = 5,
    WF_XLA_ERR_RESOURCE_EXHAUSTED = 8,
    WF_XLA_ERR_FAILED_PRECONDITION = 9,
    WF_XLA_ERR_UNIMPLEMENTED = 12,
    WF_XLA_ERR_INTERNAL = 13,
    WF_XLA_ERR_UNAVAILABLE = 14
};

typedef struct XLA_FFI_Error_Create_Args {
    size_t struct_size;
    XLA_FFI_Extension_Base *extension_start;
    const char *message;
    int errc;
} XLA_FFI_Error_Create_Args;

typedef struct XLA_FFI_Stream_Get_Args {
    size_t struct_size;
    XLA_FFI_Extension_Base *extension_start;
    XLA_FFI_ExecutionContext *ctx;
    void *stream; /* out: the CUstream on CUDA */
} XLA_FFI_Stream_Get_Args;

/* Element types (xla::PrimitiveType numbers). */
enum {
    WF_XLA_S32 = 4,
    WF_XLA_S64 = 5,
    WF_XLA_U32 = 8,
    WF_XLA_U64 = 9,
    WF_XLA_F32 = 11,
    WF_XLA_F64 = 12,
    WF_XLA_C64 = 15,
    WF_XLA_C128 = 18
};

typedef struct XLA_FFI_Buffer {
    size_t struct_size;
    XLA_FFI_Extension_Base *extension_start;
    int dtype;
    void *data;
    int64_t rank;
    int64_t *dims;
} XLA_FFI_Buffer;

enum {
    WF_XLA_ARG_BUFFER = 1,
    WF_XLA_RET_BUFFER = 1,
    WF_XLA_ATTR_SCALAR = 3,
    WF_XLA_ATTR_STRING = 4
};

typedef struct XLA_FFI_ByteSpan {
    const char *ptr;
    size_t len;
} XLA_FFI_ByteSpan;

typedef struct XLA_FFI_Scalar {
    int dtype;
    void *value;
} XLA_FFI_Scalar;

typedef struct XLA_FFI_Args {
    size_t struct_size;
    XLA_FFI_Extension_Base *extension_start;
    int64_t size;
    int *types;
    void **args;
} XLA_FFI_Args;

typedef struct XLA_FFI_Rets {
    size_t struct_size;
    XLA_FFI_Extension_Base *extension_start;
    int64_t size;
    int *types;
    void **rets;
} XLA_FFI_Rets;

typedef struct XLA_FFI_Attrs {
    size_t struct_size;
    XLA_FFI_Extension_Base *extension_start;
    int64_t size;
    int *types;
    XLA_FFI_ByteSpan **names;
    void **attrs;
} XLA_FFI_Attrs;

/* The API table's stable head; later members (type ids, state, memory, ...) are not used. */
typedef struct XLA_FFI_Api {
    size_t struct_size;
    XLA_FFI_Extension_Base *extension_start;
    XLA_FFI_Api_Version api_version;
    void *internal_api;
    XLA_FFI_Error *(*XLA_FFI_Error_Create)(XLA_FFI_Error_Create_Args *args);
    void *XLA_FFI_Error_GetMessage;
    void *XLA_FFI_Error_Destroy;
    void *XLA_FFI_Handler_Register;
    XLA_FFI_Error *(*XLA_FFI_Stream_Get)(XLA_FFI_Stream_Get_Args *args);
} XLA_FFI_Api;

enum { WF_XLA_STAGE_EXECUTE = 3 };

typedef struct XLA_FFI_CallFrame {
    size_t struct_size;
    XLA_FFI_Extension_Base *extension_start;
    const XLA_FFI_Api *api;
    XLA_FFI_ExecutionContext *ctx;
    int stage;
    XLA_FFI_Args args;
    XLA_FFI_Rets rets;
    XLA_FFI_Attrs attrs;
} XLA_FFI_CallFrame;

typedef struct XLA_FFI_Metadata {
    size_t struct_size;
    XLA_FFI_Api_Version api_version;
    uint32_t traits; /* bit 0: command-buffer (CUDA graph) compatible; never set here */
} XLA_FFI_Metadata;

typedef struct XLA_FFI_Metadata_Extension {
    XLA_FFI_Extension_Base extension_base;
    XLA_FFI_Metadata *metadata;
} XLA_FFI_Metadata_Extension;

#endif /* WARPFFT_XLA_FFI_H */
