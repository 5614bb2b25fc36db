package engine_test

import (
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ModifyVolume over the simulated host: the properties land on the
// dataset in one `zfs set`, and every bad key or value is refused before
// anything changes.
func TestSimModifyVolume(t *testing.T) {
	h := startHost(t)
	for _, d := range []struct {
		driver string
		block  bool
	}{{"zfs-generic-nfs", false}, {"zfs-generic-iscsi", true}} {
		t.Run(d.driver, func(t *testing.T) {
			s := newSimEngine(t, h, d.driver, "modify-"+strings.TrimPrefix(d.driver, "zfs-generic-"), nil)
			v := s.mustCreateVolume(t, "pvc-modify", 64*mib, nil)
			ds := s.parent + "/" + v.GetVolumeId()

			params := map[string]string{"compression": "zstd-3", "sync": "always"}
			if !d.block {
				params["atime"] = "off"
				params["recordsize"] = "16K"
			}
			if _, err := s.ControllerModifyVolume(ctx, &csi.ControllerModifyVolumeRequest{VolumeId: v.GetVolumeId(), MutableParameters: params}); err != nil {
				t.Fatalf("ControllerModifyVolume: %v", err)
			}
			want := map[string]string{"compression": "zstd-3", "sync": "always"}
			if !d.block {
				want["atime"] = "off"
				want["recordsize"] = "16384"
			}
			for p, w := range want {
				if got := zfsGet(t, h, p, ds); got != w {
					t.Errorf("%s after modify = %q, want %q", p, got, w)
				}
			}

			bad := []struct {
				params map[string]string
				code   codes.Code
				says   []string
			}{
				{map[string]string{"XXX_FakeKey": "x"}, codes.InvalidArgument, []string{"XXX_FakeKey", "compression", "sync"}},
				{map[string]string{"volblocksize": "8K"}, codes.InvalidArgument, []string{"volblocksize", "fixed"}},
				{map[string]string{"encryption": "on"}, codes.InvalidArgument, []string{"encryption", "fixed"}},
				{map[string]string{"refquota": "1G"}, codes.InvalidArgument, []string{"resize the PVC"}},
				{map[string]string{"compression": "zip"}, codes.InvalidArgument, []string{"compression", "zip"}},
				{map[string]string{"sync": "always", "copies": "7"}, codes.InvalidArgument, []string{"copies"}},
			}
			if d.block {
				// A filesystem-only property on a zvol names the key and
				// leaves it out of the list.
				bad = append(bad, struct {
					params map[string]string
					code   codes.Code
					says   []string
				}{map[string]string{"recordsize": "16K"}, codes.InvalidArgument, []string{"recordsize", "volumes can change"}})
			}
			for _, b := range bad {
				_, err := s.ControllerModifyVolume(ctx, &csi.ControllerModifyVolumeRequest{VolumeId: v.GetVolumeId(), MutableParameters: b.params})
				wantCode(t, "modify "+strings.Join(keys(b.params), ","), err, b.code)
				for _, w := range b.says {
					if !strings.Contains(status.Convert(err).Message(), w) {
						t.Errorf("modify %v: %q does not say %q", b.params, status.Convert(err).Message(), w)
					}
				}
			}
			// Nothing changed by the refused calls (all or none).
			if got := zfsGet(t, h, "copies", ds); got != "1" {
				t.Errorf("copies = %q after a refused modify, want 1", got)
			}

			_, err := s.ControllerModifyVolume(ctx, &csi.ControllerModifyVolumeRequest{VolumeId: "pvc-nope", MutableParameters: params})
			wantCode(t, "modify of a missing volume", err, codes.NotFound)
			_, err = s.ControllerModifyVolume(ctx, &csi.ControllerModifyVolumeRequest{MutableParameters: params})
			wantCode(t, "modify without a volume id", err, codes.InvalidArgument)

			// CreateVolume's check (the one-line hook in CreateVolume calls it).
			if err := s.CheckMutableParameters(map[string]string{"XXX_FakeKey": "x"}); status.Code(err) != codes.InvalidArgument {
				t.Errorf("CheckMutableParameters of an unknown key: %v", err)
			}
			if err := s.SetMutableParameters(ctx, ds, map[string]string{"logbias": "throughput"}); err != nil {
				t.Fatal(err)
			}
			if got := zfsGet(t, h, "logbias", ds); got != "throughput" {
				t.Errorf("logbias = %q, want throughput", got)
			}
			s.mustDeleteVolume(t, v.GetVolumeId())
		})
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
