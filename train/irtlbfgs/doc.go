// Package irtlbfgs fits the rank-1 2PL by joint maximum likelihood (or
// maximum a posteriori under a model.Prior) with gonum's L-BFGS: cBMM's
// objective by a quasi-Newton method, the baseline train/irt's CBMM is
// compared with. LBFGS2PL is registered as the irt.Fitter of
// irt.MethodLBFGS (imported by train/irtguard).
package irtlbfgs
