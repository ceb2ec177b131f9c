package cbmm

// Traffic is the device memory traffic of one iteration of the cBMM passes
// per observed cell, in bytes, as the layout stores the cells (the table "cBMM:
// bytes per cell of each pass" of docs/gpu.md, which TestTraffic checks
// against this): pass A (item-major, cbmm_item_pass_rR) streams the cell's
// entry and writes its ỹ; pass B (model-major, cbmm_model_pass_rR) streams
// the model-major entry (item and cell index) and gathers ỹ, of which a
// whole 32-byte sector is read for the 8 bytes it uses. θ, a and b stay in
// L2 and are not counted. The figures do not depend on the rank.
type Traffic struct {
	A, B int
}

// sector is the DRAM access granularity of NVIDIA GPUs since Volta.
const sector = 32

// IterationTraffic is the traffic of one iteration over the layout's arrays.
func IterationTraffic() Traffic {
	const cellEntry, yTilde, modelItem, modelCell = 4, 8, 4, 4
	return Traffic{A: cellEntry + yTilde, B: modelItem + modelCell + sector}
}

// PerCell is the iteration's bytes per observed cell.
func (t Traffic) PerCell() int { return t.A + t.B }
