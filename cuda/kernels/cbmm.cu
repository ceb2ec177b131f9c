// Batched cBMM kernels (float64). K response matrices are concatenated: items
// of all problems form one global item list (item-major cells, for the item
// block) and models one global model list (model-major cell references, for
// the θ block). A thread block handles one item or one model; partial sums
// are reduced in a fixed order, so results do not depend on scheduling.
//
// Compiled to PTX by `go generate ./cuda/` (see ../generate.go); every scalar
// parameter is 64 bits wide because gorgonia.org/cu copies 8 bytes per
// argument.

#define MAXR 8
#define ITEM_E(m) ((m) * ((m) + 1) / 2 + (m)) /* packed lower G (m x m) and h (m) */

// block_sum returns the sum of v over the block in thread 0 (other threads get
// garbage). blockDim.x is a multiple of 32, at most 1024. sh holds 32 doubles.
__device__ double block_sum(double v, double *sh) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads();
    if (lane == 0) sh[warp] = v;
    __syncthreads();
    int nw = blockDim.x >> 5;
    v = (threadIdx.x < nw) ? sh[threadIdx.x] : 0.0;
    if (warp == 0)
        for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}

// softplus(t) = log(1 + e^t) and sigmoid(t), stably.
__device__ void softplus_sigmoid(double t, double *sp, double *sg) {
    double e = exp(-fabs(t));
    double s = 1.0 / (1.0 + e); // sigmoid(|t|)
    *sp = fmax(t, 0.0) + log1p(e);
    *sg = t >= 0 ? s : e * s;
}

// cbmm_item_pass (pass A): one block per global item g. Adds the item's loss
// Σ softplus(−y x/σ) to itemLoss[g]; with update, stores the surrogate
//   ỹ = x + 4σ·y·sigmoid(−y x/σ)
// in yTilde and either solves the rank-1 item block in closed form
// (a_j ≥ 0, b_j) or, for rank > 1, writes the item's normal equations of
// u = (θ_i, 1) (packed lower triangle of G, then h) to itemG for the host's
// non-negative least-squares solve.
extern "C" __global__ void cbmm_item_pass(
    const unsigned int *cells, const long long *itemStart, const int *itemProb,
    const unsigned char *active, const double *theta, double *a, double *b,
    double *yTilde, double *itemLoss, double *itemG,
    long long numItems, long long rank, double sigma, long long update) {
    __shared__ double sh[32];
    long long g = blockIdx.x;
    if (g >= numItems || !active[itemProb[g]]) return;
    int r = (int)rank;
    long long lo = itemStart[g], hi = itemStart[g + 1];
    double inv = 1.0 / sigma, four = 4.0 * sigma;
    double loss = 0;
    if (r == 1) {
        double aj = a[g], bj = b[g];
        double st = 0, stt = 0, sy = 0, sty = 0;
        for (long long k = lo + threadIdx.x; k < hi; k += blockDim.x) {
            unsigned int cell = cells[k];
            double th = theta[cell >> 1];
            double x = th * aj + bj;
            double y = (double)(cell & 1) * 2.0 - 1.0;
            double sp, sg;
            softplus_sigmoid(-y * x * inv, &sp, &sg);
            loss += sp;
            if (update) {
                double v = x + four * y * sg;
                yTilde[k] = v;
                st += th;
                stt += th * th;
                sy += v;
                sty += th * v;
            }
        }
        loss = block_sum(loss, sh);
        if (threadIdx.x == 0) itemLoss[g] = loss;
        if (!update) return;
        st = block_sum(st, sh);
        stt = block_sum(stt, sh);
        sy = block_sum(sy, sh);
        sty = block_sum(sty, sh);
        if (threadIdx.x == 0 && hi > lo) {
            // min over a ≥ 0, b of Σ (θ a + b − ỹ)²; a keeps its value when
            // it is not identified (θ constant over the item's models).
            double n = (double)(hi - lo);
            double det = n * stt - st * st;
            double na, nb;
            if (det <= 1e-12 * n * stt || det <= 0) {
                na = aj;
                nb = (sy - aj * st) / n;
            } else {
                na = (n * sty - st * sy) / det;
                if (na <= 0) {
                    na = 0;
                    nb = sy / n;
                } else {
                    nb = (sy - na * st) / n;
                }
            }
            a[g] = na;
            b[g] = nb;
        }
        return;
    }
    // Rank r: x = θ_iᵀ a_j + b_j; G += u uᵀ (lower), h += u ỹ with u = (θ_i, 1).
    int m = r + 1;
    double acc[ITEM_E(MAXR + 1)];
    int E = ITEM_E(m);
    for (int e = 0; e < E; e++) acc[e] = 0;
    double aj[MAXR];
    for (int d = 0; d < r; d++) aj[d] = a[g * r + d];
    double bj = b[g];
    for (long long k = lo + threadIdx.x; k < hi; k += blockDim.x) {
        unsigned int cell = cells[k];
        const double *th = theta + (long long)(cell >> 1) * r;
        double u[MAXR + 1];
        double x = bj;
        for (int d = 0; d < r; d++) {
            u[d] = th[d];
            x += u[d] * aj[d];
        }
        u[r] = 1.0;
        double y = (double)(cell & 1) * 2.0 - 1.0;
        double sp, sg;
        softplus_sigmoid(-y * x * inv, &sp, &sg);
        loss += sp;
        if (update) {
            double v = x + four * y * sg;
            yTilde[k] = v;
            int e = 0;
            for (int d1 = 0; d1 < m; d1++)
                for (int d2 = 0; d2 <= d1; d2++) acc[e++] += u[d1] * u[d2];
            for (int d = 0; d < m; d++) acc[e++] += u[d] * v;
        }
    }
    loss = block_sum(loss, sh);
    if (threadIdx.x == 0) itemLoss[g] = loss;
    if (!update) return;
    for (int e = 0; e < E; e++) {
        double s = block_sum(acc[e], sh);
        if (threadIdx.x == 0) itemG[g * E + e] = s;
    }
}

// cbmm_model_pass (pass B): one block per global model i, over the model's
// cells (model-major references into the item-major arrays), with the new
// (a, b): Σ_j a_j a_jᵀ and Σ_j a_j (ỹ_ij − b_j). Rank 1 solves θ_i in place
// (θ_i keeps its value when no item loads on it); rank r writes the packed
// lower r x r matrix, then the r right-hand sides, to modelG for the host.
extern "C" __global__ void cbmm_model_pass(
    const long long *modelStart, const unsigned int *modelCell, const unsigned int *modelItem,
    const int *modelProb, const unsigned char *active, const double *a, const double *b,
    const double *yTilde, double *theta, double *modelG, long long numModels, long long rank) {
    __shared__ double sh[32];
    long long i = blockIdx.x;
    if (i >= numModels || !active[modelProb[i]]) return;
    int r = (int)rank;
    long long lo = modelStart[i], hi = modelStart[i + 1];
    if (r == 1) {
        double den = 0, num = 0;
        for (long long e = lo + threadIdx.x; e < hi; e += blockDim.x) {
            unsigned int j = modelItem[e];
            double aj = a[j];
            den += aj * aj;
            num += aj * (yTilde[modelCell[e]] - b[j]);
        }
        den = block_sum(den, sh);
        num = block_sum(num, sh);
        if (threadIdx.x == 0 && den > 0) theta[i] = num / den;
        return;
    }
    double acc[ITEM_E(MAXR)];
    int E = ITEM_E(r);
    for (int e = 0; e < E; e++) acc[e] = 0;
    for (long long e = lo + threadIdx.x; e < hi; e += blockDim.x) {
        unsigned int j = modelItem[e];
        const double *aj = a + (long long)j * r;
        double res = yTilde[modelCell[e]] - b[j];
        int q = 0;
        for (int d1 = 0; d1 < r; d1++)
            for (int d2 = 0; d2 <= d1; d2++) acc[q++] += aj[d1] * aj[d2];
        for (int d = 0; d < r; d++) acc[q++] += aj[d] * res;
    }
    for (int e = 0; e < E; e++) {
        double s = block_sum(acc[e], sh);
        if (threadIdx.x == 0) modelG[i * E + e] = s;
    }
}

// cbmm_sum_loss: one block per problem k, ℓ_k = Σ over its items of itemLoss.
extern "C" __global__ void cbmm_sum_loss(const double *itemLoss, const long long *itemBase,
                                         const unsigned char *active, double *loss, long long K) {
    __shared__ double sh[32];
    long long k = blockIdx.x;
    if (k >= K || !active[k]) return;
    double s = 0;
    for (long long g = itemBase[k] + threadIdx.x; g < itemBase[k + 1]; g += blockDim.x) s += itemLoss[g];
    s = block_sum(s, sh);
    if (threadIdx.x == 0) loss[k] = s;
}
