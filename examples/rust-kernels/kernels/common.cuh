// Shared by both kernels: the block size the host launches them with (src/lib.rs: BLOCK).
#pragma once

#define RK_BLOCK 256
