// Package encoderun runs jeirt encode and jeirt encode merge: the texts of an
// items file to a vector file (npy, safetensors or JSONL), on the CPU or the
// run's device, one shard at a time, and the shards joined again.
package encoderun
