// Package routerun runs jeirt route and jeirt route eval: the router that a
// command's flags describe (candidates, costs, the rule, the training
// reference of the margin and shortlist rules), queries in and choices out
// in the output formats, and routing curves on held-out questions.
package routerun
