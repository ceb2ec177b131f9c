// The text encoder forward kernels, compiled for the CPU harness from the
// source nvcc compiles.
#include "cuda_host.h"
#include "registry.h"

#include "encoder_cu.h" // a link to ../../kernels/encoder.cu, so that Go's build cache sees edits

static jh::Registrar encoder{JH_KERNEL(embed),          JH_KERNEL(layer_norm), JH_KERNEL(bias_act),
                             JH_KERNEL(geglu),          JH_KERNEL(residual_add), JH_KERNEL(mpnet_rel_bias),
                             JH_KERNEL(rope),           JH_KERNEL(attention_dh32), JH_KERNEL(attention_dh64),
                             JH_KERNEL(attention_dh96), JH_KERNEL(attention_dh128), JH_KERNEL(pool),
                             JH_KERNEL(l2_normalize),   JH_KERNEL(to_bf16)};
