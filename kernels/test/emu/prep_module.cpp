/*
 * prep_module.cpp — module deconvolve_{d}d_p or amplify_{d}d_p (kernels/prep.cu,
 * -DWF_PREP_PART=2 (WF_PREP_DECONVOLVE) or 3 (WF_PREP_AMPLIFY)) for the CPU emulation, built with
 * -DWF_DIM/-DWF_PREC and -DWF_EMU_NS=<job>_{d}d_{p}. The entry points are renamed by
 * emu_pname.h and registered as "<WF_EMU_NS>/deconvolve" and "/deconvolve_half" (or
 * "/amplify", "/amplify_half").
 */
#include "cuda_emu.h"
#include "emu_registry.h"

namespace WF_EMU_NS {
#include "emu_pname.h"
#include "../../prep.cu"
} // namespace WF_EMU_NS

#if WF_PREP_PART == WF_PREP_DECONVOLVE
WF_EMU_REGISTER_OP("deconvolve", deconvolve);
WF_EMU_REGISTER_OP("deconvolve_half", deconvolve_half);
#else
WF_EMU_REGISTER_OP("amplify", amplify);
WF_EMU_REGISTER_OP("amplify_half", amplify_half);
#endif
