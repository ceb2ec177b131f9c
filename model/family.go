package model

import "fmt"

// Family is an IRT response function: the 1PL, 2PL or 3PL. It is the one
// owner of the family names; every other file uses its constants and
// predicates. The empty Family is the 2PL (older fit folders, zero
// settings).
type Family string

// The families, from the smallest: each nests the one before it.
const (
	// OnePL: one common discrimination (every a_j the same), rank 1.
	OnePL Family = "1pl"
	// TwoPL: a discrimination per item, P = sigmoid(x/σ).
	TwoPL Family = "2pl"
	// ThreePL: a lower asymptote c_j per item, P = c_j + (1 − c_j)·sigmoid(x/σ).
	ThreePL Family = "3pl"
)

// Families are the response functions a fit can have (IRT.Family), in order.
var Families = []Family{OnePL, TwoPL, ThreePL}

// ParseFamily returns the family named s ("" means TwoPL); any other name
// is an error that lists the allowed ones.
func ParseFamily(s string) (Family, error) {
	if s == "" {
		return TwoPL, nil
	}
	for _, f := range Families {
		if s == string(f) {
			return f, nil
		}
	}
	return "", fmt.Errorf("model %q: want %s", s, FamilyNames())
}

// FamilyNames spells the families for messages: "1pl, 2pl or 3pl".
func FamilyNames() string {
	s := ""
	for k, f := range Families {
		switch {
		case k == 0:
		case k == len(Families)-1:
			s += " or "
		default:
			s += ", "
		}
		s += string(f)
	}
	return s
}

// String is the family's name as written ("" for the empty Family).
func (f Family) String() string { return string(f) }

// Nested returns the family f nests (a 3PL with no asymptote is the 2PL,
// a 2PL with one common slope the 1PL; the empty Family is the 2PL), or
// ok false for the 1PL and a name that is no family.
func (f Family) Nested() (n Family, ok bool) {
	switch f.orDefault() {
	case ThreePL:
		return TwoPL, true
	case TwoPL:
		return OnePL, true
	}
	return "", false
}

// HasAsymptote reports whether the family has a lower asymptote c_j per
// item (the 3PL).
func (f Family) HasAsymptote() bool { return f == ThreePL }

// CommonSlope reports whether the family's items share one discrimination
// (the 1PL, unidimensional).
func (f Family) CommonSlope() bool { return f == OnePL }

func (f Family) orDefault() Family {
	if f == "" {
		return TwoPL
	}
	return f
}
