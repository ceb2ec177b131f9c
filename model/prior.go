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
}

// DefaultPrior is the prior of a fit that names none (ParsePrior's
// "default"): θ ~ N(0, 1), d ~ N(0, 3²), a ~ N(1, 1) truncated at 0. Its
// scales were chosen by held-out log loss on real benchmarks (docs/irt.md).
var DefaultPrior = Prior{Theta: 1, D: 3, A: 1, AMean: 1}

// On reports whether p puts a prior on any parameter.
func (p Prior) On() bool { return p.Theta > 0 || p.D > 0 || p.A > 0 }

// String is p in ParsePrior's grammar: "none", or the terms it sets.
func (p Prior) String() string {
	if !p.On() {
		return "none"
	}
	var parts []string
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	if p.Theta > 0 {
		parts = append(parts, "theta=normal(0,"+g(p.Theta)+")")
	}
	if p.A > 0 {
		parts = append(parts, "a=normal("+g(p.AMean)+","+g(p.A)+")")
	}
	if p.D > 0 {
		parts = append(parts, "d=normal("+g(p.DMean)+","+g(p.D)+")")
	}
	return strings.Join(parts, ",")
}

// ParsePrior reads a prior: "none" (joint maximum likelihood), "default"
// or "" (DefaultPrior), or comma-separated terms PARAM=normal(MEAN,SD) or
// PARAM=none, PARAM one of theta, a, d; a parameter not named keeps its
// default. θ's mean is 0 (the abilities' location is the prior's).
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
		mean, sd := 0.0, 0.0
		if strings.ToLower(dist) != "none" {
			in, ok := strings.CutPrefix(strings.ToLower(dist), "normal(")
			in, ok2 := strings.CutSuffix(in, ")")
			ms, ss, ok3 := strings.Cut(in, ",")
			var err1, err2 error
			if ok && ok2 && ok3 {
				mean, err1 = strconv.ParseFloat(strings.TrimSpace(ms), 64)
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
			if mean != 0 {
				return Prior{}, fmt.Errorf("prior %q: theta=%s: the abilities' prior mean is 0 (their location is the prior's)", s, dist)
			}
			p.Theta = sd
		case "a":
			p.A, p.AMean = sd, mean
		case "d":
			p.D, p.DMean = sd, mean
		default:
			return Prior{}, fmt.Errorf("prior %q: unknown parameter %q: want theta, a or d", s, name)
		}
	}
	return p, nil
}
