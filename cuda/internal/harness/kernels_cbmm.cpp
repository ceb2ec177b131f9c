// The cBMM kernels, compiled for the CPU harness from the source nvcc compiles.
#include "cuda_host.h"
#include "registry.h"

#include "cbmm_cu.h" // a link to ../../kernels/cbmm.cu, so that Go's build cache sees edits

static jh::Registrar cbmm{
    JH_KERNEL(cbmm_item_pass_r1),
    JH_KERNEL(cbmm_item_pass_r2),
    JH_KERNEL(cbmm_item_pass_r3),
    JH_KERNEL(cbmm_item_pass_r4),
    JH_KERNEL(cbmm_item_pass_r5),
    JH_KERNEL(cbmm_item_pass_r6),
    JH_KERNEL(cbmm_item_pass_r7),
    JH_KERNEL(cbmm_item_pass_r8),
    JH_KERNEL(cbmm_model_pass_r1),
    JH_KERNEL(cbmm_model_pass_r2),
    JH_KERNEL(cbmm_model_pass_r3),
    JH_KERNEL(cbmm_model_pass_r4),
    JH_KERNEL(cbmm_model_pass_r5),
    JH_KERNEL(cbmm_model_pass_r6),
    JH_KERNEL(cbmm_model_pass_r7),
    JH_KERNEL(cbmm_model_pass_r8),
    JH_KERNEL(cbmm_sum_loss),
    JH_KERNEL(cbmm_sum_decide),
    JH_KERNEL(cbmm_extrapolate)};
