/*
 * si_module.cpp — one spreadinterp module (kernels/spreadinterp.cu) for the CPU emulation,
 * built with the module's -DWF_DIM/-DWF_PREC/-DWF_W/-DWF_SI_PART/-DWF_SI_METHOD plus
 * -DWF_EMU_NS=<a namespace name unique to the module>; registers the module's entry point.
 */
#include "cuda_emu.h"
#include "emu_registry.h"

namespace WF_EMU_NS {
#include "../../spreadinterp.cu"
}

#if WF_SI_METHOD == WF_SI_OD
#define WF_EMU_ENTRY WF_SINAME(spread_od)
#elif WF_SI_PART == WF_SI_SPREAD && WF_SI_METHOD == WF_SI_GM
#define WF_EMU_ENTRY WF_SINAME(spread_gm)
#elif WF_SI_PART == WF_SI_SPREAD
#define WF_EMU_ENTRY WF_SINAME(spread_sm)
#elif WF_SI_METHOD == WF_SI_GM
#define WF_EMU_ENTRY WF_SINAME(interp_gm)
#else
#define WF_EMU_ENTRY WF_SINAME(interp_sm)
#endif
WF_EMU_REGISTER(wf_emu_this, WF_EMU_STR(WF_EMU_ENTRY), WF_EMU_NS, WF_EMU_ENTRY);
