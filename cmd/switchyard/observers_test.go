package main

import (
	"errors"
	"reflect"
	"testing"
)

type recordObs struct{ got []string }

func (r *recordObs) ConnectionLoaded(name, file string, err error) {
	r.got = append(r.got, "loaded "+name+" "+file+" "+map[bool]string{true: "broken", false: "ok"}[err != nil])
}
func (r *recordObs) ConnectionRemoved(name string) { r.got = append(r.got, "removed "+name) }

// Every observer hears every report, in order: metrics and events both
// see a broken file.
func TestObserversTellEach(t *testing.T) {
	a, b := &recordObs{}, &recordObs{}
	all := observers{a, b}
	all.ConnectionLoaded("nas", "/c/nas.yaml", errors.New("bad"))
	all.ConnectionLoaded("nas", "/c/nas.yaml", nil)
	all.ConnectionRemoved("nas")
	want := []string{"loaded nas /c/nas.yaml broken", "loaded nas /c/nas.yaml ok", "removed nas"}
	if !reflect.DeepEqual(a.got, want) || !reflect.DeepEqual(b.got, want) {
		t.Errorf("got %v and %v, want %v each", a.got, b.got, want)
	}
}
