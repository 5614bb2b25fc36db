package zfs

import (
	"reflect"
	"testing"
)

// sharedKey must cover every field of SSHConfig, or two different configs
// would share a connection: a new field fails here until it is added.
func TestSharedKeyCoversEveryField(t *testing.T) {
	if n := reflect.TypeOf(SSHConfig{}).NumField(); n != 12 {
		t.Fatalf("SSHConfig has %d fields; sharedKey hashes 12: add the new ones to it", n)
	}
	base := SSHConfig{Host: "h", Username: "u", Password: "p"}
	for _, other := range []SSHConfig{
		{Host: "h2", Username: "u", Password: "p"},
		{Host: "h", Username: "u", Password: "p2"},
		{Host: "h", Port: 2222, Username: "u", Password: "p"},
		{Host: "h", Username: "u", Password: "p", MaxSessions: 3},
		{Host: "h", Username: "u", Password: "p", NoShellSession: true},
	} {
		if sharedKey(other) == sharedKey(base) {
			t.Errorf("%+v shares base's key", other.Host)
		}
	}
	if sharedKey(base) != sharedKey(SSHConfig{Host: "h", Username: "u", Password: "p"}) {
		t.Error("equal configs differ")
	}
}
