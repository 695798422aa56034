/*
 * module_names.h — the names of the spreading/interpolation modules and of their entry points:
 * the one rule the build (build.rs), the C core (wf_si_names, c_core/src/plans/spreader.c) and
 * the tools and tests (c_core/tests: fault_kernels.py, test_nvrtc_modules.c, test_fault_calls.c;
 * kernels/check.sh, kernels/test) take them from.
 *   module  si_{dim}d_{prec}_w{width}_{dir}_{method}   e.g. si_2d_f32_w7_spread_sm
 *   entry   wf_{dir}_{method}_{dim}d_{prec}_w{width}   e.g. wf_spread_sm_2d_f32_w7
 * prec f32 or f64, dir spread or interp, method gm, sm or od (od spreads only). Each is a printf
 * format, the module's of (dim, prec, width, dir, method), the entry point's of (dir, method,
 * dim, prec, width), with %d and %s only, so that C's printf, Python's %, the shell's printf and
 * build.rs's few lines all read the same string. The entry points are named by
 * kernels/spreadinterp.cu (WF_SINAME, token pasting); test_nvrtc_modules.c checks that a module
 * holds the entry point this rule names. Plain macros: nothing here runs on either side.
 */
#ifndef WF_MODULE_NAMES_H
#define WF_MODULE_NAMES_H

#define WF_SI_MODULE_FMT "si_%dd_%s_w%d_%s_%s"
#define WF_SI_ENTRY_FMT  "wf_%s_%s_%dd_%s_w%d"

#endif /* WF_MODULE_NAMES_H */
