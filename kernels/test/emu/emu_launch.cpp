/*
 * emu_launch.cpp — the entry point of an emulated module built as a shared object (module.cpp
 * + cuda_emu.cpp + this, by cupy_stub): launches any of its kernels, by address, on the fiber
 * scheduler, calling it through libffi with the argument kinds the caller names (the harness's
 * numpy scalars and arrays, kernels/test/emu/cupy_stub).
 */
#include "cuda_emu.h"

#include <ffi.h>

#include <vector>

/* types[i]: 0 i32, 1 i64, 2 float, 3 double, 4 (or any other) pointer; values[i] points at argument
 * i. Returns 0, or -1 when libffi refuses the signature. */
extern "C" __attribute__((visibility("default"))) int
wf_emu_launch(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
              unsigned bz, unsigned long long smem, int nargs, const int *types, void **values) {
    static ffi_type *const kinds[] = {&ffi_type_sint32, &ffi_type_sint64, &ffi_type_float,
                                      &ffi_type_double};
    std::vector<ffi_type *> at((size_t)nargs);
    for (int i = 0; i < nargs; ++i)
        at[i] = types[i] >= 0 && types[i] < 4 ? kinds[types[i]] : &ffi_type_pointer;
    ffi_cif cif;
    if (ffi_prep_cif(&cif, FFI_DEFAULT_ABI, (unsigned)nargs, &ffi_type_void, at.data()) != FFI_OK)
        return -1;
    dim3 g, b;
    g.x = gx, g.y = gy, g.z = gz;
    b.x = bx, b.y = by, b.z = bz;
    wf_emu::launch(g, b, (size_t)smem, [&] { ffi_call(&cif, FFI_FN(fn), nullptr, values); });
    return 0;
}
