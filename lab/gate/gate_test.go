package gate

import (
	"sync"
	"testing"
	"time"
)

func TestOpensWhenAllWait(t *testing.T) {
	g := New(3)
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() { g.Wait(10 * time.Second) })
	}
	wg.Wait()
	if !g.Opened() {
		t.Fatal("three callers waited together, yet the gate is shut")
	}
}

func TestOneAfterAnotherNeverOpens(t *testing.T) {
	g := New(2)
	start := time.Now()
	g.Wait(20 * time.Millisecond)
	if time.Since(start) < 20*time.Millisecond {
		t.Error("a lone caller was let through before its wait ended")
	}
	if g.Opened() {
		t.Error("opened after one caller")
	}
	g.Wait(20 * time.Millisecond) // the second arrives after the first gave up
	if g.Opened() {
		t.Error("two callers one after the other opened it")
	}
}
