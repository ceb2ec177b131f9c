// Package jeirt trains JE-IRT, joint embedding item response theory ("JE-IRT:
// A Geometric Lens on LLM Abilities through Joint Embedding Item Response
// Theory", Yao et al., arXiv:2509.22888, 2025): question embeddings q_j = adapter(encoder(text_j)) and model
// embeddings m_i with P(model i solves item j) = sigmoid(q_j·m_i/‖q_j‖ − ‖q_j‖),
// trained by AdamW on the binary cross-entropy of the observed cells. The
// step runs on a train/backend device (on the CPU: the fused hand-written
// step, or the same loss as a Gorgonia graph, StepGraph).
//
// Config and RunJEIRT are the `jeirt train` application: data, split,
// encoder, training, baselines and the checkpoint with its metrics.json
// (eval.RunMetrics). Questions and EmbedQuestions embed the questions of a
// checkpoint for eval, add-model and route.
package jeirt
