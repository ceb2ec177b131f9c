package cat

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"github.com/jeirt/jeirt/model"
)

// Rules of item selection.
const (
	// Fisher asks the item of largest Fisher information at θ̂ (Lord 1980,
	// Applications of Item Response Theory, ch. 10). At rank r > 1 the
	// information is a matrix and Fisher is the D-optimal rule.
	Fisher = "fisher"
	// KL asks the item of largest KL information over θ̂ ± c/√n (Chang and
	// Ying 1996); rank 1.
	KL = "kl"
	// DOptimal asks the item that most raises the log determinant of the
	// posterior information, log det(P + w_j α_j α_jᵀ) − log det P
	// = log(1 + w_j α_jᵀP⁻¹α_j) with P the posterior precision at θ̂,
	// α_j = a_j/σ and w_j = p_j(1 − p_j) (Segall 1996, "Multidimensional
	// adaptive testing", Psychometrika 61), loadings of either sign alike.
	// At rank 1 it is the Fisher rule.
	DOptimal = "d-optimal"
	// Random asks a uniformly drawn item: the baseline.
	Random = "random"
)

// Reasons a test stops (Session.Stop).
const (
	StopBudget    = "budget"
	StopTargetSE  = "target_se"
	StopExhausted = "exhausted" // no item left to ask
)

// Test is an adaptive-testing policy. The zero value asks by maximum Fisher
// information, estimates θ by MAP and never stops on its own (set Budget or
// TargetSE).
type Test struct {
	Rule      string // Fisher (""), KL, DOptimal or Random
	Estimator string // MAP ("") or EAP
	// Budget caps the items asked per model; 0 means no cap.
	Budget int
	// TargetSE stops a test once the standard error of every θ dimension is
	// at most this, after at least MinItems items; 0 means no target.
	TargetSE float64
	MinItems int
	// Balance draws each item from the group furthest below its share of
	// the bank (Kingsbury and Zara 1989, "Procedures for selecting items
	// for computerized adaptive tests", Applied Measurement in Education 2:
	// the constrained CAT), then by the rule within it. It needs a bank
	// with groups.
	Balance bool
	// KLWidth is c of the KL rule's δ = c/√n; 0 means 3 (Chang and Ying).
	KLWidth float64
}

// Pool is a bank prepared for a Test: the selection indexes, built once and
// shared read-only by the sessions of any number of models.
type Pool struct {
	bank  *Bank
	test  Test
	all   *index1   // rank 1, Fisher, KL or d-optimal: every item
	group []*index1 // with Balance: one per group
	// members lists each group's items (one list of all items without
	// Balance); share is each group's share of the bank.
	members [][]int
	share   []float64
	// byNorm (rank > 1, not Random): each member list by decreasing
	// ‖a_j‖², with those norms, for the D-optimal search's bound.
	byNorm [][]int
	norm2  []float64
}

// Prepare checks the test against the bank and builds its indexes.
func (t Test) Prepare(b *Bank) (*Pool, error) {
	if err := b.Check(); err != nil {
		return nil, err
	}
	switch t.Rule {
	case "", Fisher, DOptimal, Random:
	case KL:
		if b.Rank != 1 {
			return nil, model.FieldErrorf("Rule", "cat: {Rule} kl is rank 1 only (the fit has rank %d); use fisher or d-optimal", b.Rank)
		}
	default:
		return nil, model.FieldErrorf("Rule", "cat: {Rule} %q: want fisher, kl, d-optimal or random", t.Rule)
	}
	switch {
	case t.Budget < 0:
		return nil, model.FieldErrorf("Budget", "cat: {Budget} %d must not be negative", t.Budget)
	case t.MinItems < 0 || t.Budget > 0 && t.MinItems > t.Budget:
		return nil, model.FieldErrorf("MinItems", "cat: {MinItems} %d must be between 0 and the budget %d", t.MinItems, t.Budget)
	case !(t.TargetSE >= 0) || math.IsInf(t.TargetSE, 0):
		return nil, model.FieldErrorf("TargetSE", "cat: {TargetSE} %v must be a positive number (or 0: none)", t.TargetSE)
	case !(t.KLWidth >= 0) || math.IsInf(t.KLWidth, 0):
		return nil, model.FieldErrorf("KLWidth", "cat: {KLWidth} %v: give c of the KL rule's interval θ ± c/√n, a finite number ≥ 0 (0: the default, 3)", t.KLWidth)
	case t.Balance && b.Group == nil:
		return nil, fmt.Errorf("cat: content balancing needs item groups")
	}
	if t.Estimator == EAP && b.Rank != 1 {
		return nil, model.FieldErrorf("Estimator", "cat: {Estimator} eap is rank 1 only (the fit has rank %d); use map", b.Rank)
	} else if t.Estimator != "" && t.Estimator != MAP && t.Estimator != EAP {
		return nil, model.FieldErrorf("Estimator", "cat: {Estimator} %q: want map or eap", t.Estimator)
	}
	p := &Pool{bank: b, test: t}
	J := b.NumItems()
	if t.Balance {
		p.members = make([][]int, len(b.Groups))
		for j, g := range b.Group {
			p.members[g] = append(p.members[g], j)
		}
	} else {
		all := make([]int, J)
		for j := range all {
			all[j] = j
		}
		p.members = [][]int{all}
	}
	for _, m := range p.members {
		p.share = append(p.share, float64(len(m))/float64(J))
	}
	if b.Rank == 1 && t.Rule != Random {
		for _, m := range p.members {
			p.group = append(p.group, newIndex1(b, m))
		}
	}
	if b.Rank > 1 && t.Rule != Random {
		r := b.Rank
		p.norm2 = make([]float64, J)
		for j := range p.norm2 {
			for k := 0; k < r; k++ {
				p.norm2[j] += b.A[j*r+k] * b.A[j*r+k]
			}
		}
		for _, m := range p.members {
			o := append([]int(nil), m...)
			sort.SliceStable(o, func(x, y int) bool { return p.norm2[o[x]] > p.norm2[o[y]] })
			p.byNorm = append(p.byNorm, o)
		}
	}
	return p, nil
}

// Bank is the pool's bank.
func (p *Pool) Bank() *Bank { return p.bank }

// Pick is an item chosen by a session and the value of the rule's criterion
// for it (Fisher information, KL information, the log-determinant gain; NaN
// for Random).
type Pick struct {
	Item  int
	Value float64
}

// Session is one model's adaptive test.
type Session struct {
	pool  *Pool
	est   estimator
	rng   *rand.Rand
	avail []bool // eligible and not yet asked
	left  []int  // available items per member list
	count []int  // items asked per member list
	group []int  // item -> member list
	asked []int
	y     []uint8
	theta []float64
	cov   []float64
	// free lists the available items of each member list in any order
	// (Random), with each item's position in it.
	free [][]int
	at   []int
}

// Start begins a test under prior for a model that can be asked the items
// with eligible[j] set (nil: every item). seed seeds the Random rule.
func (p *Pool) Start(prior Prior, eligible []bool, seed uint64) (*Session, error) {
	b := p.bank
	if err := prior.check(b.Rank); err != nil {
		return nil, err
	}
	J := b.NumItems()
	if eligible != nil && len(eligible) != J {
		return nil, fmt.Errorf("cat: %d eligibility flags for %d items", len(eligible), J)
	}
	est, err := newEstimator(b, prior, p.test.Estimator)
	if err != nil {
		return nil, err
	}
	s := &Session{pool: p, est: est, rng: rand.New(rand.NewPCG(seed, 0xca7)), avail: make([]bool, J),
		left: make([]int, len(p.members)), count: make([]int, len(p.members)), group: make([]int, J)}
	if p.test.Rule == Random {
		s.free, s.at = make([][]int, len(p.members)), make([]int, J)
	}
	for g, m := range p.members {
		for _, j := range m {
			s.group[j] = g
			if eligible == nil || eligible[j] {
				s.avail[j] = true
				s.left[g]++
				if s.free != nil {
					s.at[j] = len(s.free[g])
					s.free[g] = append(s.free[g], j)
				}
			}
		}
	}
	s.theta, s.cov = est.estimate()
	return s, nil
}

// Theta is the current estimate of θ.
func (s *Session) Theta() []float64 { return append([]float64(nil), s.theta...) }

// SE is the current standard error of each θ dimension.
func (s *Session) SE() []float64 { return seOf(s.cov, s.pool.bank.Rank) }

// NumAsked is the number of items answered so far.
func (s *Session) NumAsked() int { return len(s.asked) }

// Asked lists the items answered so far, in order, and Answers their answers.
func (s *Session) Asked() []int         { return append([]int(nil), s.asked...) }
func (s *Session) Answers() []uint8     { return append([]uint8(nil), s.y...) }
func (s *Session) Available(j int) bool { return s.avail[j] }

// Stop says why the test is over ("" while it is not): the budget is spent,
// every standard error is at most the target, or no item is left.
func (s *Session) Stop() string {
	t := s.pool.test
	if t.Budget > 0 && len(s.asked) >= t.Budget {
		return StopBudget
	}
	if t.TargetSE > 0 && len(s.asked) >= t.MinItems {
		reached := true
		for _, se := range s.SE() {
			reached = reached && se <= t.TargetSE
		}
		if reached {
			return StopTargetSE
		}
	}
	for _, n := range s.left {
		if n > 0 {
			return ""
		}
	}
	return StopExhausted
}

// Answer records the answer y (1 right, 0 wrong) to item and updates θ and
// its standard errors. An item may be answered once, and only if eligible.
func (s *Session) Answer(item int, y uint8) error {
	if item < 0 || item >= len(s.avail) {
		return fmt.Errorf("cat: item %d is not in the bank of %d items", item, len(s.avail))
	}
	if y > 1 {
		return fmt.Errorf("cat: answer %d to item %d is not 0 or 1", y, item)
	}
	if !s.avail[item] {
		for _, j := range s.asked {
			if j == item {
				return fmt.Errorf("cat: item %d answered twice", item)
			}
		}
		return fmt.Errorf("cat: item %d is not eligible for this model", item)
	}
	s.take(item, s.avail, s.left, s.count, s.free)
	s.asked = append(s.asked, item)
	s.y = append(s.y, y)
	s.est.add(item, y)
	s.theta, s.cov = s.est.estimate()
	return nil
}

// take marks item as no longer available in the given state.
func (s *Session) take(item int, avail []bool, left, count []int, free [][]int) {
	avail[item] = false
	g := s.group[item]
	left[g]--
	count[g]++
	if free != nil {
		// Swap-remove from the group's free list.
		l := free[g]
		k := s.at[item]
		last := l[len(l)-1]
		l[k], s.at[last] = last, k
		free[g] = l[:len(l)-1]
	}
}

// Next is the item the rule asks next (false when the test is over).
func (s *Session) Next() (Pick, bool) {
	if s.Stop() != "" {
		return Pick{}, false
	}
	st := s.state(false)
	return s.choose(st)
}

// Plan returns up to n items to ask next without waiting for their answers
// (a live test in rounds): each is chosen at the current θ̂ as if the ones
// before it had been asked (groups counted; for the D-optimal rule the
// information they add included), none after the budget. The session is
// not changed. An empty plan means the test is over (Stop says why).
func (s *Session) Plan(n int) []Pick {
	if s.Stop() != "" {
		return nil
	}
	if b := s.pool.test.Budget; b > 0 {
		n = min(n, b-len(s.asked))
	}
	st := s.state(true)
	var out []Pick
	for len(out) < n {
		p, ok := s.choose(st)
		if !ok {
			break
		}
		out = append(out, p)
		s.addPlanned(st, p.Item)
	}
	return out
}

// selState is what a choice depends on besides θ̂: it is the session's own
// (Next) or a copy that Plan changes as it goes.
type selState struct {
	avail       []bool
	left, count []int
	free        [][]int
	asked       int
	prec        []float64 // D-optimal: posterior precision at θ̂ (nil: from the estimator)
}

func (s *Session) state(copyIt bool) *selState {
	st := &selState{avail: s.avail, left: s.left, count: s.count, free: s.free, asked: len(s.asked)}
	if copyIt {
		st.avail = append([]bool(nil), s.avail...)
		st.left = append([]int(nil), s.left...)
		st.count = append([]int(nil), s.count...)
		st.free = nil // Random plans draw by a scan of avail (draw)
	}
	return st
}

func (s *Session) addPlanned(st *selState, item int) {
	st.avail[item] = false
	g := s.group[item]
	st.left[g]--
	st.count[g]++
	st.asked++
	if st.prec != nil {
		b := s.pool.bank
		r, sig := b.Rank, b.sigma()
		w := psi(b.logit(item, s.theta))
		a := b.A[item*r : (item+1)*r]
		for k := 0; k < r; k++ {
			for l := 0; l < r; l++ {
				st.prec[k*r+l] += w * a[k] * a[l] / (sig * sig)
			}
		}
	}
}

// member is the member list to draw from: with Balance, the group furthest
// below its share of the bank among those with items left (ties: the larger
// share, then the first); otherwise the only one.
func (s *Session) member(st *selState) int {
	p := s.pool
	if !p.test.Balance {
		if st.left[0] == 0 {
			return -1
		}
		return 0
	}
	best, bestGap := -1, math.Inf(-1)
	n := float64(max(st.asked, 1))
	for g := range p.members {
		if st.left[g] == 0 {
			continue
		}
		gap := p.share[g] - float64(st.count[g])/n
		if gap > bestGap+1e-12 || math.Abs(gap-bestGap) <= 1e-12 && p.share[g] > p.share[best] {
			best, bestGap = g, gap
		}
	}
	return best
}

func (s *Session) choose(st *selState) (Pick, bool) {
	g := s.member(st)
	if g < 0 {
		return Pick{}, false
	}
	p := s.pool
	b := p.bank
	rule := p.test.Rule
	switch {
	case rule == Random:
		return Pick{Item: s.draw(st, g), Value: math.NaN()}, true
	case b.Rank == 1 && rule == KL:
		c := p.test.KLWidth
		if c == 0 {
			c = 3
		}
		j, v := p.group[g].best(s.theta[0], kl1{b: b, theta: s.theta[0], delta: c / math.Sqrt(float64(max(st.asked, 1)))}, st.avail)
		return Pick{Item: j, Value: v}, j >= 0
	case b.Rank == 1:
		j, v := p.group[g].best(s.theta[0], fisher1{b: b, theta: s.theta[0]}, st.avail)
		if j < 0 {
			return Pick{}, false
		}
		if rule == DOptimal {
			v = math.Log1p(v / s.precision(st)[0])
		}
		return Pick{Item: j, Value: v}, true
	default:
		return s.dOptimal(st, g)
	}
}

// precision is the posterior precision at θ̂ in st (computed on first use).
func (s *Session) precision(st *selState) []float64 {
	if st.prec == nil {
		st.prec = s.est.precision(s.theta)
	}
	return st.prec
}

// dOptimal finds the group's available item of largest
// log(1 + w_j α_jᵀCα_j), C = P⁻¹, that is of largest w_j α_jᵀCα_j. Since
// w_j ≤ ¼ and α_jᵀCα_j ≤ λ_max(C)‖α_j‖², with λ_max bounded by C's largest
// absolute row sum (Gershgorin), items are visited by decreasing ‖a_j‖ and
// the scan stops once that bound falls below the best found.
func (s *Session) dOptimal(st *selState, g int) (Pick, bool) {
	b := s.pool.bank
	r, sig := b.Rank, b.sigma()
	C, ok := invertSPD(s.precision(st), r)
	if !ok {
		return Pick{}, false
	}
	lmax := 0.0
	for k := 0; k < r; k++ {
		row := 0.0
		for l := 0; l < r; l++ {
			row += math.Abs(C[k*r+l])
		}
		lmax = math.Max(lmax, row)
	}
	lmax /= sig * sig
	best, bestV := -1, math.Inf(-1)
	for _, j := range s.pool.byNorm[g] {
		if s.pool.norm2[j]*lmax/4 < bestV {
			break
		}
		if !st.avail[j] {
			continue
		}
		a := b.A[j*r : (j+1)*r]
		q, x := 0.0, b.D[j]
		for k := 0; k < r; k++ {
			x += s.theta[k] * a[k]
			ca := 0.0
			for l := 0; l < r; l++ {
				ca += C[k*r+l] * a[l]
			}
			q += a[k] * ca
		}
		if v := psi(x/sig) * q / (sig * sig); v > bestV {
			best, bestV = j, v
		}
	}
	return Pick{Item: best, Value: math.Log1p(bestV)}, best >= 0
}

// draw picks a uniform available item of member list g: from the free list
// when st has one, else by a scan (Plan).
func (s *Session) draw(st *selState, g int) int {
	if st.free != nil {
		l := st.free[g]
		return l[s.rng.IntN(len(l))]
	}
	k := s.rng.IntN(st.left[g])
	for _, j := range s.pool.members[g] {
		if st.avail[j] {
			if k == 0 {
				return j
			}
			k--
		}
	}
	panic("cat: group count out of step with its items")
}

// Exclude makes the items with keep[j] false unavailable (never asked
// from now on); their answers, if any, still count.
func (s *Session) Exclude(keep []bool) {
	for j, k := range keep {
		if !k && s.avail[j] {
			s.take(j, s.avail, s.left, s.count, s.free)
			s.count[s.group[j]]-- // not asked: balancing counts only asked items
		}
	}
}
