//go:build cgo

// libcublas through dlopen: jeirt-cuda links only the driver's libcuda.so.1
// and finds libcublas at run time (cublas_find.go says where it looks), so it
// still starts where cuBLAS is missing. This file needs no CUDA header or
// driver, so the default build's tests load a real libcublas with it on a
// machine without a GPU; making handles and products (cublas.go) needs one.

package cublasdl

/*
#cgo LDFLAGS: -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>
#include <stdint.h>
#include <stdio.h>

typedef int (*jc_create_fn)(void **);
typedef int (*jc_math_fn)(void *, int);
typedef int (*jc_sgemm_fn)(void *, int, int, int, int, int, const float *, const float *, int, const float *,
                           int, const float *, float *, int);
// cublasGemmEx (cuBLAS 11 to 13): the data types (cudaDataType_t), compute
// type (cublasComputeType_t) and algorithm are ints.
typedef int (*jc_gemmex_fn)(void *, int, int, int, int, int, const void *, const void *, int, int, const void *,
                            int, int, const void *, void *, int, int, int, int);

typedef int (*jc_destroy_fn)(void *);
typedef int (*jc_version_fn)(void *, int *);

static void *jc_lib, *jc_lt;
static jc_create_fn jc_create_p;
static jc_destroy_fn jc_destroy_p;
static jc_version_fn jc_version_p;
static jc_math_fn jc_math_p;
static jc_sgemm_fn jc_sgemm_p;
static jc_gemmex_fn jc_gemmex_p;

static void jc_close(void) {
	if (jc_lib) dlclose(jc_lib);
	if (jc_lt) dlclose(jc_lt);
	jc_lib = jc_lt = 0;
	jc_create_p = 0;
}

// jc_open loads one candidate (cublas_find.go): path, a bare soname or a
// file, after lt (the libcublasLt beside it, or "") so that the loader finds
// libcublas's dependency in a folder off the library path.
static int jc_open(const char *path, const char *lt, char *err, int n) {
	jc_close();
	if (lt[0]) jc_lt = dlopen(lt, RTLD_NOW | RTLD_GLOBAL);
	jc_lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!jc_lib) {
		const char *e = dlerror();
		snprintf(err, n, "%s", e ? e : "dlopen failed");
		jc_close();
		return -1;
	}
	jc_create_p = (jc_create_fn)dlsym(jc_lib, "cublasCreate_v2");
	jc_destroy_p = (jc_destroy_fn)dlsym(jc_lib, "cublasDestroy_v2");
	jc_version_p = (jc_version_fn)dlsym(jc_lib, "cublasGetVersion_v2");
	jc_math_p = (jc_math_fn)dlsym(jc_lib, "cublasSetMathMode");
	jc_sgemm_p = (jc_sgemm_fn)dlsym(jc_lib, "cublasSgemm_v2");
	jc_gemmex_p = (jc_gemmex_fn)dlsym(jc_lib, "cublasGemmEx");
	if (!jc_create_p || !jc_destroy_p || !jc_version_p || !jc_math_p || !jc_sgemm_p || !jc_gemmex_p) {
		snprintf(err, n, "lacks cublasCreate_v2, cublasDestroy_v2, cublasGetVersion_v2, cublasSetMathMode, cublasSgemm_v2 or cublasGemmEx");
		jc_close();
		return -1;
	}
	return 0;
}

// jc_where writes the file the loader opened for the loaded library.
static void jc_where(char *out, int n) {
	struct link_map *m = 0;
	out[0] = 0;
	if (jc_lib && dlinfo(jc_lib, RTLD_DI_LINKMAP, &m) == 0 && m && m->l_name) snprintf(out, n, "%s", m->l_name);
}

// jc_probe makes a handle on the current context, reads the library's
// version (major·10000 + minor·100 + patch since cuBLAS 11) and drops the
// handle: a library that loads but cannot run on this driver fails here.
static int jc_probe(int *version) {
	void *p = 0;
	int rc = jc_create_p(&p);
	if (rc != 0) return rc;
	rc = jc_version_p(p, version);
	jc_destroy_p(p);
	return rc;
}

// jc_create makes a handle on the current context, in CUBLAS_DEFAULT_MATH
// (0): float32 products stay float32, no TF32.
static int jc_create(uintptr_t *h) {
	void *p = 0;
	int rc = jc_create_p(&p);
	if (rc != 0) return rc;
	*h = (uintptr_t)p;
	return jc_math_p(p, 0);
}

// jc_linear: y (n x out, row-major) = x (n x in) · wᵀ (w out x in). In
// cuBLAS's column-major terms y is out x n = op(w) · x with w read as the
// in x out matrix it is column-major, transposed.
static int jc_linear(uintptr_t h, uint64_t y, uint64_t x, uint64_t w, int n, int out, int in) {
	float one = 1, zero = 0;
	return jc_sgemm_p((void *)h, 1, 0, out, n, in, &one, (const float *)w, in, (const float *)x, in, &zero,
	                  (float *)y, out);
}

// jc_linear_ex is jc_linear through cublasGemmEx: x and w of data type ab
// (CUDA_R_32F = 0 or CUDA_R_16BF = 14), y float32 (CUDA_R_32F), float
// scalars, compute type compute (CUBLAS_COMPUTE_32F = 68 or
// CUBLAS_COMPUTE_32F_FAST_TF32 = 77), algorithm CUBLAS_GEMM_DEFAULT (-1).
static int jc_linear_ex(uintptr_t h, uint64_t y, uint64_t x, uint64_t w, int n, int out, int in, int ab,
                        int compute) {
	float one = 1, zero = 0;
	return jc_gemmex_p((void *)h, 1, 0, out, n, in, &one, (const void *)w, ab, in, (const void *)x, ab, in, &zero,
	                   (void *)y, 0, out, compute, -1);
}
*/
import "C"

import (
	"errors"
	"unsafe"
)

// inUse is set once the GPU's products have loaded the library (MarkInUse):
// from then on nothing may replace it.
var inUse bool

// MarkInUse says the library loaded last is the one the GPU's products use
// (package cuda's loadCuBLAS calls it).
func MarkInUse() { inUse = true }

// Open loads candidate c (its libcublasLt first, when it has one)
// and resolves the functions jeirt calls, replacing what was loaded before.
func Open(c Candidate) error {
	path, lt := C.CString(c.Path), C.CString(c.Lt)
	defer C.free(unsafe.Pointer(path))
	defer C.free(unsafe.Pointer(lt))
	var buf [1024]C.char
	if C.jc_open(path, lt, &buf[0], C.int(len(buf))) != 0 {
		return errors.New(C.GoString(&buf[0]))
	}
	return nil
}

// Close unloads the library Open loaded.
func Close() { C.jc_close() }

// Where is the file the loader opened for the loaded library ("" for none).
func Where() string {
	var buf [4096]C.char
	C.jc_where(&buf[0], C.int(len(buf)))
	return C.GoString(&buf[0])
}

// Probe makes and drops a handle on the current context: the library's
// version, or the status of cublasCreate.
func Probe() (version, status int) {
	var v C.int
	rc := C.jc_probe(&v)
	return int(v), int(rc)
}

// Create makes a handle on the current context in CUBLAS_DEFAULT_MATH.
func Create() (uintptr, int) {
	var h C.uintptr_t
	rc := C.jc_create(&h)
	return uintptr(h), int(rc)
}

// Sgemm is jc_linear: y (n x out) = x (n x in) · wᵀ, float32, on handle h.
func Sgemm(h uintptr, y, x, w uint64, n, out, in int) int {
	return int(C.jc_linear(C.uintptr_t(h), C.uint64_t(y), C.uint64_t(x), C.uint64_t(w), C.int(n), C.int(out), C.int(in)))
}

// GemmEx is jc_linear_ex: the same product through cublasGemmEx with
// inputs of data type ab and compute type compute.
func GemmEx(h uintptr, y, x, w uint64, n, out, in, ab, compute int) int {
	return int(C.jc_linear_ex(C.uintptr_t(h), C.uint64_t(y), C.uint64_t(x), C.uint64_t(w), C.int(n), C.int(out), C.int(in),
		C.int(ab), C.int(compute)))
}
