/*
 * sort_module.cpp — module sort (kernels/sort.cu: the one-block bin scan) for the CPU
 * emulation; registers wf_bin_scan.
 */
#include "cuda_emu.h"
#include "emu_registry.h"

namespace wf_emu_sort {
#include "../../sort.cu"
}

WF_EMU_REGISTER(r1, "wf_bin_scan", wf_emu_sort, wf_bin_scan);
