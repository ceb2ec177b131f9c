// Frozen text encoder forward kernels (float32 activations and weights, as
// on the CPU): the BERT (Devlin et al. 2019), MPNet (Song et al. 2020) and
// ModernBERT (Warner et al. 2024) forward passes of package encoder, with
// the dense products left to a matrix product (sgemm in jeirt.cu, or a host
// gemm on the CPU harness):
//
//   x   = LN(word[ids] (+ token_type[0]) (+ position[pos]))     embed, layer_norm
//   per layer (BERT, MPNet: post-norm):
//     Q, K, V = x·Wᵀ + b                                          gemm, bias_act
//     (MPNet: bias_hij = table[bucket(j − i), h])                 mpnet_rel_bias
//     ctx = softmax(Q·Kᵀ/√dh + bias + mask)·V                     attention
//     x   = LN(x + ctx·Woᵀ + bo)                                  gemm, bias_act, layer_norm
//     x   = LN(x + GELU(x·Wiᵀ + bi)·Wo2ᵀ + bo2)                   gemm, bias_act, layer_norm
//   per layer (ModernBERT: pre-norm, rotary, GeGLU, local windows):
//     qkv = LN(x)·Wqkvᵀ; rotate Q and K by position              rope
//     x   = x + attention(window)·Woᵀ                            attention, residual_add
//     x   = x + GeGLU(LN(x)·Wiᵀ)·Wo2ᵀ                            geglu
//   pooling (CLS, max, mean, mean_sqrt_len) and L2 normalisation  pool, l2_normalize
//   (bf16 precision: the inputs of each product rounded)          to_bf16
//
// Reductions (LayerNorm, pooling, norms) accumulate in double, as the CPU
// code does; the attention softmax is an online (streaming) softmax in
// float32 over tiles of keys in shared memory (Milakov and Gimelshein 2018).
// No kernel uses local memory (scripts/ptxas-report.sh checks it).
//
// Compiled to PTX by `go generate ./cuda/`; every scalar parameter is 64 bits
// wide because gorgonia.org/cu copies 8 bytes per argument.

__device__ float enc_gelu(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)); }

// enc_block_sum returns the sum of v over the block (every thread gets it).
// The block is at most 1024 threads, a multiple of 32.
__device__ double enc_block_sum(double v, double *red) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, nw = blockDim.x >> 5;
    __syncthreads(); // red is free again (a previous sum has been read)
    if (lane == 0) red[warp] = v;
    __syncthreads();
    double s = 0;
    for (int w = 0; w < nw; w++) s += red[w];
    return s;
}

// embed: x[t, :] = word[ids[t], :] (+ type0) (+ position[pos[t], :]) for the
// n tokens of a batch; type0 (token type 0's row) and pos may be null.
extern "C" __global__ void embed(float *x, const int *ids, const int *pos, const float *word,
                                 const float *position, const float *type0, long long n, long long d) {
    long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n * d) return;
    long long t = k / d, c = k % d;
    float v = word[(long long)ids[t] * d + c];
    if (type0) v += type0[c];
    if (pos) v += position[(long long)pos[t] * d + c];
    x[k] = v;
}

// layer_norm: s = x + res (res may be null), y = (s − mean)/√(var + eps)·γ
// (+ β, which may be null: ModernBERT's norms without bias), over rows of
// width d with the biased variance (torch.nn.LayerNorm). One block per row;
// y may be x or res.
extern "C" __global__ void layer_norm(float *y, const float *x, const float *res, const float *gamma,
                                      const float *beta, long long n, long long d, double eps) {
    __shared__ double red[32];
    long long r = blockIdx.x;
    if (r >= n) return;
    const float *xr = x + r * d;
    const float *rr = res ? res + r * d : 0;
    double s = 0;
    for (long long c = threadIdx.x; c < d; c += blockDim.x) s += (double)(rr ? xr[c] + rr[c] : xr[c]);
    double mean = enc_block_sum(s, red) / (double)d;
    double q = 0;
    for (long long c = threadIdx.x; c < d; c += blockDim.x) {
        double v = (double)(rr ? xr[c] + rr[c] : xr[c]) - mean;
        q += v * v;
    }
    double inv = 1.0 / sqrt(enc_block_sum(q, red) / (double)d + eps);
    for (long long c = threadIdx.x; c < d; c += blockDim.x) {
        double v = ((double)(rr ? xr[c] + rr[c] : xr[c]) - mean) * inv * (double)gamma[c];
        if (beta) v += (double)beta[c];
        y[r * d + c] = (float)v;
    }
}

// bias_act: y[r, c] = act(y[r, c] + bias[c]) on a rows x cols matrix; bias
// may be null, act is 0 (none) or 1 (exact erf GELU, Hendrycks and Gimpel
// 2016, Hugging Face's "gelu").
extern "C" __global__ void bias_act(float *y, const float *bias, long long rows, long long cols,
                                    long long act) {
    long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= rows * cols) return;
    float v = y[k];
    if (bias) v += bias[k % cols];
    if (act == 1) v = enc_gelu(v);
    y[k] = v;
}

// geglu: ModernBertMLP's gated unit (Shazeer 2020): rows of x (n x 2f) are
// input (first f) and gate (last f); dst (n x f) = gelu(input)·gate.
extern "C" __global__ void geglu(float *dst, const float *x, long long n, long long f) {
    long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n * f) return;
    long long r = k / f, c = k % f;
    dst[k] = enc_gelu(x[r * 2 * f + c]) * x[r * 2 * f + f + c];
}

// residual_add: dst = a + b elementwise (dst may be a or b).
extern "C" __global__ void residual_add(float *dst, const float *a, const float *b, long long n) {
    long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (k < n) dst[k] = a[k] + b[k];
}

// mpnet_rel_bias: MPNet's relative position bias (T5's bucketing, Raffel et
// al. 2020), bias[h, i, j] = table[bucket(j − i), h] for an l x l attention:
// half the buckets for each sign, exact below a quarter, logarithmic up to
// maxDistance, as MPNetEncoder.relative_position_bucket (bidirectional).
extern "C" __global__ void mpnet_rel_bias(float *bias, const float *table, long long l, long long heads,
                                          long long buckets, long long maxDistance) {
    long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= l * l) return;
    long long i = k / l, j = k % l;
    long long half = buckets / 2, exact = half / 2, n = i - j, b = 0;
    if (n < 0) {
        b = half;
        n = -n;
    }
    if (n < exact) {
        b += n;
    } else {
        // float32 ratio, double logarithms: the rounding of the CPU code.
        float ratio = (float)n / (float)exact;
        long long v = exact + (long long)(float)(log((double)ratio) / log((double)maxDistance / (double)exact) *
                                                 (double)(half - exact));
        b += v < half - 1 ? v : half - 1;
    }
    for (long long h = 0; h < heads; h++) bias[(h * l + i) * l + j] = table[b * heads + h];
}

// rope: rotary position embeddings (Su et al. 2021) in place on the Q and K
// heads of n tokens (rows of leading dimension ld; k may be null), position
// t mod l: for each head, pairs (x_i, x_{i+dh/2}) rotate by the angle whose
// cosine and sine are cos[p, i] and sin[p, i] (tables of dh/2 per position,
// computed on the host for the layer's theta).
extern "C" __global__ void rope(float *q, float *k, const float *cos, const float *sin, long long n,
                                long long l, long long heads, long long dh, long long ld) {
    long long half = dh / 2;
    long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= n * heads * half) return;
    long long t = idx / (heads * half), h = (idx / half) % heads, i = idx % half;
    long long p = t % l;
    float c = cos[p * half + i], s = sin[p * half + i];
    for (int w = 0; w < 2; w++) {
        float *x = w == 0 ? q : k;
        if (!x) continue;
        float *row = x + t * ld + h * dh;
        float x1 = row[i], x2 = row[i + half];
        row[i] = x1 * c - x2 * s;
        row[i + half] = x2 * c + x1 * s;
    }
}

// attention: scaled dot-product attention (Vaswani et al. 2017, §3.2.1) for
// b sequences of l tokens and heads heads of size dh:
//
//   ctx[b, i, h] = Σ_j softmax_j(Q_bhi·K_bhj / scale + bias[h, i, j]) V_bhj
//
// over the keys j with mask[b, j] ≠ 0 and, when window > 0, |i − j| ≤ window
// (ModernBERT's sliding-window layers). q, k and v have one row per token
// with leading dimension ld (so a fused QKV projection is read in place),
// head h being columns h·dh … h·dh + dh − 1; ctx is (b·l) x (heads·dh). bias
// (heads x l x l) may be null. A query with no key gets zeros.
//
// One kernel per head-size capacity DH (attention_dh32, _dh64, _dh96,
// _dh128; dh ≤ DH, the heads zero-padded to DH in shared memory), so that
// every per-thread array has a compile-time size and stays in registers (no
// local memory). Grid: (b·heads, ⌈l/16⌉), 4 warps of 32 threads; a block
// takes 16 query rows (4 per warp) and walks the keys in tiles of 32 through
// shared memory, with an online softmax per row (Milakov and Gimelshein
// 2018). Within a tile, lane t scores key t against the warp's 4 rows (the
// queries read from shared memory, broadcast) and writes the scores to
// shared memory; every lane takes the tile's maximum from there, lane t
// writes key t's weight, and for the product with V lane t owns output
// columns t, t + 32, … (DH/32 of them per row). Shared memory and block
// barriers rather than warp shuffles: 4 barriers per tile instead of about
// 170 shuffles, and the CPU harness runs a barrier far faster.
#define ENC_KEYS 32  // keys per tile: one per lane
#define ENC_WARPS 4  // warps per attention block
#define ENC_QPW 4    // query rows per warp
#define ENC_QROWS 16 // query rows per block (ENC_WARPS·ENC_QPW)
// ENC_ATT_SMEM: the floats of shared memory of attention_dhDH: K (rows
// padded by one float, so that lanes reading one key each hit distinct
// banks), V, the block's queries, the tile's mask, and the tile's scores
// and softmax weights per query row.
#define ENC_ATT_SMEM(DH) (ENC_KEYS * ((DH) + 1) + ENC_KEYS * (DH) + ENC_QROWS * (DH) + ENC_KEYS + 2 * ENC_QROWS * ENC_KEYS)

template <int DH>
__device__ __forceinline__ void enc_attention(float *ctx, const float *q, const float *k, const float *v,
                                              const float *mask, const float *bias, long long b, long long l,
                                              long long heads, long long dh, long long ld, long long window,
                                              double scaleD, float *sm) {
    constexpr int DPL = DH / 32; // output columns per lane
    float *Ks = sm, *Vs = Ks + ENC_KEYS * (DH + 1), *Qs = Vs + ENC_KEYS * DH, *Ms = Qs + ENC_QROWS * DH;
    float *Ss = Ms + ENC_KEYS, *Ps = Ss + ENC_QROWS * ENC_KEYS;
    float scale = (float)scaleD;
    long long bh = blockIdx.x, bi = bh / heads, h = bh % heads;
    int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    long long i0 = (long long)blockIdx.y * ENC_QROWS;
    long long i1 = i0 + ENC_QROWS < l ? i0 + ENC_QROWS : l;
    long long klo = 0, khi = l;
    if (window > 0) {
        klo = i0 - window > 0 ? i0 - window : 0;
        khi = i1 + window < l ? i1 + window : l;
    }
    for (int e = threadIdx.x; e < ENC_QROWS * DH; e += blockDim.x) {
        int r = e / DH, c = e % DH;
        long long i = i0 + r;
        Qs[e] = i < l && c < dh ? q[(bi * l + i) * ld + h * dh + c] : 0.f;
    }
    float m[ENC_QPW], s[ENC_QPW], acc[ENC_QPW][DPL];
#pragma unroll
    for (int r = 0; r < ENC_QPW; r++) {
        m[r] = -INFINITY;
        s[r] = 0.f;
#pragma unroll
        for (int d = 0; d < DPL; d++) acc[r][d] = 0.f;
    }
    for (long long j0 = klo; j0 < khi; j0 += ENC_KEYS) {
        int nk = khi - j0 < ENC_KEYS ? (int)(khi - j0) : ENC_KEYS;
        __syncthreads(); // the previous tile has been read (and, first, Qs written)
        for (int e = threadIdx.x; e < ENC_KEYS * DH; e += blockDim.x) {
            int jj = e / DH, c = e % DH;
            bool in = jj < nk && c < dh;
            long long row = (bi * l + j0 + jj) * ld + h * dh + c;
            Ks[jj * (DH + 1) + c] = in ? k[row] : 0.f;
            Vs[jj * DH + c] = in ? v[row] : 0.f;
        }
        if (threadIdx.x < ENC_KEYS) Ms[threadIdx.x] = (int)threadIdx.x < nk ? mask[bi * l + j0 + threadIdx.x] : 0.f;
        __syncthreads();
        // Scores of key j (this lane's) against the warp's rows.
        float x[ENC_QPW];
#pragma unroll
        for (int r = 0; r < ENC_QPW; r++) x[r] = 0.f;
        const float *kr = Ks + lane * (DH + 1);
        const float *qr = Qs + warp * ENC_QPW * DH;
#pragma unroll 8
        for (int c = 0; c < DH; c++) {
            float kc = kr[c];
#pragma unroll
            for (int r = 0; r < ENC_QPW; r++) x[r] += qr[r * DH + c] * kc;
        }
        long long j = j0 + lane;
        bool key = lane < nk && Ms[lane] != 0.f;
        float *Sw = Ss + warp * ENC_QPW * ENC_KEYS, *Pw = Ps + warp * ENC_QPW * ENC_KEYS;
#pragma unroll
        for (int r = 0; r < ENC_QPW; r++) {
            long long i = i0 + warp * ENC_QPW + r;
            bool ok = key && i < l && (window <= 0 || (j - i <= window && i - j <= window));
            float xr = -INFINITY;
            if (ok) {
                xr = x[r] / scale;
                if (bias) xr += bias[(h * l + i) * l + j];
            }
            x[r] = xr;
            Sw[r * ENC_KEYS + lane] = xr;
        }
        __syncthreads(); // the tile's scores are in Ss
        // Rescale by the tile's maximum (every lane reads it from Ss), then
        // this lane's key's weight p to Ps.
#pragma unroll
        for (int r = 0; r < ENC_QPW; r++) {
            float tm = -INFINITY;
            for (int jj = 0; jj < ENC_KEYS; jj++) tm = fmaxf(tm, Sw[r * ENC_KEYS + jj]);
            float mn = fmaxf(m[r], tm), f = 1.f, p = 0.f;
            if (mn != -INFINITY) {   // some key of this row so far
                f = expf(m[r] - mn); // 0 for the row's first keys (m = −inf)
                p = expf(x[r] - mn); // 0 for a key out of reach (x = −inf)
            }
            Pw[r * ENC_KEYS + lane] = p;
            s[r] *= f;
            m[r] = mn;
#pragma unroll
            for (int d = 0; d < DPL; d++) acc[r][d] *= f;
        }
        __syncthreads(); // the tile's weights are in Ps
        // s += Σ p, acc += P·V over this lane's columns of V.
        for (int jj = 0; jj < nk; jj++) {
            float vv[DPL];
#pragma unroll
            for (int d = 0; d < DPL; d++) vv[d] = Vs[jj * DH + lane + 32 * d];
#pragma unroll
            for (int r = 0; r < ENC_QPW; r++) {
                float p = Pw[r * ENC_KEYS + jj];
                s[r] += p;
#pragma unroll
                for (int d = 0; d < DPL; d++) acc[r][d] += p * vv[d];
            }
        }
    }
    long long dm = heads * dh;
#pragma unroll
    for (int r = 0; r < ENC_QPW; r++) {
        long long i = i0 + warp * ENC_QPW + r;
        if (i >= l) continue;
        float inv = s[r] > 0.f ? 1.f / s[r] : 0.f;
#pragma unroll
        for (int d = 0; d < DPL; d++) {
            int c = lane + 32 * d;
            if (c < dh) ctx[(bi * l + i) * dm + h * dh + c] = acc[r][d] * inv;
        }
    }
}

#define ENC_ATT_PARAMS                                                                                    \
    float *ctx, const float *q, const float *k, const float *v, const float *mask, const float *bias,     \
        long long b, long long l, long long heads, long long dh, long long ld, long long window, double scaleD
#define ENC_ATT_ARGS ctx, q, k, v, mask, bias, b, l, heads, dh, ld, window, scaleD
extern "C" __global__ void attention_dh32(ENC_ATT_PARAMS) { __shared__ float sm[ENC_ATT_SMEM(32)]; enc_attention<32>(ENC_ATT_ARGS, sm); }
extern "C" __global__ void attention_dh64(ENC_ATT_PARAMS) { __shared__ float sm[ENC_ATT_SMEM(64)]; enc_attention<64>(ENC_ATT_ARGS, sm); }
extern "C" __global__ void attention_dh96(ENC_ATT_PARAMS) { __shared__ float sm[ENC_ATT_SMEM(96)]; enc_attention<96>(ENC_ATT_ARGS, sm); }
extern "C" __global__ void attention_dh128(ENC_ATT_PARAMS) { __shared__ float sm[ENC_ATT_SMEM(128)]; enc_attention<128>(ENC_ATT_ARGS, sm); }

// enc_bf16 returns x rounded to the nearest bfloat16 (ties to even), as
// __float2bfloat16, in the low 16 bits; a NaN stays a (quiet) NaN.
__device__ unsigned int enc_bf16(float x) {
    union {
        float f;
        unsigned int u;
    } b;
    b.f = x;
    unsigned int u = b.u;
    if ((u & 0x7f800000u) == 0x7f800000u) return (u >> 16) | ((u & 0x7fffffu) ? 0x40u : 0u);
    return (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
}

// to_bf16: the n floats of src rounded to bfloat16 into dst, two to a 32-bit
// word, the first in the low half (so dst reads as an array of n bfloat16
// values, cuBLAS's CUDA_R_16BF): the inputs of the reduced-precision
// (bf16) dense products.
extern "C" __global__ void to_bf16(unsigned int *dst, const float *src, long long n) {
    long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (2 * k >= n) return;
    unsigned int lo = enc_bf16(src[2 * k]), hi = 2 * k + 1 < n ? enc_bf16(src[2 * k + 1]) : 0u;
    dst[k] = lo | hi << 16;
}

// pool: sentence-transformers' Pooling of hidden states h (b x l x d) over
// the tokens with mask ≠ 0, mode 0 CLS (token 0), 1 max, 2 mean, 3 mean
// divided by √(token count), into columns offset … offset + d − 1 of out
// (b rows of width outDim). One block per sequence.
extern "C" __global__ void pool(float *out, const float *h, const float *mask, long long b, long long l,
                                long long d, long long mode, long long outDim, long long offset) {
    long long r = blockIdx.x;
    if (r >= b) return;
    const float *hr = h + r * l * d;
    const float *mr = mask + r * l;
    double cnt = 0;
    for (long long t = 0; t < l; t++) cnt += (double)mr[t];
    for (long long c = threadIdx.x; c < d; c += blockDim.x) {
        double v;
        if (mode == 0) {
            v = (double)hr[c];
        } else if (mode == 1) {
            v = -INFINITY;
            for (long long t = 0; t < l; t++)
                if (mr[t] != 0.f && (double)hr[t * d + c] > v) v = (double)hr[t * d + c];
        } else {
            v = 0;
            for (long long t = 0; t < l; t++)
                if (mr[t] != 0.f) v += (double)hr[t * d + c];
            double div = cnt > 1e-9 ? cnt : 1e-9;
            if (mode == 3) div = sqrt(div);
            v /= div;
        }
        out[r * outDim + offset + c] = (float)v;
    }
}

// l2_normalize: each row of v (rows x cols) divided by max(‖row‖, 1e-12),
// sentence-transformers' Normalize. One block per row.
extern "C" __global__ void l2_normalize(float *v, long long rows, long long cols) {
    __shared__ double red[32];
    long long r = blockIdx.x;
    if (r >= rows) return;
    float *x = v + r * cols;
    double ss = 0;
    for (long long c = threadIdx.x; c < cols; c += blockDim.x) ss += (double)x[c] * (double)x[c];
    double norm = sqrt(enc_block_sum(ss, red));
    double inv = 1.0 / (norm > 1e-12 ? norm : 1e-12);
    for (long long c = threadIdx.x; c < cols; c += blockDim.x) x[c] = (float)((double)x[c] * inv);
}
