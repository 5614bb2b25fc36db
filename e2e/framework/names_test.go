package framework

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

func TestUniqueNameIsADNSLabel(t *testing.T) {
	for _, prefix := range []string{"e2e-zfs-nfs", "E2E-Mixed", strings.Repeat("x", 80), "ends-with-dash-"} {
		n := UniqueName(prefix)
		if errs := validation.IsDNS1123Label(n); len(errs) > 0 {
			t.Errorf("UniqueName(%q) = %q: %v", prefix, n, errs)
		}
	}
	seen := map[string]bool{}
	for range 50 {
		n := UniqueName("a")
		if seen[n] {
			t.Fatalf("%s twice in 50 names", n)
		}
		seen[n] = true
	}
}

func TestAffinityTerms(t *testing.T) {
	pv := &corev1.PersistentVolume{Spec: corev1.PersistentVolumeSpec{NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{
			{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "z", Operator: "In", Values: []string{"b"}}, {Key: "extra", Operator: "In", Values: []string{"yes"}}}},
			{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "z", Operator: "In", Values: []string{"a"}}}},
		},
	}}}}
	want := []string{"extra=yes,z=b", "z=a"}
	if got := AffinityTerms(pv); !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if got := AffinityTerms(&corev1.PersistentVolume{}); got != nil {
		t.Errorf("no affinity: %v", got)
	}
}
