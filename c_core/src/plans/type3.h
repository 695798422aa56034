/*
 * type3.h — type-3 plans (plans/type3.c; params/type3_params.h has the math and the choice):
 * the create / execute / destroy / info hooks plan.c, setpts.c and execute.c call for type 3.
 */
#ifndef WARPFFT_PLANS_TYPE3_H
#define WARPFFT_PLANS_TYPE3_H

#include <stddef.h>
#include <stdint.h>

#include "warpfft.h"

struct warpfft_plan_s;
warpfft_status wf_t3_plan_create(int dim, int iflag, int64_t ntransf, double tol, int precision,
                                 const warpfft_opts *opts, struct warpfft_plan_s **out);
/* Frees the type-3 part (sub-plans and buffers); the device's context is current. */
void wf_t3_release(struct warpfft_plan_s *plan);
warpfft_status wf_t3_execute(struct warpfft_plan_s *plan, int precision, void *c, void *fk);
/* Adds the type-3 fields to info (after wf_params_to_info of the plan's own params). */
void wf_t3_info(const struct warpfft_plan_s *plan, warpfft_plan_info *info);
/* Device bytes the sub-plans hold (the plan's own buffers are in plan->workspace). */
size_t wf_t3_sub_workspace(const struct warpfft_plan_s *plan);

#endif /* WARPFFT_PLANS_TYPE3_H */
