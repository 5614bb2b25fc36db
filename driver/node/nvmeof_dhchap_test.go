package node

import (
	"context"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/volumecontext"
)

const (
	testHostKey = "DHHC-1:01:aGhoaGhoaGhoaGhoaGhoaGhoaGhoaGhoaGhoaGhoaGicgrbe:"
	testCtrlKey = "DHHC-1:01:Y2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2O1g8Y8:"
)

// The DH-HMAC-CHAP keys of the node-stage secret reach nvme connect (and
// only it); the log has neither.
func TestNVMeoFStageDHCHAP(t *testing.T) {
	f := newAttachFixture(t)
	nvmeTarget(f, true)
	r := f.stageCtx(nvmeCtx(volumecontext.KeyDHCHAP, volumecontext.DHCHAPRequired), mountCap(snw))
	r.Secrets = map[string]string{SecretDHCHAPHostKey: testHostKey, SecretDHCHAPCtrlKey: testCtrlKey}
	f.mustStage(t, r)

	want := []string{"nvme connect --nqn " + testNQN + " --transport tcp --traddr 10.0.0.5 --trsvcid 4420 --dhchap-secret=" + testHostKey + " --dhchap-ctrl-secret=" + testCtrlKey}
	if got := f.sim.lines("nvme connect"); !slices.Equal(got, want) {
		t.Fatalf("connect commands\n got %q\nwant %q", got, want)
	}
	for _, k := range []string{testHostKey, testCtrlKey, "aGhoaGho", "Y2NjY2Nj"} {
		if strings.Contains(f.logs.String(), k) {
			t.Fatalf("a key reached the log:\n%s", f.logs.String())
		}
	}
	if !strings.Contains(f.logs.String(), "--dhchap-secret=<redacted>") {
		t.Errorf("the connect is not logged redacted:\n%s", f.logs.String())
	}
}

// A democratic-csi scoped secret key works too; without dhchap in the
// context, keys that are given are still passed.
func TestNVMeoFStageDHCHAPScopedSecret(t *testing.T) {
	f := newAttachFixture(t)
	nvmeTarget(f, true)
	r := f.stageCtx(nvmeCtx(), mountCap(snw))
	r.Secrets = map[string]string{"democratic-csi.org/zfs-generic-nvmeof/" + SecretDHCHAPHostKey: testHostKey}
	f.mustStage(t, r)
	if got := f.sim.lines("nvme connect"); len(got) != 1 || !strings.HasSuffix(got[0], " --dhchap-secret="+testHostKey) {
		t.Fatalf("connect commands %q", got)
	}
}

// A volume whose target requires DH-HMAC-CHAP and a node-stage secret
// without the key: FAILED_PRECONDITION naming the secret key and the
// StorageClass parameter, before anything connects; a malformed key is
// INVALID_ARGUMENT without quoting it.
func TestNVMeoFStageDHCHAPMissing(t *testing.T) {
	for _, tc := range []struct {
		name    string
		secrets map[string]string
		code    codes.Code
		want    []string
	}{
		{"no secret", nil, codes.FailedPrecondition, []string{"dhchapSecret", "csi.storage.k8s.io/node-stage-secret-name"}},
		{"ctrl alone", map[string]string{SecretDHCHAPCtrlKey: testCtrlKey}, codes.FailedPrecondition, []string{"dhchapSecret"}},
		{"malformed", map[string]string{SecretDHCHAPHostKey: "not-a-key-secretvalue"}, codes.InvalidArgument, []string{"dhchapSecret is not a DH-HMAC-CHAP key"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newAttachFixture(t)
			nvmeTarget(f, true)
			r := f.stageCtx(nvmeCtx(volumecontext.KeyDHCHAP, volumecontext.DHCHAPRequired), mountCap(snw))
			r.Secrets = tc.secrets
			_, err := f.svc.NodeStageVolume(context.Background(), r)
			if status.Code(err) != tc.code {
				t.Fatalf("NodeStageVolume: %v, want %s", err, tc.code)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%v: want %q", err, w)
				}
			}
			for _, k := range []string{testCtrlKey, "secretvalue"} {
				if strings.Contains(err.Error(), k) || strings.Contains(f.logs.String(), k) {
					t.Errorf("a secret reached the error or log: %v", err)
				}
			}
			if got := f.sim.lines("nvme connect"); len(got) != 0 {
				t.Errorf("connected anyway: %q", got)
			}
		})
	}
}
