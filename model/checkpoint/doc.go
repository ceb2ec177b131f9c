// Package checkpoint owns a JE-IRT checkpoint folder and every file in it,
// each with its reader and writer side by side: the weights
// (model.safetensors), the manifest (the rows' names, the encoder, the
// config, the hashes that bind the folder together), metrics.json,
// onboard.json, the out-of-domain reference (domain.safetensors) and a
// fitted TF-IDF encoder's files.
package checkpoint
