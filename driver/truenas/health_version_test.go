package truenas_test

import (
	"context"
	"strings"
	"testing"

	"github.com/switchyard-csi/switchyard/lab/truenashost"
)

// The freenas-api-* drivers report the release the middleware says
// (system.version), for `switchyard connections`.
func TestBackendVersionAPI(t *testing.T) {
	for _, v := range []string{"25.10", "24.10"} {
		t.Run(v, func(t *testing.T) {
			h := startHost(t, truenashost.Options{Version: v})
			d := newDriver(t, h.DriverConfig("freenas-api-nfs", "vols", ""))
			vr, ok := any(d).(interface {
				BackendVersion(context.Context) (string, error)
			})
			if !ok {
				t.Fatalf("%T does not report a backend version", d)
			}
			got, err := vr.BackendVersion(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(got, v) {
				t.Fatalf("version %q; want one naming %s", got, v)
			}
		})
	}
}
