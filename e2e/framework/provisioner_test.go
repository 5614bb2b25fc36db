package framework

import (
	"reflect"
	"testing"
)

func TestWithFlagsReplacesEarlierValues(t *testing.T) {
	args := []string{"--v=2", "--strict-topology=false", "--csi-address=/csi/csi.sock", "--immediate-topology"}
	got := WithFlags(args, []string{"--strict-topology=true", "--immediate-topology=false"})
	want := []string{"--v=2", "--csi-address=/csi/csi.sock", "--strict-topology=true", "--immediate-topology=false"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
