// Package trainrun runs jeirt train and jeirt eval: the YAML training
// config (Config: data, split, encoder, model, training, output), the run
// from the data to the checkpoint folder (split, encode, train, score, the
// baselines and, with split.by: model, the new-model experiment), and a
// checkpoint scored on a responses file.
package trainrun
