// Package fitstat says how well a fitted IRT model (model.IRT) fits its
// data, in the terms psychometricians report: the log-likelihood at the
// estimate with the log-prior apart, the number of parameters, AIC and BIC
// (Likelihood.Statistics); each model's person fit, Snijders' lz* with
// infit and outfit mean squares (PersonFits); and the test information
// function with the standard error of θ along θ (TestInformation).
package fitstat
