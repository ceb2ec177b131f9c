// Package onboard places new models on a trained JE-IRT map without
// retraining it: each new model's row m is fitted with everything else frozen
// (a d-dimensional logistic regression under a Gaussian prior, by damped
// Newton), and Round suggests which questions to ask a new model next by a
// greedy Bayesian design (Chaloner and Verdinelli, "Bayesian Experimental
// Design: A Review", Statistical Science, 1995). It owns onboard.json.
package onboard
