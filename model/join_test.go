package model

import (
	"fmt"
	"testing"
)

func TestJoinBenchmarks(t *testing.T) {
	a := &Responses{Models: []string{"m1", "m2"}, Items: []string{"q1", "q2"},
		Model: []int32{0, 0, 1}, Item: []int32{0, 1, 1}, Label: []uint8{1, 0, 1}}
	b := &Responses{Models: []string{"m3", "m1", "ghost"}, Items: []string{"q2", "z", "unseen"}, ItemText: []string{"two", "zed", "none"},
		Model: []int32{0, 1, 1}, Item: []int32{0, 0, 1}, Label: []uint8{0, 1, 1}}
	j, err := JoinBenchmarks([]string{"A", "B"}, []*Responses{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Validate(); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(j.Models) != "[m1 m2 m3]" || fmt.Sprint(j.Items) != "[q1 A/q2 B/q2 z]" || fmt.Sprint(j.ItemGroup) != "[A A B B]" {
		t.Errorf("models %v items %v groups %v", j.Models, j.Items, j.ItemGroup)
	}
	if fmt.Sprintf("%q", j.ItemText) != `["" "" "two" "zed"]` {
		t.Errorf("texts %q", j.ItemText)
	}
	// Every cell of each input is there once, under the joined names.
	got := map[string]uint8{}
	for c := range j.Label {
		got[j.Models[j.Model[c]]+" "+j.Items[j.Item[c]]] = j.Label[c]
	}
	want := map[string]uint8{"m1 q1": 1, "m1 A/q2": 0, "m2 A/q2": 1, "m3 B/q2": 0, "m1 B/q2": 1, "m1 z": 1}
	if fmt.Sprint(got) != fmt.Sprint(want) || j.Len() != 6 {
		t.Errorf("cells %v, want %v", got, want)
	}
	if _, err := JoinBenchmarks([]string{"A", "A"}, []*Responses{a, b}); err == nil {
		t.Error("a name given twice: no error")
	}
}
