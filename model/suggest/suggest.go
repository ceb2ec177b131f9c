// Package suggest finds the name a user probably meant: the edit distance
// between two names (EditDistance) and the nearest of a list (Closest), for
// "did you mean" messages.
package suggest

import "strings"

// EditDistance is the Levenshtein distance between a and b, in runes.
func EditDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev, cur := make([]int, len(rb)+1), make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			c := 1
			if ra[i-1] == rb[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// Closest is the name of names nearest to name, ignoring case: a name that
// contains name or is contained in it comes first (gpt-4o and
// 20240620_gpt-4o), the nearest in length among them; else the least edit
// distance. Ties go to the earlier name; "" when names is empty.
func Closest(name string, names []string) string {
	l := strings.ToLower(name)
	best, bestContains, bestD := "", false, 0
	for _, n := range names {
		ln := strings.ToLower(n)
		contains := l != "" && (strings.Contains(ln, l) || strings.Contains(l, ln))
		d := EditDistance(l, ln)
		if contains {
			d = abs(len(ln) - len(l))
		}
		if best == "" || contains && !bestContains || contains == bestContains && d < bestD {
			best, bestContains, bestD = n, contains, d
		}
	}
	return best
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
