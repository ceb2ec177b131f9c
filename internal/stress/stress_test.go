package stress

import "testing"

func TestFull(t *testing.T) {
	for _, c := range []struct {
		value string
		want  bool
	}{{"full", true}, {"", false}, {"1", false}, {"FULL", false}} {
		t.Setenv(Env, c.value)
		if got := Full(); got != c.want {
			t.Errorf("%s=%q: Full() = %v, want %v", Env, c.value, got, c.want)
		}
	}
}

func TestLongSkips(t *testing.T) {
	t.Setenv(Env, "")
	ran := false
	t.Run("long", func(t *testing.T) {
		Long(t, "a smaller input checks the same property")
		ran = true
	})
	if ran {
		t.Error("Long did not skip without JEIRT_STRESS=full")
	}
	t.Setenv(Env, Value)
	t.Run("long", func(t *testing.T) {
		Long(t, "unused")
		ran = true
	})
	if !ran {
		t.Error("Long skipped with JEIRT_STRESS=full")
	}
}
