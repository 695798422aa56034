/*
 * sort_stable_module.cpp — module sort_stable (kernels/sort_stable.cu) for the CPU emulation;
 * registers its three kernels.
 */
#include "cuda_emu.h"
#include "emu_registry.h"

namespace wf_emu_sort_stable {
#include "../../sort_stable.cu"
}

WF_EMU_REGISTER(r1, "wf_stable_hist", wf_emu_sort_stable, wf_stable_hist);
WF_EMU_REGISTER(r2, "wf_stable_rowscan", wf_emu_sort_stable, wf_stable_rowscan);
WF_EMU_REGISTER(r3, "wf_stable_scatter", wf_emu_sort_stable, wf_stable_scatter);
