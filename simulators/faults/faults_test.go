package faults

import (
	"testing"
	"time"
)

func TestLatencyAddsUp(t *testing.T) {
	f := New(1)
	f.SetLatency("", 2*time.Millisecond)
	f.SetLatency("zfs", 3*time.Millisecond)
	for op, want := range map[string]time.Duration{"zfs": 5 * time.Millisecond, "zpool": 2 * time.Millisecond} {
		if got := f.Delay(op); got != want {
			t.Errorf("Delay(%s) = %v, want %v", op, got, want)
		}
	}
	f.SetLatency("", 0)
	if got := f.Delay("zpool"); got != 0 {
		t.Errorf("after removing: %v", got)
	}
}

func TestErrorRate(t *testing.T) {
	cases := []struct {
		op    string
		rate  float64
		fails int // of 100 draws on "x"
	}{
		{"x", 1, 100}, {"", 1, 100}, {"y", 1, 0}, {"x", 0, 0},
	}
	for _, c := range cases {
		f := New(1)
		f.SetErrorRate(c.op, c.rate)
		n := 0
		for i := 0; i < 100; i++ {
			if f.Fail("x") {
				n++
			}
		}
		if n != c.fails {
			t.Errorf("rate %v on %q: %d failures, want %d", c.rate, c.op, n, c.fails)
		}
	}
}

func TestSeedReproduces(t *testing.T) {
	draw := func(f *Set) (out []bool) {
		for i := 0; i < 50; i++ {
			out = append(out, f.Fail("x"))
		}
		return out
	}
	a, b := New(7), New(7)
	a.SetErrorRate("x", 0.5)
	b.SetErrorRate("x", 0.5)
	da, db := draw(a), draw(b)
	for i := range da {
		if da[i] != db[i] {
			t.Fatalf("draw %d differs with the same seed", i)
		}
	}
}

func TestDropAfterAndReset(t *testing.T) {
	f := New(1)
	f.DropAfter(3)
	var got []bool
	for i := 0; i < 5; i++ {
		got = append(got, f.TakeDrop())
	}
	want := []bool{false, false, true, false, false}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("TakeDrop sequence %v, want %v", got, want)
		}
	}
	f.DropAfter(1)
	f.SetLatency("", time.Second)
	f.SetErrorRate("", 1)
	f.Reset()
	if f.TakeDrop() || f.Delay("x") != 0 || f.Fail("x") {
		t.Error("Reset left a fault armed")
	}
}

func TestCountsSurviveReset(t *testing.T) {
	f := New(1)
	f.SetErrorRate("", 1)
	f.SetLatency("op", time.Millisecond)
	f.DropAfter(2)
	for range 3 {
		f.Fail("op")
		f.Delay("op")
		f.TakeDrop()
	}
	f.Delay("other") // no latency armed for it: not counted
	want := Counts{Errors: 3, Drops: 1, Delayed: 3}
	if got := f.Counts(); got != want {
		t.Fatalf("Counts() = %+v, want %+v", got, want)
	}
	f.Reset()
	if got := f.Counts(); got != want {
		t.Fatalf("after Reset, Counts() = %+v, want %+v (counts are cumulative)", got, want)
	}
}

func TestRoundTripLatency(t *testing.T) {
	f := New(1)
	if d := f.RoundTripDelay(); d != 0 {
		t.Fatalf("delay %v before any is set", d)
	}
	f.SetRoundTripLatency(20 * time.Millisecond)
	f.SetLatency("", time.Millisecond)
	if d := f.RoundTripDelay(); d != 20*time.Millisecond {
		t.Fatalf("round trip %v; want 20ms, apart from the per-operation latency", d)
	}
	if c := f.Counts(); c.Delayed != 1 {
		t.Fatalf("counts %+v; want one delayed round trip", c)
	}
	f.Reset()
	if d := f.RoundTripDelay(); d != 0 {
		t.Fatalf("Reset left a round-trip delay of %v", d)
	}
}
