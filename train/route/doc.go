// Package route sends queries to models: the routing rules (Rule, one file
// rule_NAME.go each, which registers its kind), the Router they make over a
// JE-IRT checkpoint's P(correct) with the out-of-domain check, RouteEval,
// which scores routing rules on held-out questions against the best single
// model, random choice and the oracle, their cross-validation, and route
// eval's CSV (the costs and queries files are model/routefile's). Package
// train/router builds a checkpoint's router from a request.
package route
