// The JE-IRT step kernels, compiled for the CPU harness from the source nvcc
// compiles.
#include "cuda_host.h"
#include "registry.h"

#include "jeirt_cu.h" // a link to ../../kernels/jeirt.cu, so that Go's build cache sees edits

static jh::Registrar jeirt{JH_KERNEL(sgemm),      JH_KERNEL(jeirt_fwd1), JH_KERNEL(jeirt_fwd2), JH_KERNEL(pair_link),
                           JH_KERNEL(jeirt_bwd1), JH_KERNEL(jeirt_bwd2), JH_KERNEL(jeirt_eval_cells), JH_KERNEL(jeirt_eval_sum),
                           JH_KERNEL(adamw)};
