package cuda

import (
	"fmt"
	"math"
	"sync"
	"unsafe"

	"github.com/jeirt/jeirt/train/backend"
)

// emuGPU is a gpu in host memory whose kernels are Go ports of
// kernels/*.cu. Running the real batch and stepper code on it tests, without
// a GPU, everything above the kernels: buffer sizes and offsets, argument
// order and types, grid sizes (a kernel that is launched with too few threads
// leaves its output short and the agreement tests fail), the host solves and
// the order of launches and copies. Out-of-bounds copies and accesses panic.
type emuGPU struct {
	mu       sync.Mutex
	mem      map[int][]uint64 // allocation i is handle (i << 40) + byte offset
	next     int
	capacity int64 // bytes; 0: unlimited
	used     int64
	launches map[string]int
}

func newEmuGPU() *emuGPU {
	return &emuGPU{mem: map[int][]uint64{}, next: 1, launches: map[string]int{}}
}

func (e *emuGPU) name() string { return "emulated GPU" }

func (e *emuGPU) do(f func() error) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return f()
}

func (e *emuGPU) alloc(what string, n int64) (handle, error) {
	if e.capacity > 0 && e.used+n > e.capacity {
		return 0, fmt.Errorf("%w: allocating %s (%s) on %s, %s free of %s", ErrOutOfMemory, what, mib(n), e.name(), mib(e.capacity-e.used), mib(e.capacity))
	}
	e.used += n
	e.mem[e.next] = make([]uint64, (n+7)/8)
	h := handle(e.next) << 40
	e.next++
	return h, nil
}

func (e *emuGPU) free(h handle) error {
	i := int(h >> 40)
	b, ok := e.mem[i]
	if !ok || h&(1<<40-1) != 0 {
		return fmt.Errorf("emu: freeing %#x, which is not an allocation", h)
	}
	e.used -= 8 * int64(len(b))
	delete(e.mem, i)
	return nil
}

func (e *emuGPU) checkFree(what string, need int64) error {
	if e.capacity > 0 && need > e.capacity-e.used {
		return fmt.Errorf("%w: %s needs %s on %s, %s free of %s", ErrOutOfMemory, what, mib(need), e.name(), mib(e.capacity-e.used), mib(e.capacity))
	}
	return nil
}

// bytes returns the memory from h to the end of its allocation (nil for 0).
func (e *emuGPU) bytes(h handle) []byte {
	if h == 0 {
		return nil
	}
	b, ok := e.mem[int(h>>40)]
	if !ok {
		panic(fmt.Sprintf("emu: %#x is not in an allocation", h))
	}
	all := unsafe.Slice((*byte)(unsafe.Pointer(&b[0])), 8*len(b))
	return all[h&(1<<40-1):]
}

func view[T any](e *emuGPU, h handle) []T {
	b := e.bytes(h)
	if b == nil {
		return nil
	}
	var z T
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), len(b)/int(unsafe.Sizeof(z)))
}

func (e *emuGPU) htod(dst handle, src any) error {
	p, n := sliceBytes(src)
	if n == 0 {
		return nil
	}
	copy(e.bytes(dst)[:n], unsafe.Slice((*byte)(p), n))
	return nil
}

func (e *emuGPU) dtoh(dst any, src handle) error {
	p, n := sliceBytes(dst)
	if n == 0 {
		return nil
	}
	copy(unsafe.Slice((*byte)(p), n), e.bytes(src)[:n])
	return nil
}

func (e *emuGPU) memset0(h handle, n int64) error {
	clear(e.bytes(h)[:4*n])
	return nil
}

// emuArgs is the number of arguments of each kernel (TestPTXExportsKernels
// checks it against the .cu sources).
var emuArgs = map[string]int{"cbmm_item_pass": 14, "cbmm_model_pass": 12, "cbmm_sum_loss": 5, "sgemm": 10, "set_rows": 4,
	"relu_mask": 4, "add_rows": 5, "pair_link": 11, "residual_grad": 8, "col_sum": 4, "relu_back": 4, "adamw": 11}

// args reads kernel arguments with the types the kernel expects.
type args []any

func (a args) h(i int) handle {
	if v, ok := a[i].(handle); ok {
		return v
	}
	panic(fmt.Sprintf("emu: argument %d is a %T, the kernel takes a pointer", i, a[i]))
}

func (a args) i(i int) int {
	switch v := a[i].(type) {
	case int:
		return v
	case bool:
		if v {
			return 1
		}
		return 0
	}
	panic(fmt.Sprintf("emu: argument %d is a %T, the kernel takes a long long", i, a[i]))
}

func (a args) f(i int) float64 {
	if v, ok := a[i].(float64); ok {
		return v
	}
	panic(fmt.Sprintf("emu: argument %d is a %T, the kernel takes a double", i, a[i]))
}

func (e *emuGPU) launch(name string, gridX, gridY, block int, arg ...any) error {
	if block < 32 || block > 1024 || block%32 != 0 {
		return fmt.Errorf("%w: launching %s (grid %d x %d, %d threads) on %s: block size", ErrLaunch, name, gridX, gridY, block, e.name())
	}
	e.launches[name]++
	a := args(arg)
	if n, ok := emuArgs[name]; !ok || n != len(a) {
		return fmt.Errorf("emu: kernel %s with %d arguments", name, len(a))
	}
	threads := gridX * gridY * block
	switch name {
	case "cbmm_item_pass":
		e.cbmmItemPass(a, gridX)
	case "cbmm_model_pass":
		e.cbmmModelPass(a, gridX)
	case "cbmm_sum_loss":
		loss, base, active, out, K := view[float64](e, a.h(0)), view[int64](e, a.h(1)), view[uint8](e, a.h(2)), view[float64](e, a.h(3)), a.i(4)
		for k := 0; k < gridX && k < K; k++ {
			if active[k] != 0 {
				s := 0.0
				for g := base[k]; g < base[k+1]; g++ {
					s += loss[g]
				}
				out[k] = s
			}
		}
	case "sgemm":
		if block != 256 {
			return fmt.Errorf("emu: sgemm with %d threads, the kernel needs 256", block)
		}
		e.sgemm(a, gridX, gridY)
	case "set_rows":
		C, bias, rows, cols := view[float32](e, a.h(0)), view[float32](e, a.h(1)), a.i(2), a.i(3)
		for k := 0; k < threads && k < rows*cols; k++ {
			C[k] = bias[k%cols]
		}
	case "relu_mask":
		x, mask, h, n := view[float32](e, a.h(0)), view[float32](e, a.h(1)), view[float32](e, a.h(2)), a.i(3)
		for k := 0; k < threads && k < n; k++ {
			v := max(x[k], 0)
			if mask != nil {
				v *= mask[k]
			}
			h[k] = v
		}
	case "add_rows":
		q, R, item, rows, d := view[float32](e, a.h(0)), view[float32](e, a.h(1)), view[int32](e, a.h(2)), a.i(3), a.i(4)
		for k := 0; k < threads && k < rows*d; k++ {
			q[k] += R[int(item[k/d])*d+k%d]
		}
	case "pair_link":
		e.pairLink(a, threads/32)
	case "residual_grad":
		gq, R, item, coef, gR, pen, rows, d := view[float32](e, a.h(0)), view[float32](e, a.h(1)), view[int32](e, a.h(2)),
			view[float32](e, a.h(3)), view[float32](e, a.h(4)), view[float64](e, a.h(5)), a.i(6), a.i(7)
		for u := 0; u < threads/32 && u < rows; u++ {
			j, w := int(item[u]), coef[u]
			ss := 0.0
			for c := 0; c < d; c++ {
				r := R[j*d+c]
				ss += float64(r) * float64(r)
				g := gq[u*d+c]
				if w > 0 {
					g += 2 * w * r
				}
				gR[j*d+c] += g
			}
			pen[u] = 0
			if w > 0 {
				pen[u] = float64(w) * ss
			}
		}
	case "col_sum":
		X, out, rows, cols := view[float32](e, a.h(0)), view[float32](e, a.h(1)), a.i(2), a.i(3)
		for c := 0; c < threads && c < cols; c++ {
			var s float32
			for u := 0; u < rows; u++ {
				s += X[u*cols+c]
			}
			out[c] = s
		}
	case "relu_back":
		x, mask, gh, n := view[float32](e, a.h(0)), view[float32](e, a.h(1)), view[float32](e, a.h(2)), a.i(3)
		for k := 0; k < threads && k < n; k++ {
			if x[k] <= 0 {
				gh[k] = 0
			} else if mask != nil {
				gh[k] *= mask[k]
			}
		}
	case "adamw":
		p, g, m, v, n := view[float32](e, a.h(0)), view[float32](e, a.h(1)), view[float32](e, a.h(2)), view[float32](e, a.h(3)), a.i(4)
		decay, b1, b2, step, isb, eps := float32(a.f(5)), float32(a.f(6)), float32(a.f(7)), float32(a.f(8)), float32(a.f(9)), float32(a.f(10))
		for k := 0; k < threads && k < n; k++ {
			mk := b1*m[k] + (1-b1)*g[k]
			vk := b2*v[k] + (1-b2)*g[k]*g[k]
			m[k], v[k] = mk, vk
			p[k] = p[k]*decay - step*mk/(float32(math.Sqrt(float64(vk)))*isb+eps)
		}
	}
	return nil
}

// cbmmItemPass ports cbmm_item_pass: block g handles global item g.
func (e *emuGPU) cbmmItemPass(a args, grid int) {
	cells, itemStart, itemProb, active := view[uint32](e, a.h(0)), view[int64](e, a.h(1)), view[int32](e, a.h(2)), view[uint8](e, a.h(3))
	theta, A, B, yTilde, itemLoss, itemG := view[float64](e, a.h(4)), view[float64](e, a.h(5)), view[float64](e, a.h(6)),
		view[float64](e, a.h(7)), view[float64](e, a.h(8)), view[float64](e, a.h(9))
	numItems, r, sigma, update := a.i(10), a.i(11), a.f(12), a.i(13) != 0
	inv, four := 1/sigma, 4*sigma
	for g := 0; g < grid && g < numItems; g++ {
		if active[itemProb[g]] == 0 {
			continue
		}
		lo, hi := itemStart[g], itemStart[g+1]
		loss := 0.0
		if r == 1 {
			aj, bj := A[g], B[g]
			var st, stt, sy, sty float64
			for k := lo; k < hi; k++ {
				th := theta[cells[k]>>1]
				x := th*aj + bj
				y := float64(cells[k]&1)*2 - 1
				sp, sg := softplusSigmoid(-y * x * inv)
				loss += sp
				if update {
					v := x + four*y*sg
					yTilde[k] = v
					st, stt, sy, sty = st+th, stt+th*th, sy+v, sty+th*v
				}
			}
			itemLoss[g] = loss
			if update && hi > lo {
				A[g], B[g] = backend.ItemSolve1(float64(hi-lo), st, stt, sy, sty, aj)
			}
			continue
		}
		m, E := r+1, itemEntries(r)
		acc := make([]float64, E)
		u := make([]float64, m)
		for k := lo; k < hi; k++ {
			x := B[g]
			for d := 0; d < r; d++ {
				u[d] = theta[int(cells[k]>>1)*r+d]
				x += u[d] * A[g*r+d]
			}
			u[r] = 1
			y := float64(cells[k]&1)*2 - 1
			sp, sg := softplusSigmoid(-y * x * inv)
			loss += sp
			if update {
				v := x + four*y*sg
				yTilde[k] = v
				addNormal(acc, u, v)
			}
		}
		itemLoss[g] = loss
		if update {
			copy(itemG[g*E:(g+1)*E], acc)
		}
	}
}

// addNormal adds one observation (x, y) to packed normal equations, in the
// kernels' layout: the lower triangle of x xᵀ row by row, then x·y.
func addNormal(acc, x []float64, y float64) {
	q := 0
	for d1 := range x {
		for d2 := 0; d2 <= d1; d2++ {
			acc[q] += x[d1] * x[d2]
			q++
		}
	}
	for d := range x {
		acc[q] += x[d] * y
		q++
	}
}

// cbmmModelPass ports cbmm_model_pass: block i handles global model i.
func (e *emuGPU) cbmmModelPass(a args, grid int) {
	modelStart, modelCell, modelItem, modelProb, active := view[int64](e, a.h(0)), view[uint32](e, a.h(1)), view[uint32](e, a.h(2)),
		view[int32](e, a.h(3)), view[uint8](e, a.h(4))
	A, B, yTilde, theta, modelG := view[float64](e, a.h(5)), view[float64](e, a.h(6)), view[float64](e, a.h(7)), view[float64](e, a.h(8)), view[float64](e, a.h(9))
	numModels, r := a.i(10), a.i(11)
	for i := 0; i < grid && i < numModels; i++ {
		if active[modelProb[i]] == 0 {
			continue
		}
		lo, hi := modelStart[i], modelStart[i+1]
		if r == 1 {
			var den, num float64
			for x := lo; x < hi; x++ {
				j := modelItem[x]
				den += A[j] * A[j]
				num += A[j] * (yTilde[modelCell[x]] - B[j])
			}
			if den > 0 {
				theta[i] = num / den
			}
			continue
		}
		E := modelEntries(r)
		acc := make([]float64, E)
		for x := lo; x < hi; x++ {
			j := int(modelItem[x])
			aj := A[j*r : j*r+r]
			addNormal(acc, aj, yTilde[modelCell[x]]-B[j])
		}
		copy(modelG[i*E:(i+1)*E], acc)
	}
}

// sgemm ports the tiled kernel: block (bx, by) computes the 64 x 64 tile of C
// at rows 64·by, columns 64·bx, accumulating over k in order in float32.
func (e *emuGPU) sgemm(a args, gridX, gridY int) {
	A, B, C := view[float32](e, a.h(0)), view[float32](e, a.h(1)), view[float32](e, a.h(2))
	M, N, K, tA, tB := a.i(3), a.i(4), a.i(5), a.i(6) != 0, a.i(7) != 0
	alpha, beta := float32(a.f(8)), float32(a.f(9))
	for by := 0; by < gridY; by++ {
		for bx := 0; bx < gridX; bx++ {
			for i := 64 * by; i < min(64*by+64, M); i++ {
				for j := 64 * bx; j < min(64*bx+64, N); j++ {
					var s float32
					for k := 0; k < K; k++ {
						av, bv := A[i*K+k], B[k*N+j]
						if tA {
							av = A[k*M+i]
						}
						if tB {
							bv = B[j*K+k]
						}
						s += av * bv
					}
					c := alpha * s
					if beta != 0 {
						c += beta * C[i*N+j]
					}
					C[i*N+j] = c
				}
			}
		}
	}
}

// pairLink ports pair_link: warp k handles pair k.
func (e *emuGPU) pairLink(a args, warps int) {
	q, M, row, model, label := view[float32](e, a.h(0)), view[float32](e, a.h(1)), view[int32](e, a.h(2)), view[int32](e, a.h(3)), view[float32](e, a.h(4))
	loss, gq, gM := view[float64](e, a.h(5)), view[float32](e, a.h(6)), view[float32](e, a.h(7))
	B, d, invB := a.i(8), a.i(9), a.f(10)
	for k := 0; k < warps && k < B; k++ {
		u, i := int(row[k]), int(model[k])
		qu, mi := q[u*d:(u+1)*d], M[i*d:(i+1)*d]
		var dot, ss float64
		for c := range qu {
			dot += float64(qu[c]) * float64(mi[c])
			ss += float64(qu[c]) * float64(qu[c])
		}
		n := math.Sqrt(ss)
		z := dot/(n+1e-8) - n
		y := float64(label[k])
		var gz float64
		if z >= 0 {
			gz = 1 / (1 + math.Exp(-z))
		} else {
			ez := math.Exp(z)
			gz = ez / (1 + ez)
		}
		gz = (gz - y) * invB
		loss[k] = math.Max(z, 0) - y*z + math.Log1p(math.Exp(-math.Abs(z)))
		sm := float32(gz / (n + 1e-8))
		var sq float32
		if n > 0 {
			sq = float32(-gz * (dot/(n*(n+1e-8)*(n+1e-8)) + 1/n))
		}
		for c := 0; c < d; c++ {
			gM[i*d+c] += sm * qu[c]
			gq[u*d+c] += sm*mi[c] + sq*qu[c]
		}
	}
}
