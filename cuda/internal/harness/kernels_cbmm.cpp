// The cBMM kernels, compiled for the CPU harness from the source nvcc compiles.
#include "cuda_host.h"
#include "registry.h"

#include "cbmm_cu.h" // a link to ../../kernels/cbmm.cu, so that Go's build cache sees edits

static jh::Registrar cbmm{JH_KERNEL(cbmm_item_pass), JH_KERNEL(cbmm_model_pass), JH_KERNEL(cbmm_sum_loss)};
