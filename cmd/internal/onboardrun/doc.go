// Package onboardrun runs jeirt add-model on a JE-IRT checkpoint end to end:
// read the new models' answers, place them on the map (package
// train/onboard), and write the new checkpoint or the questions to ask next.
package onboardrun
