/* Fixed time steps from a variable frame time, for the physics backends (ps, fps and the host
 * half of fps-cuda). Each update adds its dt to an accumulator and runs floor(acc / h) steps
 * of the fixed step h, at most max_substeps; whole steps beyond that are dropped and counted,
 * and the remainder below h is carried to the next update. Header-only, so that the CUDA
 * plugin compiles the same code. SPDX-License-Identifier: MIT
 *
 * Times within SINEW_STEP_CLOCK_SNAP * h of a whole number of steps count as that number: a
 * float dt of 1/60 s is a little more than a double h of 1/60 s, and an engine running at
 * the rate 1/h then gets exactly one step of exactly the new pose per update, with no
 * remainder creeping up over the frames.
 *
 * The substeps of one update see poses in between the previous update's pose and the new one
 * (sinew_step_plan_weight): substep i ends (i + 1) h - carry after the previous update's time
 * (later by the dropped time: what max_substeps drops is the start of the interval), so a
 * character updated at 30 Hz steps through the intermediate poses that 60 Hz would give it. */
#ifndef SINEW_COMMON_STEP_CLOCK_H
#define SINEW_COMMON_STEP_CLOCK_H

#include <math.h>
#include <stdint.h>

#define SINEW_STEP_CLOCK_SNAP 1e-4
#define SINEW_STEP_CLOCK_MAX_SUBSTEPS 64u
#define SINEW_STEP_CLOCK_DEFAULT_SUBSTEPS 4u

typedef struct sinew_step_clock {
    double h;                  /* the fixed step, seconds */
    uint32_t max_substeps;     /* steps one update may run, 1..SINEW_STEP_CLOCK_MAX_SUBSTEPS */
    double carry;              /* time not yet simulated, [0, h) */
    uint64_t updates;          /* updates so far */
    uint64_t steps;            /* steps run so far */
    uint64_t dropped_steps;    /* steps dropped by max_substeps so far */
    uint64_t dropped_updates;  /* updates that dropped steps */
} sinew_step_clock;

/* What one update runs. */
typedef struct sinew_step_plan {
    uint32_t count;            /* steps to run now */
    uint64_t dropped;          /* steps dropped (beyond max_substeps) */
    double dt;                 /* the update's time */
    double first_end;          /* the end of the first step, seconds after the previous update */
    double h;
} sinew_step_plan;

static inline void sinew_step_clock_init(sinew_step_clock* c, double h, uint32_t max_substeps)
{
    c->h = h;
    c->max_substeps = max_substeps;
    c->carry = 0.0;
    c->updates = c->steps = c->dropped_steps = c->dropped_updates = 0u;
}

/* Adds dt (finite, >= 0) and plans the update's steps. `least` (0 or 1) is the fewest steps to
 * run: a restart after a pose jump runs at least one, and the carried time starts again from
 * zero after it. */
static inline sinew_step_plan sinew_step_clock_advance(sinew_step_clock* c, double dt,
                                                       uint32_t least)
{
    sinew_step_plan p;
    const double h = c->h, acc = c->carry + dt;
    double whole = floor(acc / h + SINEW_STEP_CLOCK_SNAP);
    if (whole < 0.0) whole = 0.0;
    p.count = whole > (double)c->max_substeps ? c->max_substeps : (uint32_t)whole;
    p.dropped = whole > (double)c->max_substeps
                    ? (whole < 1e18 ? (uint64_t)(whole - (double)c->max_substeps) : UINT64_MAX)
                    : 0u;
    p.dt = dt;
    p.h = h;
    /* what is dropped is the start of the interval: the steps run end at its end */
    p.first_end = h - c->carry + (double)p.dropped * h;
    c->carry = acc - whole * h;
    /* below the snap (or rounding garbage from a huge dt): nothing carried */
    if (!(c->carry >= SINEW_STEP_CLOCK_SNAP * h) || !(c->carry < h)) c->carry = 0.0;
    if (p.count < least) {
        p.count = least;
        c->carry = 0.0;
    }
    c->updates++;
    c->steps += p.count;
    if (p.dropped) {
        c->dropped_steps += p.dropped;
        c->dropped_updates++;
    }
    return p;
}

/* The weight of the update's new pose in step i's pose (0: the previous update's pose, 1:
 * the new one): where the step ends in the update's interval. Within SINEW_STEP_CLOCK_SNAP of
 * either end it is that end exactly. */
static inline float sinew_step_plan_weight(const sinew_step_plan* p, uint32_t i)
{
    if (!(p->dt > 0.0)) return 1.0f;
    double w = (p->first_end + (double)i * p->h) / p->dt;
    if (w > 1.0 - SINEW_STEP_CLOCK_SNAP) return 1.0f;
    if (w < SINEW_STEP_CLOCK_SNAP) return 0.0f;
    return (float)w;
}

/* How far the carried time is into the next step, [0, 1): the weight of the latest simulated
 * state against the one before it when the output is interpolated. */
static inline float sinew_step_clock_fraction(const sinew_step_clock* c)
{
    return (float)(c->carry / c->h);
}

/* out = a + w (b - a) for `count` floats (w 0 and 1 give a and b exactly): the linear blend of
 * two poses' matrices (16 floats per joint). For the small change of one update's pose the
 * blend stays close to a rigid transform (a turn of theta between the poses shrinks the
 * halfway matrix by 1 - cos(theta / 2), 3.4e-4 for 3 degrees), and it costs no
 * decomposition. */
static inline void sinew_step_blend(const float* a, const float* b, uint32_t count, float w,
                                    float* out)
{
    if (w == 0.0f || w == 1.0f) {
        const float* from = w == 0.0f ? a : b;
        for (uint32_t k = 0; k < count; ++k) out[k] = from[k];
        return;
    }
    for (uint32_t k = 0; k < count; ++k) out[k] = a[k] + w * (b[k] - a[k]);
}

#endif
