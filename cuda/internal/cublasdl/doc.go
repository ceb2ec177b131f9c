// Package cublasdl finds libcublas at run time and calls it through dlopen,
// so that jeirt-cuda links only the driver's libcuda.so.1 and still starts
// where cuBLAS is missing; it needs no CUDA header, driver or GPU.
package cublasdl
