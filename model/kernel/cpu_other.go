//go:build !amd64

package kernel

func detectCPU() Level { return Go }

func opsFor(Level) *ops { return goOps }
