/*
 * sort_stable_module.cpp — module sort_stable (kernels/sort_stable.cu) for the CPU emulation;
 * registers its three kernels.
 */
#include "cuda_emu.h"
#include "emu_registry.h"

namespace wf_emu_sort_stable {
#include "../../sort_stable.cu"
}

static wf_emu_reg r1("wf_stable_hist",
                     reinterpret_cast<void *>(&wf_emu_sort_stable::wf_stable_hist));
static wf_emu_reg r2("wf_stable_rowscan",
                     reinterpret_cast<void *>(&wf_emu_sort_stable::wf_stable_rowscan));
static wf_emu_reg r3("wf_stable_scatter",
                     reinterpret_cast<void *>(&wf_emu_sort_stable::wf_stable_scatter));
