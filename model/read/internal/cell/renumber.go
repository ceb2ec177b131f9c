package cell

// Renumber gives every cell held new model and item indices, models[m] for
// model m and items[i] for item i (each a permutation), so that a reader
// can put its names in an order of its choosing once all are read.
func (c *Sink) Renumber(models, items []int32) {
	for k, m := range c.model {
		c.model[k] = models[m]
	}
	for k, i := range c.item {
		c.item[k] = items[i]
	}
	if c.dup.found {
		c.dup.model, c.dup.item = models[c.dup.model], items[c.dup.item]
	}
}
