// Package fileio holds the rules every command's files follow: outputs
// written atomically and only over what jeirt wrote (CheckOutput,
// WriteFileAtomic, WriteDirAtomic, LockOutput), and inputs opened once,
// bounded and cancellable (OpenInput, ReadInputFile).
package fileio
