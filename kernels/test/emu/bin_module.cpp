/*
 * bin_module.cpp — module bin_{d}d_p (kernels/prep.cu, -DWF_PREP_PART=WF_PREP_BIN) for the CPU
 * emulation, built with -DWF_DIM/-DWF_PREC and -DWF_EMU_NS=bin_{d}d_{p}. The entry points are
 * renamed by emu_pname.h (wf_bin_count_f32 -> wf_bin_count_f32_bin_2d_f32) and registered as
 * "<WF_EMU_NS>/bin_count", "/bin_scatter", "/sort_unpack".
 */
#include "cuda_emu.h"
#include "emu_registry.h"

#ifndef WF_PREP_PART
#define WF_PREP_PART 1 /* WF_PREP_BIN */
#endif

namespace WF_EMU_NS {
#include "emu_pname.h"
#include "../../prep.cu"
} // namespace WF_EMU_NS

WF_EMU_REGISTER_OP("bin_count", bin_count);
WF_EMU_REGISTER_OP("bin_scatter", bin_scatter);
WF_EMU_REGISTER_OP("sort_unpack", sort_unpack);
