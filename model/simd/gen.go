//go:build ignore

// gen writes simd_amd64.s from internal/asmgen (go generate).
package main

import (
	"log"
	"os"

	"github.com/jeirt/jeirt/model/simd/internal/asmgen"
)

func main() {
	if err := os.WriteFile("simd_amd64.s", asmgen.Source(), 0o644); err != nil {
		log.Fatal(err)
	}
}
