/*
 * handle.h — the public plan handle (warpfft.h's opaque warpfft_plan), shared by the public plan
 * functions: plan.c (create, destroy, info) and points.c (setpts, setpts3, setpts_check,
 * execute). A handle holds one transform: types 1 and 2 (plans/nufft12.h) or type 3
 * (plans/type3.h). Not installed.
 */
#ifndef WARPFFT_API_HANDLE_H
#define WARPFFT_API_HANDLE_H

#include "params/base.h"
#include "plans/nufft12.h"
#include "plans/type3.h"
#include "runtime/driver.h"
#include "warpfft.h"

struct warpfft_plan_s {
    int type;        /* 1, 2 or 3 */
    wf_nufft12 *n12; /* types 1 and 2 */
    wf_nufft3 *n3;   /* type 3 */
};

/* The parameters the plan was created with (type 3: before its points). */
static inline const wf_params *wf_handle_params(const struct warpfft_plan_s *plan) {
    return plan->n3 ? &plan->n3->p : &plan->n12->p;
}

/* The device whose context the plan's work runs in. */
static inline const wf_device *wf_handle_device(const struct warpfft_plan_s *plan) {
    return plan->n3 ? plan->n3->ex.dev : plan->n12->ex.dev;
}

#endif /* WARPFFT_API_HANDLE_H */
