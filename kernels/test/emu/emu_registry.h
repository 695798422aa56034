/*
 * emu_registry.h — the emulated kernels by name: each kernel translation unit of
 * kernels/test/emu registers its extern "C" entry points here, and the test driver looks them
 * up (the modules are compiled once per (dim, precision, width) into their own namespaces, so
 * their helpers do not collide).
 */
#ifndef WF_EMU_REGISTRY_H
#define WF_EMU_REGISTRY_H

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

inline std::map<std::string, void *> &wf_emu_kernels() {
    static std::map<std::string, void *> m;
    return m;
}
struct wf_emu_reg {
    wf_emu_reg(const char *name, void *fn) {
        wf_emu_kernels()[name] = fn;
    }
};

/* The entry point `name`, for a test driver: exits (2) naming it when no module linked into the
 * test registered it. */
inline void *wf_emu_kernel(const std::string &name) {
    auto it = wf_emu_kernels().find(name);
    if (it == wf_emu_kernels().end()) {
        std::printf("kernel %s not built into this test\n", name.c_str());
        std::exit(2);
    }
    return it->second;
}

#endif
