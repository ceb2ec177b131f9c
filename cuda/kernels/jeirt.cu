// JE-IRT training step kernels (float32 parameters, as on the CPU).
//
// Forward:  a = X·W1ᵀ + c1, h = dropout(relu(a)), q = h·W2ᵀ + c2 (+ r_j)
// Link:     z = q·m/(‖q‖+1e-8) − ‖q‖,  ℓ = softplus(z) − y z  (mean over pairs)
// Backward: the gradients of ℓ (and of the residual penalty), then AdamW.
//
// Compiled to PTX by `go generate ./cuda/`; every scalar parameter is 64 bits
// wide because gorgonia.org/cu copies 8 bytes per argument.

#define BM 64
#define BN 64
#define BK 16

// sgemm: C (M x N, row-major) = alpha·op(A)·op(B) + beta·C, with op(A) M x K
// (A stored M x K, or K x M when transA) and op(B) K x N (B stored K x N, or
// N x K when transB). 64 x 64 tiles, 256 threads, 4 x 4 outputs per thread.
extern "C" __global__ void sgemm(const float *A, const float *B, float *C, long long M, long long N,
                                 long long K, long long transA, long long transB, double alphaD,
                                 double betaD) {
    __shared__ float As[BK][BM + 4];
    __shared__ float Bs[BK][BN + 4];
    float alpha = (float)alphaD, beta = (float)betaD;
    int tx = threadIdx.x & 15, ty = threadIdx.x >> 4;
    long long row0 = (long long)blockIdx.y * BM, col0 = (long long)blockIdx.x * BN;
    float acc[4][4];
    for (int u = 0; u < 4; u++)
        for (int v = 0; v < 4; v++) acc[u][v] = 0.f;
    for (long long k0 = 0; k0 < K; k0 += BK) {
        for (int l = threadIdx.x; l < BM * BK; l += 256) {
            int i, k;
            if (transA) { k = l / BM; i = l % BM; } else { i = l / BK; k = l % BK; }
            long long gi = row0 + i, gk = k0 + k;
            float v = 0.f;
            if (gi < M && gk < K) v = transA ? A[gk * M + gi] : A[gi * K + gk];
            As[k][i] = v;
        }
        for (int l = threadIdx.x; l < BK * BN; l += 256) {
            int j, k;
            if (transB) { j = l / BK; k = l % BK; } else { k = l / BN; j = l % BN; }
            long long gj = col0 + j, gk = k0 + k;
            float v = 0.f;
            if (gj < N && gk < K) v = transB ? B[gj * K + gk] : B[gk * N + gj];
            Bs[k][j] = v;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; k++) {
            float av[4], bv[4];
            for (int u = 0; u < 4; u++) {
                av[u] = As[k][ty + 16 * u];
                bv[u] = Bs[k][tx + 16 * u];
            }
            for (int u = 0; u < 4; u++)
                for (int v = 0; v < 4; v++) acc[u][v] += av[u] * bv[v];
        }
        __syncthreads();
    }
    for (int u = 0; u < 4; u++) {
        long long i = row0 + ty + 16 * u;
        if (i >= M) continue;
        for (int v = 0; v < 4; v++) {
            long long j = col0 + tx + 16 * v;
            if (j >= N) continue;
            float c = alpha * acc[u][v];
            if (beta != 0.f) c += beta * C[i * N + j];
            C[i * N + j] = c;
        }
    }
}

// set_rows: C[u, :] = bias for every row u of a rows x cols matrix.
extern "C" __global__ void set_rows(float *C, const float *bias, long long rows, long long cols) {
    long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (k < rows * cols) C[k] = bias[k % cols];
}

// relu_mask: h = relu(a) · mask (mask may be null: no dropout).
extern "C" __global__ void relu_mask(const float *a, const float *mask, float *h, long long n) {
    long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    float v = a[k] < 0.f ? 0.f : a[k];
    if (mask) v *= mask[k];
    h[k] = v;
}

// add_rows: q[u, :] += R[item[u], :] (the residual r_j).
extern "C" __global__ void add_rows(float *q, const float *R, const int *item, long long rows, long long d) {
    long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= rows * d) return;
    long long u = k / d, c = k % d;
    q[k] += R[(long long)item[u] * d + c];
}

__device__ double warp_sum(double v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// The gradient sums run without atomics, in a fixed order, so that two runs
// give the same bits: each sum has one writer (a warp), which adds its terms
// in the batch's order, from index lists the host builds (CSR: the pairs of
// each row, the pairs of each model, the rows of each item).

// pair_link: one warp per row u, over its pairs k = rowPairs[rowStart[u]:
// rowStart[u+1]] (model i, label y) in order. Writes each pair's
// BCE-with-logits loss to loss[k] and its ∂(invB·ℓ)/∂m factor
// gz/(‖q‖+ε) to coefM[k], and sets gq[u] to the gradient of invB·Σℓ:
//   ∂z/∂m = q/(‖q‖+ε),  ∂z/∂q = m/(‖q‖+ε) − (q·m)·q/(‖q‖(‖q‖+ε)²) − q/‖q‖.
extern "C" __global__ void pair_link(const float *q, const float *M, const int *rowStart, const int *rowPairs,
                                     const int *modelIdx, const float *label, double *loss, float *coefM,
                                     float *gq, long long U, long long d, double invB) {
    long long u = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int lane = threadIdx.x & 31;
    if (u >= U) return;
    const float *qu = q + u * d;
    float *gqu = gq + u * d;
    double ss = 0;
    for (long long c = lane; c < d; c += 32) {
        ss += (double)qu[c] * (double)qu[c];
        gqu[c] = 0.f;
    }
    ss = warp_sum(ss);
    double n = sqrt(ss);
    for (int p = rowStart[u]; p < rowStart[u + 1]; p++) {
        int k = rowPairs[p];
        const float *mi = M + (long long)modelIdx[k] * d;
        double dot = 0;
        for (long long c = lane; c < d; c += 32) dot += (double)qu[c] * (double)mi[c];
        dot = warp_sum(dot);
        double z = dot / (n + 1e-8) - n;
        double y = (double)label[k];
        double gz;
        if (z >= 0) gz = 1.0 / (1.0 + exp(-z));
        else { double e = exp(z); gz = e / (1.0 + e); }
        gz = (gz - y) * invB;
        float sm = (float)(gz / (n + 1e-8));
        float sq = n > 0 ? (float)(-gz * (dot / (n * (n + 1e-8) * (n + 1e-8)) + 1.0 / n)) : 0.f;
        if (lane == 0) {
            loss[k] = fmax(z, 0.0) - y * z + log1p(exp(-fabs(z)));
            coefM[k] = sm;
        }
        for (long long c = lane; c < d; c += 32) gqu[c] += sm * mi[c] + sq * qu[c];
    }
}

// model_grad: one warp per model i, gM[i] = Σ coefM[k]·q[row[k]] over the
// model's pairs k = modelPairs[modelStart[i]:modelStart[i+1]] in order (0 for
// a model without pairs).
extern "C" __global__ void model_grad(const float *q, const int *row, const int *modelStart,
                                      const int *modelPairs, const float *coefM, float *gM,
                                      long long numModels, long long d) {
    long long i = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int lane = threadIdx.x & 31;
    if (i >= numModels) return;
    for (long long c = lane; c < d; c += 32) {
        float g = 0.f;
        for (int p = modelStart[i]; p < modelStart[i + 1]; p++) {
            int k = modelPairs[p];
            g += coefM[k] * q[(long long)row[k] * d + c];
        }
        gM[i * d + c] = g;
    }
}

// residual_grad: one warp per item slot s of the batch (item itemOf[s], rows
// itemRows[itemStart[s]:itemStart[s+1]]): gR[j] = Σ gq[u] over the rows in
// order, plus, when coef[s] > 0 (coef = λ·pairs_j/B), the penalty's gradient
// 2·coef·r_j; the penalty coef·‖r_j‖² goes to pen[s]. gR's other rows are
// zeroed by the caller.
extern "C" __global__ void residual_grad(const float *gq, const float *R, const int *itemOf,
                                         const int *itemStart, const int *itemRows, const float *coef,
                                         float *gR, double *pen, long long slots, long long d) {
    long long s = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int lane = threadIdx.x & 31;
    if (s >= slots) return;
    long long j = itemOf[s];
    float w = coef[s];
    double ss = 0;
    for (long long c = lane; c < d; c += 32) {
        float r = R[j * d + c];
        ss += (double)r * (double)r;
        float g = 0.f;
        for (int p = itemStart[s]; p < itemStart[s + 1]; p++) g += gq[(long long)itemRows[p] * d + c];
        if (w > 0.f) g += 2.f * w * r;
        gR[j * d + c] = g;
    }
    ss = warp_sum(ss);
    if (lane == 0) pen[s] = w > 0.f ? (double)w * ss : 0.0;
}

// col_sum: out[c] = Σ_u X[u, c] (bias gradients), one thread per column.
extern "C" __global__ void col_sum(const float *X, float *out, long long rows, long long cols) {
    long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cols) return;
    float s = 0.f;
    for (long long u = 0; u < rows; u++) s += X[u * cols + c];
    out[c] = s;
}

// relu_back: gh = gh · mask where a > 0, else 0.
extern "C" __global__ void relu_back(const float *a, const float *mask, float *gh, long long n) {
    long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    if (a[k] <= 0.f) gh[k] = 0.f;
    else if (mask) gh[k] *= mask[k];
}

// adamw: PyTorch's AdamW on n values, with the bias corrections folded into
// stepSize = lr/(1−β1ᵗ) and invSqrtBc2 = 1/√(1−β2ᵗ), decay = 1 − lr·λ:
//   m ← β1 m + (1−β1) g,  v ← β2 v + (1−β2) g²,  p ← p·decay − stepSize·m/(√v·invSqrtBc2 + ε)
extern "C" __global__ void adamw(float *p, const float *g, float *m, float *v, long long n, double decayD,
                                 double b1D, double b2D, double stepSizeD, double invSqrtBc2D,
                                 double epsD) {
    long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    float decay = (float)decayD, b1 = (float)b1D, b2 = (float)b2D, stepSize = (float)stepSizeD,
          invSqrtBc2 = (float)invSqrtBc2D, eps = (float)epsD;
    float gk = g[k];
    float mk = b1 * m[k] + (1.f - b1) * gk;
    float vk = b2 * v[k] + (1.f - b2) * gk * gk;
    m[k] = mk;
    v[k] = vk;
    p[k] = p[k] * decay - stepSize * mk / (sqrtf(vk) * invSqrtBc2 + eps);
}
