package model

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Prior is the prior of an IRT fit on the logit scale (x/σ), every term a
// normal distribution: θ ~ N(0, Theta²) in each ability dimension, each
// intercept d = b/σ ~ N(DMean, D²), and each slope a/σ ~ N(AMean, A²)
// (truncated at 0 where slopes are nonnegative). A zero sd leaves its
// parameters without a prior; the zero Prior is joint maximum likelihood.
//
// With a prior the fit is maximum a posteriori: its loss is the negative
// log posterior, ℓ plus Σ θ²/(2·Theta²) + Σ (d − DMean)²/(2·D²) +
// Σ (a/σ − AMean)²/(2·A²), whose optimum is finite for every data set,
// unanimous items and perfect scores included.
type Prior struct {
	Theta    float64 // sd of each ability; 0: none
	D, DMean float64 // sd and mean of each intercept d; D 0: none
	A, AMean float64 // sd and mean of each slope; A 0: none
	// DAuto and AAuto: the mean of the intercepts' (slopes') prior is
	// fitted with the rest, under a flat prior of its own (empirical
	// Bayes, as py-irt's hierarchical model fits it); DMean (AMean) is
	// then where it starts. Spelled normal(auto,SD).
	DAuto, AAuto bool
	// DScaleAuto and AScaleAuto: the sd of the intercepts' (slopes')
	// prior is estimated from the data before the fit (empirical Bayes;
	// irtguard's EmpiricalBayes), D (A) being where the estimate starts;
	// the fit then runs under the estimated sd. Spelled normal(MEAN,auto).
	DScaleAuto, AScaleAuto bool
}

// Resolved is p with the scales it estimates from the data set to the
// estimates a and d (the sds of the slopes' and intercepts' priors); the
// others are kept.
func (p Prior) Resolved(a, d float64) Prior {
	if p.AScaleAuto {
		p.A, p.AScaleAuto = a, false
	}
	if p.DScaleAuto {
		p.D, p.DScaleAuto = d, false
	}
	return p
}

// EstimatesScales reports whether p has a scale to estimate from the data.
func (p Prior) EstimatesScales() bool { return p.AScaleAuto || p.DScaleAuto }

// DefaultPrior is the prior of a fit that names none (ParsePrior's
// "default"): θ ~ N(0, 1), d ~ N(0, 3²), a ~ N(1, 1) truncated at 0. Its
// scales were chosen by held-out log loss on real benchmarks (docs/irt.md).
var DefaultPrior = Prior{Theta: 1, D: 3, A: 1, AMean: 1}

// On reports whether p puts a prior on any parameter.
func (p Prior) On() bool { return p.Theta > 0 || p.D > 0 || p.A > 0 }

// String is p in ParsePrior's grammar: "none", or every term (PARAM=none
// for a parameter without a prior), so that ParsePrior reads it back as p.
func (p Prior) String() string {
	if !p.On() {
		return "none"
	}
	var parts []string
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	term := func(name string, mean, sd float64, auto, autoSD bool) {
		m, v := g(mean), g(sd)
		if auto {
			m = "auto"
		}
		if autoSD {
			v = "auto"
		}
		if sd > 0 {
			parts = append(parts, name+"=normal("+m+","+v+")")
		} else {
			parts = append(parts, name+"=none")
		}
	}
	term("theta", 0, p.Theta, false, false)
	term("a", p.AMean, p.A, p.AAuto, p.AScaleAuto)
	term("d", p.DMean, p.D, p.DAuto, p.DScaleAuto)
	return strings.Join(parts, ",")
}

// ParsePrior reads a prior: "none" (joint maximum likelihood), "default"
// or "" (DefaultPrior), or comma-separated terms PARAM=normal(MEAN,SD) or
// PARAM=none, PARAM one of theta, a, d; a parameter not named keeps its
// default. θ's mean is 0 (the abilities' location is the prior's); the
// mean of a or d may be auto (fitted: Prior.DAuto, AAuto).
func ParsePrior(s string) (Prior, error) {
	s = strings.TrimSpace(s)
	switch strings.ToLower(s) {
	case "", "default":
		return DefaultPrior, nil
	case "none":
		return Prior{}, nil
	}
	p := DefaultPrior
	// Split on the commas outside parentheses.
	var terms []string
	depth, from := 0, 0
	for k, c := range s {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				terms, from = append(terms, s[from:k]), k+1
			}
		}
	}
	terms = append(terms, s[from:])
	for _, t := range terms {
		name, dist, ok := strings.Cut(strings.TrimSpace(t), "=")
		name, dist = strings.ToLower(strings.TrimSpace(name)), strings.TrimSpace(dist)
		if !ok {
			return Prior{}, fmt.Errorf("prior %q: term %q: want PARAM=normal(MEAN,SD) or PARAM=none (PARAM theta, a or d), or the whole prior none or default", s, t)
		}
		mean, sd, auto, autoSD := 0.0, 0.0, false, false
		if strings.ToLower(dist) != "none" {
			in, ok := strings.CutPrefix(strings.ToLower(dist), "normal(")
			in, ok2 := strings.CutSuffix(in, ")")
			ms, ss, ok3 := strings.Cut(in, ",")
			var err1, err2 error
			if ms = strings.TrimSpace(ms); ms == "auto" {
				auto, ms = true, "0"
			}
			if strings.TrimSpace(ss) == "auto" {
				autoSD, ss = true, "1"
			}
			if ok && ok2 && ok3 {
				mean, err1 = strconv.ParseFloat(ms, 64)
				sd, err2 = strconv.ParseFloat(strings.TrimSpace(ss), 64)
			}
			if !ok || !ok2 || !ok3 || err1 != nil || err2 != nil {
				return Prior{}, fmt.Errorf("prior %q: %s=%s: want normal(MEAN,SD) or none", s, name, dist)
			}
			if !(sd > 0) || math.IsInf(sd, 0) || math.IsNaN(mean) || math.IsInf(mean, 0) {
				return Prior{}, fmt.Errorf("prior %q: %s=%s: the sd must be positive and finite and the mean finite", s, name, dist)
			}
		}
		switch name {
		case "theta", "θ":
			if mean != 0 || auto || autoSD {
				return Prior{}, fmt.Errorf("prior %q: theta=%s: the abilities' prior mean is 0 (their location is the prior's)", s, dist)
			}
			p.Theta = sd
		case "a":
			p.A, p.AMean, p.AAuto, p.AScaleAuto = sd, mean, auto && sd > 0, autoSD && sd > 0
			if autoSD && sd > 0 {
				p.A = DefaultPrior.A // where the estimate starts
			}
		case "d":
			p.D, p.DMean, p.DAuto, p.DScaleAuto = sd, mean, auto && sd > 0, autoSD && sd > 0
			if autoSD && sd > 0 {
				p.D = DefaultPrior.D
			}
		default:
			return Prior{}, fmt.Errorf("prior %q: unknown parameter %q: want theta, a or d", s, name)
		}
	}
	return p, nil
}

// ParseRowPrior reads the prior on a new model's row (jeirt add-model) in
// ParsePrior's grammar: "default" or "population" (the known models' mean
// and covariance), "theta=normal(0,SD)" (a ridge N(0, SD²·I), the model's
// row being what θ is to IRT), or "l2" (the ridge of the precision given
// apart, the older spelling). population is false and sd 0 for "l2".
func ParseRowPrior(s string) (population bool, sd float64, err error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "default", "population":
		return true, 0, nil
	case "l2":
		return false, 0, nil
	case "none":
		return false, 0, fmt.Errorf("prior none: a new model's row needs a prior (a model with every answer right has no finite row without one); want default, population or theta=normal(0,SD)")
	}
	name, dist, _ := strings.Cut(s, "=")
	if strings.ToLower(strings.TrimSpace(name)) != "theta" || strings.Contains(dist, "=") {
		return false, 0, fmt.Errorf("prior %q: a new model's row takes default, population or theta=normal(0,SD)", s)
	}
	p, err := ParsePrior(s)
	if err != nil {
		return false, 0, err
	}
	if p.Theta == 0 {
		return false, 0, fmt.Errorf("prior %q: a new model's row needs a prior; want default, population or theta=normal(0,SD)", s)
	}
	return false, p.Theta, nil
}
