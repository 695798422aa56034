/*
 * module.cpp — any kernel module for the CPU emulation: -DWF_EMU_SRC='"<path>/x.cu"' plus the
 * module's defines (kernels/check.sh's table), its code wrapped in the namespace -DWF_EMU_NS so
 * that modules can share a process; the extern "C" entry points keep their names.
 */
#include "cuda_emu.h"

namespace WF_EMU_NS {
#include WF_EMU_SRC
}
