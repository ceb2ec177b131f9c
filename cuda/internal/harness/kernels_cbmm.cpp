// The cBMM kernels, compiled for the CPU harness from the source nvcc compiles.
#include "cuda_host.h"
#include "registry.h"

#include "../../kernels/cbmm.cu"

static jh::Registrar cbmm{JH_KERNEL(cbmm_item_pass), JH_KERNEL(cbmm_model_pass), JH_KERNEL(cbmm_sum_loss)};
