/*
 * cuda_emu.cpp — the fiber scheduler behind cuda_emu.h: one ucontext fiber per thread of a
 * block, run in order until each reaches a barrier; a barrier is released when every live
 * thread of its group (the block, or the 32 lanes of a warp) waits at it.
 */
#include "cuda_emu.h"

#include <ucontext.h>

#include <vector>

namespace wf_emu {
dim3 cur_thread, cur_block, launch_block, launch_grid;

namespace {
enum State { READY, WAIT_WARP, WAIT_BLOCK, DONE };
struct Fiber {
    ucontext_t ctx;
    State st = READY;
    unsigned wmask = 0;          /* WAIT_WARP: the lanes of the collective */
    unsigned long long xval = 0; /* this lane's contribution to a warp collective */
    std::vector<char> stack;
};
std::vector<Fiber> fibers;
ucontext_t sched_ctx;
int cur = -1;
const std::function<void()> *body_fn = nullptr;
std::vector<unsigned char> smem;
size_t smem_size = 0;
constexpr size_t kStack = 256 * 1024;

void fiber_main() {
    (*body_fn)();
    fibers[cur].st = DONE;
    swapcontext(&fibers[cur].ctx, &sched_ctx);
}

void wait(State s, unsigned mask = 0) {
    if (s == WAIT_WARP && !((mask >> (cur & 31)) & 1u))
        trap("warp collective: the calling lane is not in its mask");
    fibers[cur].st = s;
    fibers[cur].wmask = mask;
    swapcontext(&fibers[cur].ctx, &sched_ctx);
}

dim3 thread_of(int i) {
    dim3 t;
    t.x = (unsigned)i % launch_block.x;
    t.y = ((unsigned)i / launch_block.x) % launch_block.y;
    t.z = (unsigned)i / (launch_block.x * launch_block.y);
    return t;
}

void run_block() {
    const int n = (int)fibers.size();
    for (int i = 0; i < n; ++i) {
        Fiber &f = fibers[i];
        f.st = READY;
        getcontext(&f.ctx);
        f.ctx.uc_stack.ss_sp = f.stack.data();
        f.ctx.uc_stack.ss_size = f.stack.size();
        f.ctx.uc_link = nullptr;
        makecontext(&f.ctx, fiber_main, 0);
    }
    const int nwarps = (n + 31) / 32;
    for (;;) {
        bool ran = false;
        for (int i = 0; i < n; ++i) {
            if (fibers[i].st != READY)
                continue;
            cur = i;
            cur_thread = thread_of(i);
            swapcontext(&sched_ctx, &fibers[i].ctx);
            ran = true;
        }
        bool released = false, all_done = true, block_ready = true;
        for (int w = 0; w < nwarps; ++w) {
            /* a warp collective is complete when every live lane of its mask waits with it */
            for (int i = 32 * w; i < n && i < 32 * w + 32; ++i) {
                if (fibers[i].st != WAIT_WARP)
                    continue;
                const unsigned m = fibers[i].wmask;
                bool complete = true;
                for (int l = 0; l < 32 && 32 * w + l < n; ++l) {
                    const Fiber &f = fibers[32 * w + l];
                    if (((m >> l) & 1u) && f.st != DONE && !(f.st == WAIT_WARP && f.wmask == m))
                        complete = false;
                }
                if (!complete)
                    continue;
                for (int l = 0; l < 32 && 32 * w + l < n; ++l) {
                    Fiber &f = fibers[32 * w + l];
                    if (((m >> l) & 1u) && f.st == WAIT_WARP && f.wmask == m)
                        f.st = READY;
                }
                released = true;
            }
        }
        for (int i = 0; i < n; ++i) {
            if (fibers[i].st != DONE)
                all_done = false;
            if (fibers[i].st != DONE && fibers[i].st != WAIT_BLOCK)
                block_ready = false;
        }
        if (all_done)
            return;
        if (block_ready) {
            for (int i = 0; i < n; ++i)
                if (fibers[i].st == WAIT_BLOCK)
                    fibers[i].st = READY;
            released = true;
        }
        if (!ran && !released) {
            std::fprintf(stderr, "cuda_emu: deadlock in block (%u,%u): thread states", cur_block.x,
                         cur_block.y);
            for (int i = 0; i < n; ++i)
                std::fprintf(stderr, " %d", (int)fibers[i].st);
            std::fprintf(stderr, "\n");
            std::abort();
        }
    }
}
} // namespace

void sync_block() {
    wait(WAIT_BLOCK);
}
void sync_warp(unsigned mask) {
    wait(WAIT_WARP, mask);
}

unsigned long long exchange(unsigned long long mine, int src, unsigned mask) {
    fibers[cur].xval = mine;
    const int base = cur & ~31;
    wait(WAIT_WARP, mask);
    const unsigned long long v = fibers[base + src].xval; /* (a lane outside mask: undefined) */
    wait(WAIT_WARP, mask); /* every lane has read before xval is reused */
    return v;
}

unsigned ballot(bool p, unsigned mask) {
    fibers[cur].xval = p;
    const int base = cur & ~31;
    wait(WAIT_WARP, mask);
    unsigned m = 0;
    for (int l = 0; l < 32 && base + l < (int)fibers.size(); ++l)
        if (((mask >> l) & 1u) && fibers[base + l].st != DONE && fibers[base + l].xval)
            m |= 1u << l;
    wait(WAIT_WARP, mask);
    return m;
}

unsigned match_any(unsigned long long v, unsigned mask) {
    fibers[cur].xval = v;
    const int base = cur & ~31;
    wait(WAIT_WARP, mask);
    unsigned m = 0;
    for (int l = 0; l < 32 && base + l < (int)fibers.size(); ++l)
        if (((mask >> l) & 1u) && fibers[base + l].st != DONE && fibers[base + l].xval == v)
            m |= 1u << l;
    wait(WAIT_WARP, mask);
    return m;
}

unsigned char *dynamic_smem() {
    return smem.data();
}
unsigned dynamic_smem_size() {
    return (unsigned)smem_size;
}

void launch(dim3 grid, dim3 block, size_t dyn_smem, const std::function<void()> &body) {
    launch_grid = grid;
    launch_block = block;
    const int n = (int)(block.x * block.y * block.z);
    if (n < 1 || n > 1024)
        trap("launch: bad block size");
    fibers.resize(n);
    for (Fiber &f : fibers)
        if (f.stack.size() != kStack)
            f.stack.assign(kStack, 0);
    smem_size = dyn_smem;
    smem.assign(dyn_smem + 16, 0xcd); /* garbage: kernels must not rely on zeroed memory */
    body_fn = &body;
    for (unsigned bz = 0; bz < grid.z; ++bz)
        for (unsigned by = 0; by < grid.y; ++by)
            for (unsigned bx = 0; bx < grid.x; ++bx) {
                cur_block.x = bx;
                cur_block.y = by;
                cur_block.z = bz;
                run_block();
            }
    body_fn = nullptr;
}

void trap(const char *what) {
    std::fprintf(stderr, "cuda_emu: %s (block %u,%u thread %u)\n", what, cur_block.x, cur_block.y,
                 cur_thread.x);
    std::abort();
}
} // namespace wf_emu
