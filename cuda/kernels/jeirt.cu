// JE-IRT training step kernels (float32 parameters, as on the CPU).
//
// Forward:  a = X·W1ᵀ + c1, h = dropout(relu(a)), q = h·W2ᵀ + c2 (+ r_j)
// Link:     z = q·m/(‖q‖+1e-8) − ‖q‖,  ℓ = softplus(z) − y z  (mean over pairs)
//
// These kernels are the only second copy of JE-IRT's math: the Go copy is
// model.AdapterForward (the forward), model.Link (the link) and model.BCE
// (the loss), which the CPU harness tests (cuda/harness_*_test.go) compare
// them with. Change both together.
// Backward: the gradients of ℓ (and of the residual penalty), then AdamW.
//
// One step is six launches, in this order on one stream:
//   jeirt_fwd1  h = dropout(relu(X·W1ᵀ + c1)), X gathered from the items' encoder vectors
//   jeirt_fwd2  q = h·W2ᵀ + c2 (+ r_j)
//   pair_link   per pair: loss and ∂ℓ/∂z; per row: ∂/∂q
//   jeirt_bwd1  ∂/∂W2, ∂/∂h (through dropout and ReLU), ∂/∂c2, ∂/∂M, ∂/∂R and the penalty
//   jeirt_bwd2  ∂/∂W1, ∂/∂c1 and the step's loss
//   adamw       every parameter array in one contiguous buffer; it zeroes the gradients
// The dropout mask is drawn where it is used, from a counter-based hash
// (splitmix64 of the step's key plus the unit's index, as
// backend.JEIRTDropout draws it on the host). Every sum runs in a fixed order
// with one writer, without atomics, so two runs give the same bits.
//
// Compiled to PTX by `go generate ./cuda/`; every scalar parameter is 64 bits
// wide because gorgonia.org/cu copies 8 bytes per argument.

#define BM 64
#define BN 64
#define BK 16

// gemm_tile sets acc to the 64 x 64 tile at (row0, col0) of op(A)·op(B),
// with op(A) M x K (A stored M x K, or K x M when transA) and op(B) K x N (B
// stored K x N, or N x K when transB). aRows (for !transA) and bRows (for
// !transB), when not null, gather: row i of the stored A is A's row aRows[i],
// row k of the stored B is B's row bRows[k]. 256 threads; thread (ty, tx) =
// (tid/16, tid%16) holds rows row0+ty+16u and columns col0+tx+16v.
__device__ __forceinline__ void gemm_tile(const float *A, const int *aRows, bool transA, const float *B,
                                          const int *bRows, bool transB, long long M, long long N, long long K,
                                          long long row0, long long col0, float (*As)[BM + 4],
                                          float (*Bs)[BN + 4], float (&acc)[4][4]) {
    int tx = threadIdx.x & 15, ty = threadIdx.x >> 4;
#pragma unroll
    for (int u = 0; u < 4; u++)
#pragma unroll
        for (int v = 0; v < 4; v++) acc[u][v] = 0.f;
    for (long long k0 = 0; k0 < K; k0 += BK) {
        for (int l = threadIdx.x; l < BM * BK; l += 256) {
            int i, k;
            if (transA) { k = l / BM; i = l % BM; } else { i = l / BK; k = l % BK; }
            long long gi = row0 + i, gk = k0 + k;
            float v = 0.f;
            if (gi < M && gk < K) {
                if (transA) v = A[gk * M + gi];
                else v = A[(aRows ? (long long)aRows[gi] : gi) * K + gk];
            }
            As[k][i] = v;
        }
        for (int l = threadIdx.x; l < BK * BN; l += 256) {
            int j, k;
            if (transB) { j = l / BK; k = l % BK; } else { k = l / BN; j = l % BN; }
            long long gj = col0 + j, gk = k0 + k;
            float v = 0.f;
            if (gj < N && gk < K) {
                if (transB) v = B[gj * K + gk];
                else v = B[(bRows ? (long long)bRows[gk] : gk) * N + gj];
            }
            Bs[k][j] = v;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; k++) {
            float av[4], bv[4];
#pragma unroll
            for (int u = 0; u < 4; u++) {
                av[u] = As[k][ty + 16 * u];
                bv[u] = Bs[k][tx + 16 * u];
            }
#pragma unroll
            for (int u = 0; u < 4; u++)
#pragma unroll
                for (int v = 0; v < 4; v++) acc[u][v] += av[u] * bv[v];
        }
        __syncthreads();
    }
}

// sgemm: C (M x N, row-major) = alpha·op(A)·op(B) + beta·C (gemm_tile's
// shapes), 64 x 64 tiles, 256 threads. The text encoder's dense products use
// it.
extern "C" __global__ void sgemm(const float *A, const float *B, float *C, long long M, long long N,
                                 long long K, long long transA, long long transB, double alphaD,
                                 double betaD) {
    __shared__ float As[BK][BM + 4];
    __shared__ float Bs[BK][BN + 4];
    float alpha = (float)alphaD, beta = (float)betaD;
    int tx = threadIdx.x & 15, ty = threadIdx.x >> 4;
    long long row0 = (long long)blockIdx.y * BM, col0 = (long long)blockIdx.x * BN;
    float acc[4][4];
    gemm_tile(A, 0, transA != 0, B, 0, transB != 0, M, N, K, row0, col0, As, Bs, acc);
#pragma unroll
    for (int u = 0; u < 4; u++) {
        long long i = row0 + ty + 16 * u;
#pragma unroll
        for (int v = 0; v < 4; v++) {
            long long j = col0 + tx + 16 * v;
            if (i >= M || j >= N) continue;
            float c = alpha * acc[u][v];
            if (beta != 0.f) c += beta * C[i * N + j];
            C[i * N + j] = c;
        }
    }
}

// splitmix64 (Steele, Lea and Flood 2014): backend.Splitmix64.
__device__ __forceinline__ unsigned long long splitmix64(unsigned long long x) {
    unsigned long long z = x + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// jeirt_fwd1: h = dropout(relu(X·W1ᵀ + c1)) for U rows, X's row u being
// F[xRow[u]] (F: the encoder vectors, D wide), W1 H x D. The dropout
// multiplier of unit k = u·H + c is mask[k] when mask is not null, else
// scale when splitmix64(dropKey + k)>>40 < keep24 and 0 otherwise, and 1
// when keep24 ≥ 2²⁴ (no dropout). Grid: H/64 x U/64 tiles.
extern "C" __global__ void jeirt_fwd1(const float *F, const int *xRow, const float *W1, const float *c1,
                                      const float *mask, float *h, long long U, long long D, long long H,
                                      long long dropKey, long long keep24, double scaleD) {
    __shared__ float As[BK][BM + 4];
    __shared__ float Bs[BK][BN + 4];
    int tx = threadIdx.x & 15, ty = threadIdx.x >> 4;
    long long row0 = (long long)blockIdx.y * BM, col0 = (long long)blockIdx.x * BN;
    float acc[4][4];
    gemm_tile(F, xRow, false, W1, 0, true, U, H, D, row0, col0, As, Bs, acc);
    float scale = (float)scaleD;
    bool drop = keep24 < (1ll << 24);
#pragma unroll
    for (int u = 0; u < 4; u++) {
        long long i = row0 + ty + 16 * u;
#pragma unroll
        for (int v = 0; v < 4; v++) {
            long long j = col0 + tx + 16 * v;
            if (i >= U || j >= H) continue;
            long long k = i * H + j;
            float a = acc[u][v] + c1[j];
            float x = a < 0.f ? 0.f : a;
            if (mask) x *= mask[k];
            else if (drop) x = (long long)(splitmix64((unsigned long long)dropKey + (unsigned long long)k) >> 40) < keep24 ? x * scale : 0.f;
            h[k] = x;
        }
    }
}

// jeirt_fwd2: q = h·W2ᵀ + c2 (+ R[item[u]] when R is not null), h U x H, W2
// d x H. Grid: d/64 x U/64 tiles.
extern "C" __global__ void jeirt_fwd2(const float *h, const float *W2, const float *c2, const float *R,
                                      const int *item, float *q, long long U, long long H, long long d) {
    __shared__ float As[BK][BM + 4];
    __shared__ float Bs[BK][BN + 4];
    int tx = threadIdx.x & 15, ty = threadIdx.x >> 4;
    long long row0 = (long long)blockIdx.y * BM, col0 = (long long)blockIdx.x * BN;
    float acc[4][4];
    gemm_tile(h, 0, false, W2, 0, true, U, d, H, row0, col0, As, Bs, acc);
#pragma unroll
    for (int u = 0; u < 4; u++) {
        long long i = row0 + ty + 16 * u;
#pragma unroll
        for (int v = 0; v < 4; v++) {
            long long j = col0 + tx + 16 * v;
            if (i >= U || j >= d) continue;
            float x = acc[u][v] + c2[j];
            if (R) x += R[(long long)item[i] * d + j];
            q[i * d + j] = x;
        }
    }
}

__device__ double warp_sum(double v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// The gradient sums run without atomics, in a fixed order, so that two runs
// give the same bits: each sum has one writer (a warp, or a block adding its
// threads' partial sums in thread order), which adds its terms in the
// batch's order, from index lists the host builds once per epoch (CSR: the
// pairs of each row, the pairs of each model, the rows of each item).

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

// col_sums: out[c] = Σ_u X[u, c] (rows x cols) for the 32 columns from c0,
// by one block of 256 threads: warp g sums rows g, g+8, ... in order, then
// the 8 partial sums are added in order of g.
__device__ __forceinline__ void col_sums(const float *X, float *out, long long rows, long long cols, long long c0,
                                         float (*part)[33]) {
    int lane = threadIdx.x & 31, g = threadIdx.x >> 5;
    long long c = c0 + lane;
    float s = 0.f;
    if (c < cols)
        for (long long u = g; u < rows; u += 8) s += X[u * cols + c];
    part[g][lane] = s;
    __syncthreads();
    if (g == 0 && c < cols) {
        float t = part[0][lane];
        for (int k = 1; k < 8; k++) t += part[k][lane];
        out[c] = t;
    }
}

// jeirt_bwd1: the gradients that need only ∂/∂q, one role per block (256
// threads), by block index in this order:
//   tilesW2 = ⌈H/64⌉·⌈d/64⌉ blocks: gW2 = gqᵀ·h (d x H);
//   tilesGH = ⌈H/64⌉·⌈U/64⌉ blocks: gh = gq·W2 (U x H), times the ReLU and
//     dropout derivative: mask[k] (or hscale when mask is null) where
//     h > 0, else 0 (h > 0 exactly where a > 0 and the unit was kept);
//   ⌈d/32⌉ blocks: gc2 = Σ_u gq[u];
//   ⌈N/8⌉ blocks, a warp per model i: gM[i] = Σ coefM[k]·q[row[k]] over the
//     model's pairs modelPairs[modelStart[i]:modelStart[i+1]] in order (0
//     for a model without pairs);
//   ⌈slots/8⌉ blocks (R not null), a warp per item slot s of the batch
//     (item itemOf[s], rows itemRows[itemStart[s]:itemStart[s+1]]):
//     gR[j] = Σ gq[u] over the rows in order, plus, when coef[s] > 0
//     (coef = λ·pairs_j/B), the penalty's gradient 2·coef·r_j; the penalty
//     coef·‖r_j‖² goes to pen[s]. gR's other rows are zero (adamw zeroes
//     the gradients it has used).
extern "C" __global__ void jeirt_bwd1(const float *gq, const float *h, const float *W2, const float *mask,
                                      double hscaleD, float *gW2, float *gh, float *gc2, const float *q,
                                      const int *row, const int *modelStart, const int *modelPairs,
                                      const float *coefM, float *gM, const float *R, const int *itemOf,
                                      const int *itemStart, const int *itemRows, const float *coef, float *gR,
                                      double *pen, long long U, long long H, long long d, long long numModels,
                                      long long slots) {
    __shared__ float As[BK][BM + 4];
    __shared__ float Bs[BK][BN + 4];
    __shared__ float part[8][33];
    int tx = threadIdx.x & 15, ty = threadIdx.x >> 4, lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    long long b = blockIdx.x;
    long long hTiles = (H + BN - 1) / BN;
    long long tilesW2 = hTiles * ((d + BM - 1) / BM), tilesGH = hTiles * ((U + BM - 1) / BM);
    long long colBlocks = (d + 31) / 32, modelBlocks = (numModels + 7) / 8;
    float acc[4][4];
    if (b < tilesW2) {
        long long row0 = b / hTiles * BM, col0 = b % hTiles * BN;
        gemm_tile(gq, 0, true, h, 0, false, d, H, U, row0, col0, As, Bs, acc);
#pragma unroll
        for (int u = 0; u < 4; u++) {
            long long i = row0 + ty + 16 * u;
#pragma unroll
            for (int v = 0; v < 4; v++) {
                long long j = col0 + tx + 16 * v;
                if (i < d && j < H) gW2[i * H + j] = acc[u][v];
            }
        }
        return;
    }
    b -= tilesW2;
    if (b < tilesGH) {
        long long row0 = b / hTiles * BM, col0 = b % hTiles * BN;
        gemm_tile(gq, 0, false, W2, 0, false, U, H, d, row0, col0, As, Bs, acc);
        float hscale = (float)hscaleD;
#pragma unroll
        for (int u = 0; u < 4; u++) {
            long long i = row0 + ty + 16 * u;
#pragma unroll
            for (int v = 0; v < 4; v++) {
                long long j = col0 + tx + 16 * v;
                if (i >= U || j >= H) continue;
                long long k = i * H + j;
                float x = 0.f;
                if (h[k] > 0.f) x = acc[u][v] * (mask ? mask[k] : hscale);
                gh[k] = x;
            }
        }
        return;
    }
    b -= tilesGH;
    if (b < colBlocks) {
        col_sums(gq, gc2, U, d, 32 * b, part);
        return;
    }
    b -= colBlocks;
    if (b < modelBlocks) {
        long long i = 8 * b + warp;
        if (i >= numModels) return;
        for (long long c = lane; c < d; c += 32) {
            float g = 0.f;
            for (int p = modelStart[i]; p < modelStart[i + 1]; p++) {
                int k = modelPairs[p];
                g += coefM[k] * q[(long long)row[k] * d + c];
            }
            gM[i * d + c] = g;
        }
        return;
    }
    b -= modelBlocks;
    long long s = 8 * b + warp;
    if (!R || s >= slots) return;
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

// jeirt_bwd2: the gradients that need ∂/∂h, one role per block (256
// threads):
//   ⌈D/64⌉·⌈H/64⌉ blocks: gW1 = ghᵀ·X (H x D), X's row u being F[xRow[u]];
//   ⌈H/32⌉ blocks: gc1 = Σ_u gh[u];
//   the last block: stepLoss[0] = Σ_k loss[k]/B + Σ_s pen[s] (pen null
//     without the residual), each sum over the threads' strided partial
//     sums, added in a fixed tree.
extern "C" __global__ void jeirt_bwd2(const float *gh, const float *F, const int *xRow, float *gW1, float *gc1,
                                      const double *loss, const double *pen, double *stepLoss, long long U,
                                      long long D, long long H, long long B, long long slots) {
    __shared__ float As[BK][BM + 4];
    __shared__ float Bs[BK][BN + 4];
    __shared__ float part[8][33];
    __shared__ double red[2][256];
    int tx = threadIdx.x & 15, ty = threadIdx.x >> 4;
    long long b = blockIdx.x;
    long long dTiles = (D + BN - 1) / BN;
    long long tilesW1 = dTiles * ((H + BM - 1) / BM), colBlocks = (H + 31) / 32;
    float acc[4][4];
    if (b < tilesW1) {
        long long row0 = b / dTiles * BM, col0 = b % dTiles * BN;
        gemm_tile(gh, 0, true, F, xRow, false, H, D, U, row0, col0, As, Bs, acc);
#pragma unroll
        for (int u = 0; u < 4; u++) {
            long long i = row0 + ty + 16 * u;
#pragma unroll
            for (int v = 0; v < 4; v++) {
                long long j = col0 + tx + 16 * v;
                if (i < H && j < D) gW1[i * D + j] = acc[u][v];
            }
        }
        return;
    }
    b -= tilesW1;
    if (b < colBlocks) {
        col_sums(gh, gc1, U, H, 32 * b, part);
        return;
    }
    int t = threadIdx.x;
    double l = 0, p = 0;
    for (long long k = t; k < B; k += 256) l += loss[k];
    if (pen)
        for (long long k = t; k < slots; k += 256) p += pen[k];
    red[0][t] = l;
    red[1][t] = p;
    for (int w = 128; w > 0; w >>= 1) {
        __syncthreads();
        if (t < w) {
            red[0][t] += red[0][t + w];
            red[1][t] += red[1][t + w];
        }
    }
    if (t == 0) stepLoss[0] = red[0][0] / (double)B + red[1][0];
}

// Validation: the question embeddings of every item come from jeirt_fwd1
// (no dropout) and jeirt_fwd2 over the items in chunks; then the cells.

// jeirt_eval_cells: one warp per cell c of n (item, model, label): its logit
// z = q·m/(‖q‖+1e-8) − ‖q‖ from Q (items x d) and M, its loss
// softplus(z) − y z and whether it is right (z ≥ 0 exactly when y = 1); each
// block of 8 warps writes the sums of its cells' losses and right answers,
// added in cell order, to part[2·block] and part[2·block+1].
extern "C" __global__ void jeirt_eval_cells(const float *Q, const float *M, const int *item, const int *model,
                                            const float *label, double *part, long long n, long long d) {
    __shared__ double cellLoss[8], cellRight[8];
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    long long c = (long long)blockIdx.x * 8 + warp;
    double l = 0, r = 0;
    if (c < n) {
        const float *q = Q + (long long)item[c] * d, *m = M + (long long)model[c] * d;
        double dot = 0, ss = 0;
        for (long long k = lane; k < d; k += 32) {
            dot += (double)q[k] * (double)m[k];
            ss += (double)q[k] * (double)q[k];
        }
        dot = warp_sum(dot);
        ss = warp_sum(ss);
        double nrm = sqrt(ss);
        double z = dot / (nrm + 1e-8) - nrm, y = (double)label[c];
        l = fmax(z, 0.0) - y * z + log1p(exp(-fabs(z)));
        r = (z >= 0) == (y == 1) ? 1 : 0;
    }
    if (lane == 0) {
        cellLoss[warp] = l;
        cellRight[warp] = r;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        double sl = 0, sr = 0;
        for (int w = 0; w < 8; w++) {
            sl += cellLoss[w];
            sr += cellRight[w];
        }
        part[2 * blockIdx.x] = sl;
        part[2 * blockIdx.x + 1] = sr;
    }
}

// jeirt_eval_sum: one block of 256 threads: out[0] = Σ part[2b] / n and
// out[1] = Σ part[2b+1] / n over the blocks b, the threads' strided partial
// sums added in a fixed tree.
extern "C" __global__ void jeirt_eval_sum(const double *part, double *out, long long blocks, long long n) {
    __shared__ double red[2][256];
    int t = threadIdx.x;
    double l = 0, r = 0;
    for (long long b = t; b < blocks; b += 256) {
        l += part[2 * b];
        r += part[2 * b + 1];
    }
    red[0][t] = l;
    red[1][t] = r;
    for (int w = 128; w > 0; w >>= 1) {
        __syncthreads();
        if (t < w) {
            red[0][t] += red[0][t + w];
            red[1][t] += red[1][t + w];
        }
    }
    if (t == 0) {
        out[0] = red[0][0] / (double)n;
        out[1] = red[1][0] / (double)n;
    }
}

// adamw: PyTorch's AdamW on n values, with the bias corrections folded into
// stepSize = lr/(1−β1ᵗ) and invSqrtBc2 = 1/√(1−β2ᵗ), decay = 1 − lr·λ:
//   m ← β1 m + (1−β1) g,  v ← β2 v + (1−β2) g²,  p ← p·decay − stepSize·m/(√v·invSqrtBc2 + ε)
// and g ← 0, so that the next step's sparse gradients (the residual rows of
// its items) start from zero.
extern "C" __global__ void adamw(float *p, float *g, float *m, float *v, long long n, double decayD, double b1D,
                                 double b2D, double stepSizeD, double invSqrtBc2D, double epsD) {
    long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    float decay = (float)decayD, b1 = (float)b1D, b2 = (float)b2D, stepSize = (float)stepSizeD,
          invSqrtBc2 = (float)invSqrtBc2D, eps = (float)epsD;
    float gk = g[k];
    if (gk != 0.f) g[k] = 0.f;
    float mk = b1 * m[k] + (1.f - b1) * gk;
    float vk = b2 * v[k] + (1.f - b2) * gk * gk;
    m[k] = mk;
    v[k] = vk;
    p[k] = p[k] * decay - stepSize * mk / (sqrtf(vk) * invSqrtBc2 + eps);
}
