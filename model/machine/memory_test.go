package machine

import (
	"testing"
)

func TestCheckMemory(t *testing.T) {
	if err := CheckMemory("a table", 1<<30, 1<<20); err == nil || err.Error() !=
		"a table would need about 1.0 GiB of memory, more than 1.0 MiB (max-memory); make it smaller or raise max-memory" {
		t.Errorf("over --max-memory: %v", err)
	}
	if err := CheckMemory("a table", 1<<20, 1<<30); err != nil {
		t.Error(err)
	}
	if m := AvailableMemory(); m > 0 && CheckMemory("the whole machine twice", 2*m+1<<40, 0) == nil {
		t.Error("more than the available memory was allowed")
	}
}
