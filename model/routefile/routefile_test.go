package routefile

import (
	"math"
	"strings"
	"testing"
)

func TestReadCosts(t *testing.T) {
	models := []string{"a", "b", "c"}
	costs, err := readCosts("costs.csv", strings.NewReader("model,cost\na,1.5\n\nb, 0.25\n"), models)
	if err != nil {
		t.Fatal(err)
	}
	if costs[0] != 1.5 || costs[1] != 0.25 || !math.IsNaN(costs[2]) {
		t.Errorf("costs %v, want [1.5 0.25 NaN]", costs)
	}
	if costs, err := readCosts("c.csv", strings.NewReader("c,3\n"), models); err != nil || costs[2] != 3 {
		t.Errorf("headerless file: %v %v", costs, err)
	}
	bad := []struct{ in, want string }{
		{"model,cost\na,1\nb,x\n", `costs.csv:3: column "cost": "x" is not a non-negative number`},
		{"a,-1\n", `costs.csv:1: column "cost": "-1" is not a non-negative number`},
		{"a,NaN\n", `costs.csv:1: column "cost": "NaN" is not a non-negative number`},
		{"a,1\nd,2\n", `costs.csv:2: column "model": "d" is not a model of the checkpoint`},
		{"a,1\nb,2\na,3\n", `costs.csv:3: column "model": "a" is priced twice (first on line 1)`},
		{"model,cost\na,1,2\n", "costs.csv:2: want 2 fields (model,cost), got 3"},
		{"model,cost\n", "costs.csv: no model,cost rows"},
		{"a,\"1\n", `costs.csv:1: extraneous or missing " in quoted-field`},
	}
	for _, c := range bad {
		_, err := readCosts("costs.csv", strings.NewReader(c.in), models)
		if err == nil || err.Error() != c.want {
			t.Errorf("%q: error %v, want %q", c.in, err, c.want)
		}
	}
}

func TestReadQueries(t *testing.T) {
	qf, err := ReadQueries("q.txt", strings.NewReader("first question\r\n\n  \nsecond, with {braces}\nthird"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, q := range qf.Queries {
		got = append(got, q.ID+"="+q.Text)
	}
	if strings.Join(got, "|") != "1=first question|4=second, with {braces}|5=third" || qf.JSONL {
		t.Errorf("text queries %v (jsonl %v)", got, qf.JSONL)
	}
	if len(qf.Empty) != 2 || qf.Empty[0] != 2 || qf.Empty[1] != 3 {
		t.Errorf("empty lines %v, want [2 3]", qf.Empty)
	}

	qf, err = ReadQueries("q.jsonl", strings.NewReader(`{"id": "a1", "text": "hello"}
{"id": 17, "text": "numbered"}

{"text": "no id"}
{"id": "e", "text": ""}
`))
	if err != nil {
		t.Fatal(err)
	}
	got = got[:0]
	for _, q := range qf.Queries {
		got = append(got, q.ID+"="+q.Text)
	}
	if strings.Join(got, "|") != "a1=hello|17=numbered|4=no id" || !qf.JSONL {
		t.Errorf("jsonl queries %v (jsonl %v)", got, qf.JSONL)
	}
	if len(qf.Empty) != 2 || qf.Empty[0] != 3 || qf.Empty[1] != 5 {
		t.Errorf("empty lines %v, want [3 5]", qf.Empty)
	}

	bad := []struct{ in, want string }{
		{"{\"id\": 1}\n", `q.jsonl:1: key "text": missing`},
		{"{\"text\": \"a\"}\n{\"text\": 5}\n", `q.jsonl:2: key "text": not a string`},
		{"{\"text\": \"a\", \"id\": [1]}\n", `q.jsonl:1: key "id": not a non-empty string or a number`},
		{"{\"text\": \"a\"}\nplain text\n", `q.jsonl:2: not a JSON object: invalid character 'p' looking for beginning of value`},
	}
	for _, c := range bad {
		_, err := ReadQueries("q.jsonl", strings.NewReader(c.in))
		if err == nil || err.Error() != c.want {
			t.Errorf("%q: error %v, want %q", c.in, err, c.want)
		}
	}
}
