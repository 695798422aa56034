/*
 * sort_module.cpp — module sort (kernels/sort.cu: the one-block bin scan) for the CPU
 * emulation; registers wf_bin_scan.
 */
#include "cuda_emu.h"
#include "emu_registry.h"

namespace wf_emu_sort {
#include "../../sort.cu"
}

static wf_emu_reg r1("wf_bin_scan", reinterpret_cast<void *>(&wf_emu_sort::wf_bin_scan));
