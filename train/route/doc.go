// Package route sends queries to models: the Router policy over a JE-IRT
// checkpoint's P(correct) (max-p, min-p, lambda and margin rules, the
// out-of-domain check), RouteEval, which scores routing rules on held-out
// questions against the best single model, random choice and the oracle,
// and the route CSV (the costs and queries files are model/routefile's).
package route
