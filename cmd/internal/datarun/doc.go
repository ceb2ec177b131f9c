// Package datarun runs jeirt data inspect and jeirt data split: a response
// file's summary (counts, density, accuracy ranges, duplicates), and its
// reproducible train, validation and test splits written as long CSVs.
package datarun
