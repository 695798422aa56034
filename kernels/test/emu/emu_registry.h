/*
 * emu_registry.h — the emulated kernels by name: each kernel translation unit of
 * kernels/test/emu registers its extern "C" entry points here, and the test driver looks them
 * up (the modules are compiled once per (dim, precision, width) into their own namespaces, so
 * their helpers do not collide).
 */
#ifndef WF_EMU_REGISTRY_H
#define WF_EMU_REGISTRY_H

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

#endif
