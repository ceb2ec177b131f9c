/* harness.h: the C interface of the CPU launcher for jeirt's CUDA kernels
 * (launch.cpp), used from Go (harness.go) and from the replay driver
 * (replay/replay.cpp). No CUDA header is needed. */
#ifndef JEIRT_HARNESS_H
#define JEIRT_HARNESS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    unsigned int x, y, z;
} jh_dim;

enum { JH_FIBERS = 0, JH_THREADS = 1 };

/* The registered kernels: name, number of arguments and one letter per
 * argument: f d i u b l (pointer to float, double, int, unsigned int,
 * unsigned char, long long; upper case F D I U B L for const pointers), or
 * s (a 64-bit integer scalar), x (a double scalar). */
int jh_kernel_count(void);
const char *jh_kernel_name(int k);
const char *jh_kernel_args(int k);
int jh_kernel_find(const char *name);

/* jh_check_launch returns 0 when a launch of grid x block threads with the
 * given static and dynamic shared memory fits sm_90's limits, else writes
 * why to err (at most errLen bytes) and returns -1. */
int jh_check_launch(jh_dim grid, jh_dim block, long long staticShared, long long dynShared, char *err,
                    int errLen);

/* jh_launch checks the launch, then runs kernel k on args (each 64 bits:
 * a pointer, a long long, or a double's bits) in mode JH_FIBERS or
 * JH_THREADS. It returns 0, or -1 with the reason in err. */
int jh_launch(int k, jh_dim grid, jh_dim block, long long staticShared, const uint64_t *args, int nargs,
              int mode, char *err, int errLen);

/* jh_counters reads the number of launches, atomic operations, block
 * barriers and warp shuffles (per thread) since the process started. */
void jh_counters(long long *launches, long long *atomics, long long *barriers, long long *shuffles);

#ifdef __cplusplus
}
#endif

#endif
