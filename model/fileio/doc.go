// Package fileio holds the rules every command's files follow: outputs
// written atomically and only over what jeirt wrote (CheckOutput,
// WriteFileAtomic, WriteDirAtomic, LockOutput), inputs opened once,
// bounded and cancellable (OpenInput, ReadInputFile), small CSV tables read
// by column name (CSVRows), and the process's memory budget and CPU time.
package fileio
