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

// The rank-r passes are templates, one kernel per rank (cbmm_item_pass_r1 to
// _r8, cbmm_model_pass_r1 to _r8), so that every accumulator index is a
// compile-time constant and the accumulators stay in registers (no local
// memory: scripts/build-cuda.sh --vet checks ptxas's report). The small
// solves run on the device, in the block's shared memory, with the arithmetic
// of train's CPU fitter (train/backend/solve.go): only the losses cross to
// the host each iteration. Build with -fmad=false (see ../doc.go): the solves'
// branches (the active set, a pivot's sign) must see the CPU's values.

#define ITEM_E(m) ((m) * ((m) + 1) / 2 + (m)) /* packed lower G (m x m) and h (m) */

// block_sums reduces E per-thread values acc[0..E-1] over the block in a
// fixed order (a shuffle tree in each warp, then the warps in order) and
// leaves the E sums in out (shared), for thread 0. sh holds 32·E doubles.
template <int E> __device__ __forceinline__ void block_sums(const double *acc, double *sh, double *out) {
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
#pragma unroll
    for (int e = 0; e < E; e++) {
        double v = acc[e];
        for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
        if (lane == 0) sh[warp * E + e] = v;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int e = 0; e < E; e++) {
            double s = 0;
            for (int w = 0; w < nw; w++) s += sh[w * E + e];
            out[e] = s;
        }
    }
}

// unpack_lower fills the symmetric n x n G from the packed lower triangle p
// and returns the rest of p (layout.go's unpackLower).
__device__ __forceinline__ const double *unpack_lower(double *G, const double *p, int n) {
    int e = 0;
    for (int d1 = 0; d1 < n; d1++)
        for (int d2 = 0; d2 <= d1; d2++) {
            G[d1 * n + d2] = p[e];
            G[d2 * n + d1] = p[e];
            e++;
        }
    return p + e;
}

// add_proximal, cholesky, chol_solve, solve_p and nnls_solve are
// backend.addProximal, Cholesky, cholSolve, SmallNNLS.solveP and
// SmallNNLS.SolveInPlace, operation for operation.
__device__ __forceinline__ double add_proximal(double *G, double *h, const double *x, int m) {
    double tr = 0;
    for (int d = 0; d < m; d++) tr += G[d * m + d];
    if (tr == 0) return 0;
    double eps = 1e-12 * tr;
    for (int d = 0; d < m; d++) {
        G[d * m + d] += eps;
        h[d] += eps * x[d];
    }
    return tr;
}

__device__ __forceinline__ bool chol_solve(double *G, double *h, int n) {
    for (int j = 0; j < n; j++) {
        double d = G[j * n + j];
        for (int k = 0; k < j; k++) d -= G[j * n + k] * G[j * n + k];
        if (!(d > 0)) return false;
        d = sqrt(d);
        G[j * n + j] = d;
        for (int i = j + 1; i < n; i++) {
            double s = G[i * n + j];
            for (int k = 0; k < j; k++) s -= G[i * n + k] * G[j * n + k];
            G[i * n + j] = s / d;
        }
    }
    for (int i = 0; i < n; i++) {
        double s = h[i];
        for (int k = 0; k < i; k++) s -= G[i * n + k] * h[k];
        h[i] = s / G[i * n + i];
    }
    for (int i = n - 1; i >= 0; i--) {
        double s = h[i];
        for (int k = i + 1; k < n; k++) s -= G[k * n + i] * h[k];
        h[i] = s / G[i * n + i];
    }
    return true;
}

// nnlsWork is the shared memory of one solve of up to m unknowns.
struct nnlsWork {
    double *G, *h, *x, *xOld, *z, *s, *rhs;
    int *inP, *idx;
};

__device__ __forceinline__ bool solve_p(const nnlsWork &w, int m) {
    int p = 0;
    for (int k = 0; k < m; k++) {
        if (w.inP[k]) w.idx[p++] = k;
        w.z[k] = 0;
    }
    for (int a = 0; a < p; a++) {
        int ka = w.idx[a];
        w.rhs[a] = w.h[ka];
        for (int b = 0; b < p; b++) w.s[a * p + b] = w.G[ka * m + w.idx[b]];
    }
    if (!chol_solve(w.s, w.rhs, p)) return false;
    for (int a = 0; a < p; a++) w.z[w.idx[a]] = w.rhs[a];
    return true;
}

__device__ __forceinline__ void nnls_solve(const nnlsWork &w, int m, int nc) {
    double *G = w.G, *h = w.h, *x = w.x, *z = w.z;
    double tr = add_proximal(G, h, x, m);
    if (tr == 0) return;
    for (int d = 0; d < m; d++) w.xOld[d] = x[d];
    for (int d = 0; d < nc && d < m; d++)
        if (x[d] < 0) x[d] = 0;
    double hmax = 0;
    for (int d = 0; d < m; d++) hmax = fmax(hmax, fabs(h[d]));
    double tol = 1e-13 * (hmax + tr);
    for (int k = 0; k < m; k++) w.inP[k] = k >= nc;
    if (!solve_p(w, m)) {
        for (int d = 0; d < m; d++) x[d] = w.xOld[d];
        return;
    }
    for (int d = 0; d < m; d++) x[d] = z[d];
    for (int outer = 0; outer < 4 * m + 4; outer++) {
        int best = -1;
        double bestW = tol;
        for (int k = 0; k < nc; k++) {
            if (w.inP[k]) continue;
            double g = h[k];
            for (int l = 0; l < m; l++) g -= G[k * m + l] * x[l];
            if (g > bestW) {
                best = k;
                bestW = g;
            }
        }
        if (best < 0) return;
        w.inP[best] = 1;
        for (int inner = 0; inner < 4 * m + 4; inner++) {
            if (!solve_p(w, m)) {
                for (int d = 0; d < m; d++) x[d] = w.xOld[d];
                return;
            }
            double alpha = 1.0;
            bool feasible = true;
            for (int k = 0; k < nc; k++) {
                if (w.inP[k] && z[k] <= 0) {
                    feasible = false;
                    double d = x[k] - z[k];
                    if (d > 0) alpha = fmin(alpha, x[k] / d);
                    else alpha = 0;
                }
            }
            if (feasible) {
                for (int d = 0; d < m; d++) x[d] = z[d];
                break;
            }
            for (int k = 0; k < m; k++) x[k] += alpha * (z[k] - x[k]);
            for (int k = 0; k < nc; k++) {
                if (w.inP[k] && x[k] <= 0) {
                    w.inP[k] = 0;
                    x[k] = 0;
                } else if (w.inP[k] && z[k] <= 0 && alpha == 0) {
                    w.inP[k] = 0;
                    x[k] = 0;
                }
            }
        }
    }
}

// Shared memory of the passes, in doubles: the block reductions (32 warps of
// E sums, the item pass's loss included, or block_sum's 32 at rank 1), the
// sums, and a solve's work space (G, its passive part, five vectors and two
// int vectors).
#define ITEM_SMEM(r) ((r) == 1 ? 32 : 33 * (ITEM_E((r) + 1) + 1) + 2 * ((r) + 1) * ((r) + 1) + 6 * ((r) + 1))
#define MODEL_SMEM(r) ((r) == 1 ? 32 : 32 * ITEM_E(r) + ITEM_E(r) + (r) * (r) + (r))

// item_pass (pass A): one block per global item g. Adds the item's loss
// Σ softplus(−y x/σ) to itemLoss[g]; with update, stores the surrogate
//   ỹ = x + 4σ·y·sigmoid(−y x/σ)
// in yTilde and solves the item block: in closed form at rank 1 (a_j ≥ 0,
// b_j), else by non-negative least squares on the normal equations of
// u = (θ_i, 1), warm-started at (a_j, b_j).
template <int R>
__device__ __forceinline__ void item_pass(const unsigned int *cells, const long long *itemStart,
                                          const int *itemProb, const unsigned char *active,
                                          const double *theta, double *a, double *b, double *yTilde,
                                          double *itemLoss, long long numItems, double sigma,
                                          long long update, double *sm) {
    long long g = blockIdx.x;
    if (g >= numItems || !active[itemProb[g]]) return;
    long long lo = itemStart[g], hi = itemStart[g + 1];
    double inv = 1.0 / sigma, four = 4.0 * sigma;
    double loss = 0;
    if (R == 1) {
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
        loss = block_sum(loss, sm);
        if (threadIdx.x == 0) itemLoss[g] = loss;
        if (!update) return;
        st = block_sum(st, sm);
        stt = block_sum(stt, sm);
        sy = block_sum(sy, sm);
        sty = block_sum(sty, sm);
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
    // The loss is accumulated as entry E of the same reduction.
    constexpr int M = R + 1, E = ITEM_E(M);
    double acc[E + 1];
#pragma unroll
    for (int e = 0; e <= E; e++) acc[e] = 0;
    double aj[R];
#pragma unroll
    for (int d = 0; d < R; d++) aj[d] = a[g * R + d];
    double bj = b[g];
    for (long long k = lo + threadIdx.x; k < hi; k += blockDim.x) {
        unsigned int cell = cells[k];
        const double *th = theta + (long long)(cell >> 1) * R;
        double u[M];
        double x = bj;
#pragma unroll
        for (int d = 0; d < R; d++) {
            u[d] = th[d];
            x += u[d] * aj[d];
        }
        u[R] = 1.0;
        double y = (double)(cell & 1) * 2.0 - 1.0;
        double sp, sg;
        softplus_sigmoid(-y * x * inv, &sp, &sg);
        acc[E] += sp;
        if (update) {
            double v = x + four * y * sg;
            yTilde[k] = v;
            int e = 0;
#pragma unroll
            for (int d1 = 0; d1 < M; d1++)
#pragma unroll
                for (int d2 = 0; d2 <= d1; d2++) acc[e++] += u[d1] * u[d2];
#pragma unroll
            for (int d = 0; d < M; d++) acc[e++] += u[d] * v;
        }
    }
    double *sums = sm + 32 * (E + 1);
    block_sums<E + 1>(acc, sm, sums);
    if (threadIdx.x != 0) return;
    itemLoss[g] = sums[E];
    if (!update || hi <= lo) return;
    nnlsWork w;
    w.G = sums + E + 1;
    w.s = w.G + M * M;
    w.h = w.s + M * M;
    w.x = w.h + M;
    w.xOld = w.x + M;
    w.z = w.xOld + M;
    w.rhs = w.z + M;
    w.inP = (int *)(w.rhs + M);
    w.idx = w.inP + M;
    const double *hp = unpack_lower(w.G, sums, M);
    for (int d = 0; d < M; d++) w.h[d] = hp[d];
    for (int d = 0; d < R; d++) w.x[d] = a[g * R + d];
    w.x[R] = b[g];
    nnls_solve(w, M, R);
    for (int d = 0; d < R; d++) a[g * R + d] = w.x[d];
    b[g] = w.x[R];
}

// model_pass (pass B): one block per global model i of a problem whose flag
// has bit 0 set (the active flags, or the outcomes of cbmm_sum_decide: a
// rejected step is not finished), over the model's cells
// (model-major references into the item-major arrays), with the new (a, b):
// Σ_j a_j a_jᵀ and Σ_j a_j (ỹ_ij − b_j), then θ_i solved by Cholesky with
// train's proximal term (θ_i keeps its value when no item loads on it).
template <int R>
__device__ __forceinline__ void model_pass(const long long *modelStart, const unsigned int *modelCell,
                                           const unsigned int *modelItem, const int *modelProb,
                                           const unsigned char *active, const double *a,
                                           const double *b, const double *yTilde, double *theta,
                                           long long numModels, double *sm) {
    long long i = blockIdx.x;
    if (i >= numModels || !(active[modelProb[i]] & 1)) return;
    long long lo = modelStart[i], hi = modelStart[i + 1];
    if (R == 1) {
        double den = 0, num = 0;
        for (long long e = lo + threadIdx.x; e < hi; e += blockDim.x) {
            unsigned int j = modelItem[e];
            double aj = a[j];
            den += aj * aj;
            num += aj * (yTilde[modelCell[e]] - b[j]);
        }
        den = block_sum(den, sm);
        num = block_sum(num, sm);
        if (threadIdx.x == 0 && den > 0) theta[i] = num / den;
        return;
    }
    constexpr int E = ITEM_E(R);
    double acc[E];
#pragma unroll
    for (int e = 0; e < E; e++) acc[e] = 0;
    for (long long e = lo + threadIdx.x; e < hi; e += blockDim.x) {
        unsigned int j = modelItem[e];
        const double *aj = a + (long long)j * R;
        double av[R];
#pragma unroll
        for (int d = 0; d < R; d++) av[d] = aj[d];
        double res = yTilde[modelCell[e]] - b[j];
        int q = 0;
#pragma unroll
        for (int d1 = 0; d1 < R; d1++)
#pragma unroll
            for (int d2 = 0; d2 <= d1; d2++) acc[q++] += av[d1] * av[d2];
#pragma unroll
        for (int d = 0; d < R; d++) acc[q++] += av[d] * res;
    }
    double *sums = sm + 32 * E;
    block_sums<E>(acc, sm, sums);
    if (threadIdx.x != 0) return;
    double *G = sums + E, *h = G + R * R;
    const double *hp = unpack_lower(G, sums, R);
    for (int d = 0; d < R; d++) h[d] = hp[d];
    double *th = theta + i * R;
    if (add_proximal(G, h, th, R) == 0) return;
    if (chol_solve(G, h, R))
        for (int d = 0; d < R; d++) th[d] = h[d];
}

#define ITEM_PARAMS                                                                                      \
    const unsigned int *cells, const long long *itemStart, const int *itemProb,                         \
        const unsigned char *active, const double *theta, double *a, double *b, double *yTilde,         \
        double *itemLoss, long long numItems, double sigma, long long update
#define ITEM_ARGS cells, itemStart, itemProb, active, theta, a, b, yTilde, itemLoss, numItems, sigma, update
#define MODEL_PARAMS                                                                                     \
    const long long *modelStart, const unsigned int *modelCell, const unsigned int *modelItem,          \
        const int *modelProb, const unsigned char *active, const double *a, const double *b,            \
        const double *yTilde, double *theta, long long numModels
#define MODEL_ARGS modelStart, modelCell, modelItem, modelProb, active, a, b, yTilde, theta, numModels

// The kernels, one per rank (the shared arrays are declared here so that the
// PTX names them after the kernel).
extern "C" __global__ void cbmm_item_pass_r1(ITEM_PARAMS) { __shared__ double sm[ITEM_SMEM(1)]; item_pass<1>(ITEM_ARGS, sm); }
extern "C" __global__ void cbmm_item_pass_r2(ITEM_PARAMS) { __shared__ double sm[ITEM_SMEM(2)]; item_pass<2>(ITEM_ARGS, sm); }
extern "C" __global__ void cbmm_item_pass_r3(ITEM_PARAMS) { __shared__ double sm[ITEM_SMEM(3)]; item_pass<3>(ITEM_ARGS, sm); }
extern "C" __global__ void cbmm_item_pass_r4(ITEM_PARAMS) { __shared__ double sm[ITEM_SMEM(4)]; item_pass<4>(ITEM_ARGS, sm); }
extern "C" __global__ void cbmm_item_pass_r5(ITEM_PARAMS) { __shared__ double sm[ITEM_SMEM(5)]; item_pass<5>(ITEM_ARGS, sm); }
extern "C" __global__ void cbmm_item_pass_r6(ITEM_PARAMS) { __shared__ double sm[ITEM_SMEM(6)]; item_pass<6>(ITEM_ARGS, sm); }
extern "C" __global__ void cbmm_item_pass_r7(ITEM_PARAMS) { __shared__ double sm[ITEM_SMEM(7)]; item_pass<7>(ITEM_ARGS, sm); }
extern "C" __global__ void cbmm_item_pass_r8(ITEM_PARAMS) { __shared__ double sm[ITEM_SMEM(8)]; item_pass<8>(ITEM_ARGS, sm); }
extern "C" __global__ void cbmm_model_pass_r1(MODEL_PARAMS) { __shared__ double sm[MODEL_SMEM(1)]; model_pass<1>(MODEL_ARGS, sm); }
extern "C" __global__ void cbmm_model_pass_r2(MODEL_PARAMS) { __shared__ double sm[MODEL_SMEM(2)]; model_pass<2>(MODEL_ARGS, sm); }
extern "C" __global__ void cbmm_model_pass_r3(MODEL_PARAMS) { __shared__ double sm[MODEL_SMEM(3)]; model_pass<3>(MODEL_ARGS, sm); }
extern "C" __global__ void cbmm_model_pass_r4(MODEL_PARAMS) { __shared__ double sm[MODEL_SMEM(4)]; model_pass<4>(MODEL_ARGS, sm); }
extern "C" __global__ void cbmm_model_pass_r5(MODEL_PARAMS) { __shared__ double sm[MODEL_SMEM(5)]; model_pass<5>(MODEL_ARGS, sm); }
extern "C" __global__ void cbmm_model_pass_r6(MODEL_PARAMS) { __shared__ double sm[MODEL_SMEM(6)]; model_pass<6>(MODEL_ARGS, sm); }
extern "C" __global__ void cbmm_model_pass_r7(MODEL_PARAMS) { __shared__ double sm[MODEL_SMEM(7)]; model_pass<7>(MODEL_ARGS, sm); }
extern "C" __global__ void cbmm_model_pass_r8(MODEL_PARAMS) { __shared__ double sm[MODEL_SMEM(8)]; model_pass<8>(MODEL_ARGS, sm); }

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

// The fit's control on the device (train/backend/cbmm_control.go, operation
// for operation): per problem, ctl holds CTL doubles, the state of
// backend.CBMMControl: the last kept loss, β, the β of the last
// extrapolation, the kept steps and whether the next step starts from an
// extrapolated point. The outcomes are backend.CBMMOutcome's values.
#define CTL 5
#define OUT_IDLE 0
#define OUT_ACCEPTED 1
#define OUT_REJECTED 2
#define OUT_EXTRAPOLATED 3
#define OUT_CONVERGED 5

// cbmm_sum_decide: one block per problem k, ℓ_k = Σ over its items of
// itemLoss, then CBMMControl.Next: report holds ℓ (K doubles) and then the
// outcomes (K bytes), all the host reads per iteration. A problem that
// converges is made inactive.
extern "C" __global__ void cbmm_sum_decide(const double *itemLoss, const long long *itemBase,
                                           unsigned char *active, double *ctl, double *report,
                                           long long K, double tol, long long accelerate) {
    __shared__ double sh[32];
    long long k = blockIdx.x;
    if (k >= K) return;
    unsigned char *outcome = (unsigned char *)(report + K);
    if (!active[k]) {
        if (threadIdx.x == 0) outcome[k] = OUT_IDLE;
        return;
    }
    double s = 0;
    for (long long g = itemBase[k] + threadIdx.x; g < itemBase[k + 1]; g += blockDim.x) s += itemLoss[g];
    s = block_sum(s, sh);
    if (threadIdx.x != 0) return;
    report[k] = s;
    double *c = ctl + k * CTL;
    double last = c[0], beta = c[1];
    unsigned char out;
    if (accelerate && c[4] != 0 && s > last) {
        c[4] = 0;
        c[1] = fmax(beta / 2, 0.25);
        out = OUT_REJECTED;
    } else {
        c[0] = s;
        double iters = c[3] + 1;
        c[3] = iters;
        if (iters >= 2 && fabs(last - s) <= tol * fabs(last)) {
            out = OUT_CONVERGED;
            active[k] = 0;
        } else if (!accelerate) {
            out = OUT_ACCEPTED;
        } else if (iters < 2) {
            c[4] = 0;
            out = OUT_ACCEPTED;
        } else {
            c[2] = beta;
            c[4] = 1;
            c[1] = fmin(beta * 1.25, 2.0);
            out = OUT_EXTRAPOLATED;
        }
    }
    outcome[k] = out;
}

// extrapolate_one applies a step's outcome to one parameter: cur is the
// device's value (the step's MM point M(θ) after the passes), m the kept MM
// point, prev the point the step started from (backend.Extrapolate).
__device__ __forceinline__ void extrapolate_one(unsigned char out, double beta, bool clip, double *cur, double *m,
                                                double *prev) {
    if (out == OUT_REJECTED) {
        double v = *m;
        *cur = v;
        *prev = v;
    } else if (out == OUT_ACCEPTED) {
        double v = *cur;
        *m = v;
        *prev = v;
    } else if (out == OUT_EXTRAPOLATED) {
        double v = *cur;
        double x = v + beta * (v - *prev);
        if (clip && x < 0) x = 0;
        *m = v;
        *cur = x;
        *prev = x;
    }
}

// cbmm_extrapolate: one thread per parameter (θ, then A, then b, of all
// problems), applying the outcomes of cbmm_sum_decide. With only ≥ 0 it
// returns problem only to its kept MM point (backend.CBMMIterator.Revert)
// and leaves the others alone.
extern "C" __global__ void cbmm_extrapolate(const int *modelProb, const int *itemProb, const double *report,
                                            const double *ctl, double *theta, double *a, double *b,
                                            double *mTheta, double *mA, double *mB, double *pTheta,
                                            double *pA, double *pB, long long Nt, long long Jt,
                                            long long R, long long K, long long clipA, long long only) {
    long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long nTheta = Nt * R, nA = Jt * R;
    if (e >= nTheta + nA + Jt) return;
    const unsigned char *outcome = (const unsigned char *)(report + K);
    int k;
    double *cur, *m, *prev;
    bool clip = false;
    if (e < nTheta) {
        k = modelProb[e / R];
        cur = theta + e, m = mTheta + e, prev = pTheta + e;
    } else if (e < nTheta + nA) {
        e -= nTheta;
        k = itemProb[e / R];
        cur = a + e, m = mA + e, prev = pA + e;
        clip = clipA != 0;
    } else {
        e -= nTheta + nA;
        k = itemProb[e];
        cur = b + e, m = mB + e, prev = pB + e;
    }
    unsigned char out = outcome[k];
    if (only >= 0) {
        if (k != only) return;
        out = OUT_REJECTED;
    }
    extrapolate_one(out, ctl[k * CTL + 2], clip, cur, m, prev);
}
