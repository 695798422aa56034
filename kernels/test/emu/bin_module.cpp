/*
 * bin_module.cpp — module bin_{d}d_p (kernels/prep.cu, -DWF_PREP_PART=WF_PREP_BIN) for the CPU
 * emulation, built with -DWF_DIM/-DWF_PREC and -DWF_EMU_NS=bin_{d}d_{p}. The modules of one
 * precision share their extern "C" names, so that several can live in one test binary the
 * entry points are renamed here (wf_bin_count_f32 -> wf_bin_count_f32_bin_2d_f32) and
 * registered as "<WF_EMU_NS>/bin_count", "/bin_scatter", "/sort_unpack".
 */
#include "cuda_emu.h"
#include "emu_registry.h"

#ifndef WF_PREP_PART
#define WF_PREP_PART 1 /* WF_PREP_BIN */
#endif

namespace WF_EMU_NS {
#include "../../common.cuh"
#undef WF_PNAME
#define WF_PNAME(op) WF_PASTE8(wf_, op, _, WF_PSUF, _, WF_EMU_NS, , )
#include "../../prep.cu"
} // namespace WF_EMU_NS

#define WF_EMU_STR_(x) #x
#define WF_EMU_STR(x)  WF_EMU_STR_(x)
static wf_emu_reg r1(WF_EMU_STR(WF_EMU_NS) "/bin_count",
                     reinterpret_cast<void *>(&WF_EMU_NS::WF_PNAME(bin_count)));
static wf_emu_reg r2(WF_EMU_STR(WF_EMU_NS) "/bin_scatter",
                     reinterpret_cast<void *>(&WF_EMU_NS::WF_PNAME(bin_scatter)));
static wf_emu_reg r3(WF_EMU_STR(WF_EMU_NS) "/sort_unpack",
                     reinterpret_cast<void *>(&WF_EMU_NS::WF_PNAME(sort_unpack)));
