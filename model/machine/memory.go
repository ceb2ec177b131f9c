// Package machine says what the machine gives the process: its memory
// (SystemMemory, AvailableMemory, and the budget a run may ask for at once,
// MemoryBudget and CheckMemory), the process's CPU time (CPUSeconds), large
// slices backed by huge pages where the kernel allows (MakeLarge), and byte
// counts written for people (Bytes).
package machine

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/jeirt/jeirt/model"
)

// SystemMemory is the machine's memory in bytes (MemTotal of
// /proc/meminfo), or 0 where it cannot be read.
func SystemMemory() int64 { return meminfo("MemTotal:") }

// meminfo is the field key of /proc/meminfo in bytes, or 0.
func meminfo(key string) int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), key); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil || kb <= 0 {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

// AvailableMemory is the memory the machine can give a new allocation
// without swapping, in bytes (MemAvailable of /proc/meminfo), or 0 where it
// cannot be read.
func AvailableMemory() int64 { return meminfo("MemAvailable:") }

// MemoryBudget is the memory a run may ask for at once: max when it is
// positive (--max-memory), else the machine's available memory (else its
// total; else no limit).
func MemoryBudget(max int64) int64 {
	if max > 0 {
		return max
	}
	if m := AvailableMemory(); m > 0 {
		return m
	}
	if m := SystemMemory(); m > 0 {
		return m
	}
	return math.MaxInt64
}

// CheckMemory refuses an allocation of about need bytes, for what (for
// example "the parameter tables of model.dim 65536"), when it exceeds
// MemoryBudget(max), with the estimate in the error.
func CheckMemory(what string, need, max int64) error {
	budget := MemoryBudget(max)
	if need <= budget {
		return nil
	}
	from := "the machine's available memory"
	if max > 0 {
		from = "{MaxMemory}"
	}
	return model.FieldErrorf("MaxMemory", "%s would need about %s of memory, more than %s (%s); make it smaller or raise {MaxMemory}", what, Bytes(need), Bytes(budget), from)
}

// Bytes writes a byte count for people: "512 B", "3.0 KiB", "16.0 GiB".
func Bytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
