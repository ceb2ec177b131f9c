//go:build ignore

// gen writes kernel_amd64.s from internal/asmgen (go generate).
package main

import (
	"log"
	"os"

	"github.com/jeirt/jeirt/model/kernel/internal/asmgen"
)

func main() {
	if err := os.WriteFile("kernel_amd64.s", asmgen.Source(), 0o644); err != nil {
		log.Fatal(err)
	}
}
