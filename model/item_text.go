package model

// ObservedItemTexts returns the text of every item that has at least one
// cell in r, in item order; an item without text gives its id (as training
// encodes it). A fitted text encoder (tfidf) learns from these, so that on a
// split by item the held-out questions' text stays unseen.
func (r *Responses) ObservedItemTexts() []string {
	seen := make([]bool, len(r.Items))
	for _, j := range r.Item {
		seen[j] = true
	}
	var out []string
	for j, ok := range seen {
		if !ok {
			continue
		}
		if r.ItemText != nil && r.ItemText[j] != "" {
			out = append(out, r.ItemText[j])
		} else {
			out = append(out, r.Items[j])
		}
	}
	return out
}
