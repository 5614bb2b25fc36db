package metrics

import (
	"errors"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Copy bytes and results are counted per target connection; a target the
// proxy never loaded a file for is _unknown, so requests cannot mint labels.
func TestCopyMetrics(t *testing.T) {
	m := New()
	s := m.ConnectionState()
	mfs, err := m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range mfs {
		if f.GetName() == "switchyard_copy_bytes_total" {
			t.Fatal("copy metrics exported before any copy")
		}
	}
	s.ConnectionLoaded("nas-b", "/c/nas-b.yaml", nil)
	s.CopyProgress("nas-b", 1<<20)
	s.CopyProgress("nas-b", 1<<20)
	s.CopyFinished("nas-b", nil)
	s.CopyFinished("nas-b", status.Error(codes.ResourceExhausted, "full"))
	s.CopyProgress("ghost", 5)
	s.CopyFinished("ghost", errors.New("plain"))
	c := m.copyMetrics()
	for _, tc := range []struct {
		got, want float64
		what      string
	}{
		{testutil.ToFloat64(c.bytes.WithLabelValues("nas-b")), 2 << 20, "bytes nas-b"},
		{testutil.ToFloat64(c.copies.WithLabelValues("nas-b", "ok")), 1, "ok nas-b"},
		{testutil.ToFloat64(c.copies.WithLabelValues("nas-b", "ResourceExhausted")), 1, "exhausted nas-b"},
		{testutil.ToFloat64(c.bytes.WithLabelValues(UnknownConnection)), 5, "bytes unknown"},
		{testutil.ToFloat64(c.copies.WithLabelValues(UnknownConnection, "Unknown")), 1, "unknown result"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %v; want %v", tc.what, tc.got, tc.want)
		}
	}
}
