// launch.cpp: the CPU launcher for kernels compiled with cuda_host.h.
//
// A launch runs the grid's blocks one after another (so a kernel's static
// __shared__ arrays are the running block's shared memory). Every CUDA thread
// of the block is either an OS thread (JH_THREADS: real concurrency, what
// ThreadSanitizer checks) or a fiber on the calling thread, switched only at
// barriers (JH_FIBERS: the same barrier semantics, fast enough for numeric
// tests on a small machine).
#include <stdio.h>
#include <stdlib.h>
#include <setjmp.h>
#include <ucontext.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cuda_host.h"
#include "harness.h"
#include "registry.h"

namespace jh {

thread_local Thread *cur;
uint3 launchBlockDim, launchGridDim;
std::atomic<long long> atomicOps, barrierOps, shuffleOps;
static std::atomic<long long> launches;

static int mode; // of the launch in progress

// fiberYield returns to the fiber scheduler of the launching thread.
static void fiberYield();

// Barrier is a reusable barrier across `expected` threads; a thread that
// leaves (returns from the kernel) stops counting.
struct Barrier {
    int expected = 0, arrived = 0;
    unsigned gen = 0;
    std::mutex mu;
    std::condition_variable cv;

    void reset(int n) {
        expected = n;
        arrived = 0;
    }
    void wait() {
        if (mode == JH_FIBERS) {
            unsigned g = gen;
            if (++arrived == expected) {
                arrived = 0;
                gen++;
                return;
            }
            while (gen == g) fiberYield();
            return;
        }
        std::unique_lock<std::mutex> l(mu);
        unsigned g = gen;
        if (++arrived == expected) {
            arrived = 0;
            gen++;
            cv.notify_all();
            return;
        }
        cv.wait(l, [&] { return gen != g; });
    }
    void leave() {
        std::unique_lock<std::mutex> l(mu, std::defer_lock);
        if (mode == JH_THREADS) l.lock();
        expected--;
        if (arrived > 0 && arrived == expected) {
            arrived = 0;
            gen++;
            if (mode == JH_THREADS) cv.notify_all();
        }
    }
};

struct Warp {
    uint64_t slot[32];
    Barrier bar;
};

struct Block {
    Barrier bar;
};

void syncthreads() {
    barrierOps.fetch_add(1, std::memory_order_relaxed);
    cur->block->bar.wait();
}

uint64_t exchange(uint64_t v, int src) {
    shuffleOps.fetch_add(1, std::memory_order_relaxed);
    Warp *w = cur->warp;
    w->slot[cur->lane] = v;
    w->bar.wait();
    uint64_t r = (src >= 0 && src < 32) ? w->slot[src] : v;
    w->bar.wait();
    return r;
}

static std::vector<Kernel> &registry() {
    static std::vector<Kernel> r;
    return r;
}

void registerKernel(const Kernel &k) { registry().push_back(k); }

// The launch in progress (one at a time: the static shared memory is global).
static std::mutex launchMu;

struct Launch {
    const Kernel *k;
    const uint64_t *args;
    uint3 grid, block;
    int n;  // threads per block
    int nw; // warps per block
    Block blk;
    std::unique_ptr<Warp[]> warps;
    std::vector<Thread> threads;

    void resetBarriers() {
        blk.bar.reset(n);
        for (int w = 0; w < nw; w++) warps[w].bar.reset(w < nw - 1 ? 32 : n - 32 * (nw - 1));
    }
    void setBlock(long long b) {
        uint3 bi{(unsigned)(b % grid.x), (unsigned)(b / grid.x % grid.y), (unsigned)(b / grid.x / grid.y)};
        for (Thread &t : threads) t.bid = bi;
    }
    // runThread is CUDA thread t's part of the current block.
    void runThread(int t) {
        cur = &threads[t];
        k->call(k->fn, args);
        cur->warp->bar.leave();
        cur->block->bar.leave();
        cur = nullptr;
    }
};

// Fibers: the scheduler on the launching thread runs each fiber until it
// waits at a barrier or finishes its part of the block. A fiber starts once
// per launch (ucontext, on a stack of its own) and then loops over the blocks;
// switches are _setjmp/_longjmp, which do not touch the signal mask.
struct Fiber {
    ucontext_t ctx;
    jmp_buf jb;
    bool done, started;
};
static thread_local jmp_buf schedJmp;
static thread_local ucontext_t schedCtx;
static thread_local Fiber *curFiber;
static thread_local Launch *fiberLaunch;
static thread_local int fiberIndex;

static void fiberYield() {
    Thread *me = cur;
    if (_setjmp(curFiber->jb) == 0) _longjmp(schedJmp, 1);
    cur = me; // other fibers ran meanwhile
}

static void fiberMain() {
    int t = fiberIndex;
    for (;;) {
        fiberLaunch->runThread(t);
        curFiber->done = true;
        fiberYield(); // the scheduler resumes it for the next block, or never
    }
}

static const size_t fiberStack = 64 << 10;

static void runFibers(Launch &L, long long blocks) {
    std::vector<Fiber> fibers(L.n);
    std::unique_ptr<char[]> stacks(new char[fiberStack * L.n]);
    fiberLaunch = &L;
    for (long long b = 0; b < blocks; b++) {
        L.setBlock(b);
        L.resetBarriers();
        for (Fiber &f : fibers) f.done = false;
        for (int live = L.n; live > 0;) {
            live = 0;
            for (int t = 0; t < L.n; t++) {
                Fiber &f = fibers[t];
                if (f.done) continue;
                curFiber = &f;
                fiberIndex = t;
                if (_setjmp(schedJmp) == 0) {
                    if (!f.started) {
                        f.started = true;
                        getcontext(&f.ctx);
                        f.ctx.uc_stack.ss_sp = stacks.get() + fiberStack * t;
                        f.ctx.uc_stack.ss_size = fiberStack;
                        f.ctx.uc_link = nullptr;
                        makecontext(&f.ctx, fiberMain, 0);
                        swapcontext(&schedCtx, &f.ctx); // never returns here: the fiber longjmps back
                    }
                    _longjmp(f.jb, 1);
                }
                live += !f.done;
            }
        }
    }
    curFiber = nullptr;
    fiberLaunch = nullptr;
}

static void runThreads(Launch &L, long long blocks) {
    Barrier step; // between blocks, across all threads
    step.reset(L.n);
    std::vector<std::thread> ts;
    ts.reserve(L.n);
    L.resetBarriers();
    L.setBlock(0);
    for (int t = 0; t < L.n; t++) {
        ts.emplace_back([&L, &step, t, blocks] {
            for (long long b = 0; b < blocks; b++) {
                L.runThread(t);
                step.wait();
                if (t == 0 && b + 1 < blocks) {
                    L.resetBarriers();
                    L.setBlock(b + 1);
                }
                step.wait();
            }
        });
    }
    for (auto &t : ts) t.join();
}

// sm_90's limits (CUDA C Programming Guide, table 21, compute capability 9.0).
static const long long maxThreadsPerBlock = 1024, maxBlockX = 1024, maxBlockY = 1024, maxBlockZ = 64;
static const long long maxGridX = 2147483647LL, maxGridYZ = 65535;
static const long long maxStaticShared = 48 << 10;

static int fail(char *err, int errLen, const std::string &msg) {
    if (errLen > 0) snprintf(err, errLen, "%s", msg.c_str());
    return -1;
}

} // namespace jh

using namespace jh;

extern "C" int jh_kernel_count(void) { return (int)registry().size(); }
extern "C" const char *jh_kernel_name(int k) { return registry()[k].name; }
extern "C" const char *jh_kernel_args(int k) { return registry()[k].args; }
extern "C" int jh_kernel_find(const char *name) {
    for (size_t k = 0; k < registry().size(); k++)
        if (strcmp(registry()[k].name, name) == 0) return (int)k;
    return -1;
}

extern "C" int jh_check_launch(jh_dim grid, jh_dim block, long long staticShared, long long dynShared, char *err,
                               int errLen) {
    char buf[256];
    long long threads = (long long)block.x * block.y * block.z;
    const char *why = nullptr;
    long long got = 0, limit = 0;
    if (grid.x < 1 || grid.y < 1 || grid.z < 1 || block.x < 1 || block.y < 1 || block.z < 1) why = "an empty grid or block";
    else if (block.x > maxBlockX) why = "blockDim.x", got = block.x, limit = maxBlockX;
    else if (block.y > maxBlockY) why = "blockDim.y", got = block.y, limit = maxBlockY;
    else if (block.z > maxBlockZ) why = "blockDim.z", got = block.z, limit = maxBlockZ;
    else if (threads > maxThreadsPerBlock) why = "threads per block", got = threads, limit = maxThreadsPerBlock;
    else if (grid.x > maxGridX) why = "gridDim.x", got = grid.x, limit = maxGridX;
    else if (grid.y > maxGridYZ) why = "gridDim.y", got = grid.y, limit = maxGridYZ;
    else if (grid.z > maxGridYZ) why = "gridDim.z", got = grid.z, limit = maxGridYZ;
    else if (staticShared + dynShared > maxStaticShared)
        why = "shared memory bytes per block (without opting in)", got = staticShared + dynShared, limit = maxStaticShared;
    if (!why) return 0;
    if (limit == 0) snprintf(buf, sizeof buf, "%s", why);
    else snprintf(buf, sizeof buf, "%s %lld is over sm_90's limit of %lld", why, got, limit);
    return fail(err, errLen, buf);
}

extern "C" int jh_launch(int k, jh_dim grid, jh_dim block, long long staticShared, const uint64_t *args, int nargs,
                         int m, char *err, int errLen) {
    if (k < 0 || k >= (int)registry().size()) return fail(err, errLen, "no such kernel");
    const Kernel &K = registry()[k];
    if (nargs != K.nargs)
        return fail(err, errLen, std::string(K.name) + " takes " + std::to_string(K.nargs) + " arguments, got " +
                                     std::to_string(nargs));
    if (jh_check_launch(grid, block, staticShared, 0, err, errLen) != 0) return -1;
    std::lock_guard<std::mutex> g(launchMu);
    launches.fetch_add(1);
    Launch L;
    L.k = &K;
    L.args = args;
    L.grid = uint3{grid.x, grid.y, grid.z};
    L.block = uint3{block.x, block.y, block.z};
    L.n = (int)(block.x * block.y * block.z);
    L.nw = (L.n + 31) / 32;
    L.warps.reset(new Warp[L.nw]);
    L.threads.resize(L.n);
    for (int t = 0; t < L.n; t++) {
        Thread &th = L.threads[t];
        th.tid = uint3{(unsigned)(t % block.x), (unsigned)(t / block.x % block.y), (unsigned)(t / block.x / block.y)};
        th.lane = t % 32;
        th.warp = &L.warps[t / 32];
        th.block = &L.blk;
    }
    launchGridDim = L.grid;
    launchBlockDim = L.block;
    mode = m;
    long long blocks = (long long)grid.x * grid.y * grid.z;
    if (m == JH_THREADS) runThreads(L, blocks);
    else runFibers(L, blocks);
    return 0;
}

extern "C" void jh_counters(long long *l, long long *a, long long *b, long long *s) {
    *l = launches.load();
    *a = atomicOps.load();
    *b = barrierOps.load();
    *s = shuffleOps.load();
}
