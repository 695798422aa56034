/*
 * emu_pname.h — included inside namespace WF_EMU_NS before a prep-style module's source
 * (bin_module.cpp, offsets_module.cpp): the modules of one precision share their extern "C"
 * names, so that several can live in one test binary WF_PNAME adds the namespace to each
 * (wf_bin_count_f32 -> wf_bin_count_f32_bin_2d_f32); emu_registry.h's WF_EMU_REGISTER_OP
 * registers them by that name. No include guard: once per namespace.
 */
#include "../../common.cuh"
#undef WF_PNAME
#define WF_PNAME(op) WF_PASTE8(wf_, op, _, WF_PSUF, _, WF_EMU_NS, , )
