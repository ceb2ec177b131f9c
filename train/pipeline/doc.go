// Package pipeline is the JE-IRT training pipeline, the one that jeirt
// train, jeirt sweep, jeirt route eval --splits and jeirt report share: the
// YAML training config (Config: data, split, encoder, model, training,
// routing, output) and its stages — load and split the data (LoadSplits),
// encode the questions (Encode), train and choose the default routing rule
// (TrainSplit, Routing), evaluate (the test cells, the baselines and, with
// split.by: model, the new-model experiment) and write the checkpoint
// folder (Run does them all in order) —, the same over repeated cell, item
// and model splits (RunSplits), and a checkpoint scored on a responses file
// (EvalCheckpoint).
package pipeline
