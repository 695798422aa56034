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

/* Registers the entry point ns::fn under the name key, as the static wf_emu_reg var. */
#define WF_EMU_REGISTER(var, key, ns, fn)                                                          \
    static wf_emu_reg var(key, reinterpret_cast<void *>(&ns::fn))

#define WF_EMU_STR_(x) #x
#define WF_EMU_STR(x)  WF_EMU_STR_(x)
/* In a module whose entry points emu_pname.h renamed (bin_module.cpp, offsets_module.cpp):
 * registers op's entry point, WF_EMU_NS::WF_PNAME(op), as "<WF_EMU_NS>/key". */
#define WF_EMU_REGISTER_OP(key, op)                                                                \
    WF_EMU_REGISTER(wf_emu_reg_##op, WF_EMU_STR(WF_EMU_NS) "/" key, WF_EMU_NS, WF_PNAME(op))

#endif
