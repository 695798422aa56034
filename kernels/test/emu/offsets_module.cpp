/*
 * offsets_module.cpp — module offsets_{d}d_p (kernels/offsets.cu) for the CPU emulation, built
 * with -DWF_DIM/-DWF_PREC and -DWF_EMU_NS=offsets_{d}d_{p}; its entry points are renamed as in
 * bin_module.cpp (wf_offsets_gather_f32 -> wf_offsets_gather_f32_offsets_2d_f32) and registered
 * as "<WF_EMU_NS>/gather" and "<WF_EMU_NS>/choose".
 */
#include "cuda_emu.h"
#include "emu_registry.h"

namespace WF_EMU_NS {
#include "../../common.cuh"
#undef WF_PNAME
#define WF_PNAME(op) WF_PASTE8(wf_, op, _, WF_PSUF, _, WF_EMU_NS, , )
#include "../../offsets.cu"
} // namespace WF_EMU_NS

#define WF_EMU_STR_(x) #x
#define WF_EMU_STR(x)  WF_EMU_STR_(x)
static wf_emu_reg r1(WF_EMU_STR(WF_EMU_NS) "/gather",
                     reinterpret_cast<void *>(&WF_EMU_NS::WF_PNAME(offsets_gather)));
static wf_emu_reg r2(WF_EMU_STR(WF_EMU_NS) "/choose",
                     reinterpret_cast<void *>(&WF_EMU_NS::WF_PNAME(offsets_choose)));
