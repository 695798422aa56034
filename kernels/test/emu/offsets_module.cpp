/*
 * offsets_module.cpp — module offsets_{d}d_p (kernels/offsets.cu) for the CPU emulation, built
 * with -DWF_DIM/-DWF_PREC and -DWF_EMU_NS=offsets_{d}d_{p}; its entry points are renamed by
 * emu_pname.h as in bin_module.cpp (wf_offsets_gather_f32 ->
 * wf_offsets_gather_f32_offsets_2d_f32) and registered as "<WF_EMU_NS>/gather" and
 * "<WF_EMU_NS>/choose".
 */
#include "cuda_emu.h"
#include "emu_registry.h"

namespace WF_EMU_NS {
#include "emu_pname.h"
#include "../../offsets.cu"
} // namespace WF_EMU_NS

WF_EMU_REGISTER_OP("gather", offsets_gather);
WF_EMU_REGISTER_OP("choose", offsets_choose);
