/* Automatic skin weights for rigs that carry none (see weights.c for the scheme).
 * SPDX-License-Identifier: MIT */
#ifndef SINEW_RUNTIME_WEIGHTS_H
#define SINEW_RUNTIME_WEIGHTS_H

#include <sinew/sinew_plugin.h>

/* Weights in compressed rows, allocated with the host allocator (sinew_host_free each). */
typedef struct sinew_auto_weights {
    uint32_t* offsets;  /* vertex_count + 1 */
    uint32_t* joints;   /* offsets[vertex_count] entries */
    float* weights;     /* same count; each row sums to 1, sorted by decreasing weight */
} sinew_auto_weights;

/* Computes smooth, bone-aware weights of a closed or open triangle mesh (possibly several
 * disconnected parts) for a skeleton given by parents and model-space bind matrices.
 * max_influences is 4 or 8. A joint "owns" the bones from it to its children; a skeleton
 * whose joints are all leaves (one joint) binds everything to it. */
sinew_result sinew_compute_auto_weights(const sinew_host_api* host, uint32_t vertex_count,
                                        const float* positions, uint32_t triangle_count,
                                        const uint32_t* indices, uint32_t joint_count,
                                        const int32_t* parents, const float* bind_matrices,
                                        uint32_t max_influences, sinew_auto_weights* out);

#endif
