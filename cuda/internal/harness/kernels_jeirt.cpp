// The JE-IRT step kernels, compiled for the CPU harness from the source nvcc
// compiles.
#include "cuda_host.h"
#include "registry.h"

#include "jeirt_cu.h" // a link to ../../kernels/jeirt.cu, so that Go's build cache sees edits

static jh::Registrar jeirt{JH_KERNEL(sgemm),     JH_KERNEL(set_rows),      JH_KERNEL(relu_mask),
                           JH_KERNEL(add_rows),  JH_KERNEL(pair_link),     JH_KERNEL(residual_grad), JH_KERNEL(model_grad),
                           JH_KERNEL(col_sum),   JH_KERNEL(relu_back),     JH_KERNEL(adamw)};
