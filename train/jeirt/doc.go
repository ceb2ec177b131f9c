// Package jeirt trains JE-IRT, joint embedding item response theory ("JE-IRT:
// A Geometric Lens on LLM Abilities through Joint Embedding Item Response
// Theory", Yao et al., arXiv:2509.22888, 2025): question embeddings q_j = adapter(encoder(text_j)) and model
// embeddings m_i with P(model i solves item j) = sigmoid(q_j·m_i/‖q_j‖ − ‖q_j‖),
// trained by AdamW on the binary cross-entropy of the observed cells. The
// step runs on a train/backend device (cpu: the same loss as a Gorgonia
// graph, StepGraph; cpu:fused: the hand-written step, StepFused; cuda).
//
// Trainer is the training; Questions and EncodeQuestions embed the
// questions of a checkpoint for eval, add-model and route. The `jeirt train`
// application (its config, the run, the checkpoint) is cmd/internal/pipeline.
package jeirt
