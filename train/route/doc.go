// Package route evaluates and configures routers: the policies of
// model.Router checked against a checkpoint (NewRouter), the output formats of
// `jeirt route` (WriteChoices), and RouteEval, which scores routing rules on
// held-out questions against the best single model, random choice and the
// oracle (the route CSV is WriteRouteCSV's).
package route
