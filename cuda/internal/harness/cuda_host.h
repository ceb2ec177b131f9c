// cuda_host.h: what jeirt's kernels (../../kernels/*.cu) use from CUDA, for
// the host C++ compiler, so that the same source that nvcc turns into PTX runs
// on the CPU in tests. Include it, then the .cu file, then register the
// kernels with JH_KERNEL (see kernels_cbmm.cpp).
//
// Every CUDA thread of a block is a thread of the launcher (launch.cpp): an OS
// thread (mode "threads", what ThreadSanitizer checks) or a fiber switched at
// barriers (mode "fibers", fast enough for the numeric tests). Blocks run one
// after another, so __shared__ (a static local) is the block's shared memory.
// __syncthreads is a barrier across the block's live threads; the warp
// shuffles exchange values through a per-warp slot array between two warp
// barriers. Threads that return leave the barriers, as on sm_70 and newer.
#ifndef JEIRT_CUDA_HOST_H
#define JEIRT_CUDA_HOST_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include <atomic>
#include <type_traits>

struct uint3 {
    unsigned int x, y, z;
};
typedef uint3 dim3;

namespace jh {

struct Warp;
struct Block;

// Thread is one CUDA thread's view of its launch.
struct Thread {
    uint3 tid; // threadIdx
    uint3 bid; // blockIdx
    unsigned lane;
    Warp *warp;
    Block *block;
};

// cur is the CUDA thread running on this OS thread (in mode "fibers", the
// scheduler sets it before switching to a fiber).
extern thread_local Thread *cur;
extern uint3 launchBlockDim, launchGridDim;

void syncthreads();
// exchange publishes v (8 bytes) from the calling lane and returns lane src's
// value (the caller's own when src is outside the warp).
uint64_t exchange(uint64_t v, int src);

template <typename T> T shfl(T v, int src) {
    static_assert(sizeof(T) <= 8, "shuffled values are at most 8 bytes");
    uint64_t bits = 0;
    memcpy(&bits, &v, sizeof(T));
    bits = exchange(bits, src);
    T out;
    memcpy(&out, &bits, sizeof(T));
    return out;
}

// counters of the operations a launch performed, for the cost reports.
extern std::atomic<long long> atomicOps, barrierOps, shuffleOps;

} // namespace jh

#define __global__
#define __device__ static inline
#define __host__
#define __forceinline__ /* __device__ is static inline already */
#define __restrict__ __restrict
#define __shared__ static
#define __launch_bounds__(...)

#define threadIdx (jh::cur->tid)
#define blockIdx (jh::cur->bid)
#define blockDim (jh::launchBlockDim)
#define gridDim (jh::launchGridDim)
#define warpSize 32

static inline void __syncthreads() { jh::syncthreads(); }

template <typename T> static inline T __shfl_sync(unsigned, T v, int src, int = 32) {
    return jh::shfl(v, src);
}
template <typename T> static inline T __shfl_down_sync(unsigned, T v, unsigned d, int = 32) {
    int src = (int)jh::cur->lane + (int)d;
    return jh::shfl(v, src < 32 ? src : -1);
}
template <typename T> static inline T __shfl_up_sync(unsigned, T v, unsigned d, int = 32) {
    int src = (int)jh::cur->lane - (int)d;
    return jh::shfl(v, src);
}
template <typename T> static inline T __shfl_xor_sync(unsigned, T v, int m, int = 32) {
    return jh::shfl(v, (int)(jh::cur->lane ^ (unsigned)m));
}

// Atomics: relaxed read-modify-writes, as CUDA's.
template <typename T> static inline T atomicAdd(T *p, T v) {
    jh::atomicOps.fetch_add(1, std::memory_order_relaxed);
    if constexpr (std::is_integral_v<T>) {
        return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
    } else {
        T old, next;
        __atomic_load(p, &old, __ATOMIC_RELAXED);
        do {
            next = old + v;
        } while (!__atomic_compare_exchange(p, &old, &next, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
        return old;
    }
}
template <typename T> static inline T atomicMax(T *p, T v) {
    jh::atomicOps.fetch_add(1, std::memory_order_relaxed);
    T old = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (old < v && !__atomic_compare_exchange_n(p, &old, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
    return old;
}
template <typename T> static inline T atomicExch(T *p, T v) {
    jh::atomicOps.fetch_add(1, std::memory_order_relaxed);
    return __atomic_exchange_n(p, v, __ATOMIC_RELAXED);
}

// Math intrinsics: the fast versions are the exact ones on the CPU (glibc
// declares __expf and __logf itself).
static inline float __fdividef(float x, float y) { return x / y; }
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }

#endif
