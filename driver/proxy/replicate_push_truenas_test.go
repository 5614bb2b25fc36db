package proxy

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"golang.org/x/crypto/ssh"
	"google.golang.org/grpc/codes"

	"github.com/switchyard-csi/switchyard/lab/truenashost"
	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
	"github.com/switchyard-csi/switchyard/simulators/zfsssh"
)

// tnCall runs a middleware method in-process on h as root: the lab's way
// of doing what an administrator does in the UI.
func tnCall(t *testing.T, h *truenashost.Host, method string, params ...any) map[string]any {
	t.Helper()
	m, ok := h.Server.Registry().Lookup(method)
	if !ok {
		t.Fatalf("no method %s", method)
	}
	raw := make([]json.RawMessage, len(params))
	for i, p := range params {
		b, err := json.Marshal(p)
		must(t, err)
		raw[i] = b
	}
	res, err := m.Handler(&middleware.Call{Ctx: context.Background(), Version: h.Server.Version(), User: "root", Progress: func(float64, string) {}}, raw)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	b, _ := json.Marshal(res)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return out
}

// sshPeer starts the target system's SSH endpoint accepting a fresh key
// and returns its address, the private key (PEM) and its host key line,
// as ssh-keyscan would print it.
func sshPeer(t *testing.T, hb *truenashost.Host) (host string, port int, privPEM, hostKey string) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	must(t, err)
	spub, err := ssh.NewPublicKey(pub)
	must(t, err)
	blk, err := ssh.MarshalPrivateKey(priv, "")
	must(t, err)
	addr, err := hb.Server.StartSSH("127.0.0.1:0", map[string]zfsssh.User{"root": {AuthorizedKeys: []ssh.PublicKey{spub}}})
	must(t, err)
	var seen ssh.PublicKey
	c, err := ssh.Dial("tcp", addr, &ssh.ClientConfig{User: "keyscan", HostKeyCallback: func(_ string, _ net.Addr, k ssh.PublicKey) error { seen = k; return nil }})
	if err == nil {
		_ = c.Close()
	}
	if seen == nil {
		t.Fatalf("no host key from %s: %v", addr, err)
	}
	h, p, _ := net.SplitHostPort(addr)
	var pn int
	for _, ch := range p {
		pn = pn*10 + int(ch-'0')
	}
	return h, pn, string(pem.EncodeToMemory(blk)), "[" + h + "]:" + p + " " + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(seen)))
}

// seedCredential makes, on the source system, the key pair and the SSH
// connection to the target (Credentials > Backup Credentials).
func seedCredential(t *testing.T, ha, hb *truenashost.Host, name string) {
	t.Helper()
	host, port, priv, hostKey := sshPeer(t, hb)
	kp := tnCall(t, ha, "keychaincredential.create", map[string]any{"name": name + "-key", "type": "SSH_KEY_PAIR", "attributes": map[string]any{"private_key": priv}})
	tnCall(t, ha, "keychaincredential.create", map[string]any{"name": name, "type": "SSH_CREDENTIALS", "attributes": map[string]any{
		"host": host, "port": port, "username": "root", "private_key": kp["id"], "remote_host_key": hostKey}})
}

func datasetsUnder(h *truenashost.Host, root string) string {
	var out, errb strings.Builder
	h.Server.Model().ZFS([]string{"list", "-H", "-o", "name", "-t", "all", "-r", root}, nil, &out, &errb)
	return out.String()
}

// Two TrueNAS systems, the source connection naming an SSH connection of
// its keychain (replication.sshCredentials): clone and restore are made
// by the source system's replication over SSH into the target system
// (another simulator, over its real SSH endpoint); the copies hold the
// data and are fresh volumes of the target connection.
func TestCloneAcrossTrueNASSystemsOverSSHReplication(t *testing.T) {
	r := newRig(t)
	ha, hb := startTrueNAS(t), startTrueNAS(t)
	seedCredential(t, ha, hb, "to-nas-b")
	r.write("tn-a", ha.DriverConfig("freenas-api-nfs", "old", "")+"replication:\n  sshCredentials: to-nas-b\n")
	r.write("tn-b", hb.DriverConfig("freenas-api-nfs", "new", ""))
	ctx := context.Background()
	src, err := r.ctl.CreateVolume(ctx, setReq("pvc-src", map[string]string{ConnectionParameter: "tn-a"}, nil))
	must(t, err)
	ma, mb := ha.Server.Model(), hb.Server.Model()
	dir, ok := ma.HostPath(tnGet(t, ma, ha.Pool+"/k8s/old/pvc-src", "mountpoint"))
	if !ok {
		t.Fatal("source not mounted")
	}
	must(t, os.WriteFile(filepath.Join(dir, "data.txt"), []byte("pushed over SSH\n"), 0o644))

	moved, err := r.ctl.CreateVolume(ctx, cloneReq("pvc-moved", "tn-b", src.GetVolume().GetVolumeId()))
	if err != nil {
		t.Fatalf("clone across TrueNAS systems: %v", err)
	}
	if got := moved.GetVolume().GetVolumeId(); got != "v:tn-b/pvc-moved" {
		t.Fatalf("handle %s", got)
	}
	dstDS := hb.Pool + "/k8s/new/pvc-moved"
	ddir, ok := mb.HostPath(tnGet(t, mb, dstDS, "mountpoint"))
	if !ok {
		t.Fatalf("%s is not mounted", dstDS)
	}
	if b, err := os.ReadFile(filepath.Join(ddir, "data.txt")); err != nil || string(b) != "pushed over SSH\n" {
		t.Fatalf("copied data %q, %v", b, err)
	}
	for prop, want := range map[string]string{
		"democratic-csi:csi_volume_name":   "pvc-moved",
		"democratic-csi:provision_success": "true",
	} {
		if got := tnGet(t, mb, dstDS, prop); got != want {
			t.Fatalf("%s %s = %q, want %q", dstDS, prop, got, want)
		}
	}
	if l := datasetsUnder(hb, dstDS); strings.Contains(l, "@") {
		t.Fatalf("the copy keeps replicated snapshots: %s", l)
	}
	if l := datasetsUnder(ha, ha.Pool+"/k8s/old/pvc-src"); strings.Contains(l, "@") {
		t.Fatalf("the temporary source snapshot was left: %s", l)
	}
	if vc := moved.GetVolume().GetVolumeContext(); vc["share"] != "/mnt/"+dstDS {
		t.Fatalf("volume context %v; want the share of %s", vc, dstDS)
	}
	if id := tnGet(t, mb, dstDS, "democratic-csi:freenas_nfs_share_id"); id == "" || id == "-" {
		t.Fatalf("the copy has no NFS share of its own (%q)", id)
	}

	snap, err := r.ctl.CreateSnapshot(ctx, &csipb.CreateSnapshotRequest{Name: "snap-1", SourceVolumeId: src.GetVolume().GetVolumeId()})
	must(t, err)
	if _, err := r.ctl.CreateVolume(ctx, cloneReq("pvc-restored", "tn-b", snap.GetSnapshot().GetSnapshotId())); err != nil {
		t.Fatalf("restore across systems: %v", err)
	}
	rdir, _ := mb.HostPath(tnGet(t, mb, hb.Pool+"/k8s/new/pvc-restored", "mountpoint"))
	if b, err := os.ReadFile(filepath.Join(rdir, "data.txt")); err != nil || string(b) != "pushed over SSH\n" {
		t.Fatalf("restored data %q, %v", b, err)
	}
}

// A credential the source system does not have: FAILED_PRECONDITION
// naming the key and the credential; nothing is made on either side. An
// SSH connection that cannot log in: FAILED_PRECONDITION, and the partial
// target is removed.
func TestCloneAcrossTrueNASSystemsBadCredential(t *testing.T) {
	r := newRig(t)
	ha, hb := startTrueNAS(t), startTrueNAS(t)
	seedCredential(t, ha, hb, "to-nas-b")
	// a second credential whose key the target does not accept
	other := unauthorizedKey(t)
	kp := tnCall(t, ha, "keychaincredential.create", map[string]any{"name": "stale-key", "type": "SSH_KEY_PAIR", "attributes": map[string]any{"private_key": other}})
	host, port, hostKey := sshAddrOf(t, ha, "to-nas-b")
	tnCall(t, ha, "keychaincredential.create", map[string]any{"name": "stale", "type": "SSH_CREDENTIALS", "attributes": map[string]any{
		"host": host, "port": port, "private_key": kp["id"], "remote_host_key": hostKey}})
	r.write("tn-a", ha.DriverConfig("freenas-api-nfs", "old", "")+"replication:\n  sshCredentials: nas-c\n")
	r.write("tn-s", ha.DriverConfig("freenas-api-nfs", "stale", "")+"replication:\n  sshCredentials: stale\n")
	r.write("tn-b", hb.DriverConfig("freenas-api-nfs", "new", ""))
	ctx := context.Background()
	src, err := r.ctl.CreateVolume(ctx, setReq("pvc-src", map[string]string{ConnectionParameter: "tn-a"}, nil))
	must(t, err)
	before := datasetsUnder(ha, ha.Pool)
	_, err = r.ctl.CreateVolume(ctx, cloneReq("pvc-moved", "tn-b", src.GetVolume().GetVolumeId()))
	t.Logf("unknown credential: %v", err)
	wantCode(t, "unknown credential", err, codes.FailedPrecondition, "replication.sshCredentials", `"nas-c"`, "to-nas-b")
	if after := datasetsUnder(ha, ha.Pool); after != before {
		t.Fatalf("source changed:\n%s\nwas\n%s", after, before)
	}
	if l := datasetsUnder(hb, hb.Pool); strings.Contains(l, "pvc-moved") {
		t.Fatalf("something was made on the target: %s", l)
	}

	src2, err := r.ctl.CreateVolume(ctx, setReq("pvc-src2", map[string]string{ConnectionParameter: "tn-s"}, nil))
	must(t, err)
	before = datasetsUnder(ha, ha.Pool)
	_, err = r.ctl.CreateVolume(ctx, cloneReq("pvc-moved2", "tn-b", src2.GetVolume().GetVolumeId()))
	t.Logf("stale credential: %v", err)
	wantCode(t, "credential that cannot log in", err, codes.FailedPrecondition, "replication.sshCredentials", `"stale"`)
	if after := datasetsUnder(ha, ha.Pool); after != before {
		t.Fatalf("source changed:\n%s\nwas\n%s", after, before)
	}
	if l := datasetsUnder(hb, hb.Pool); strings.Contains(l, "pvc-moved2") {
		t.Fatalf("a partial copy was left on the target: %s", l)
	}
}

// unauthorizedKey is a private key (PEM) the target does not accept.
func unauthorizedKey(t *testing.T) string {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	must(t, err)
	blk, err := ssh.MarshalPrivateKey(priv, "")
	must(t, err)
	return string(pem.EncodeToMemory(blk))
}

// sshAddrOf reads host, port and host key of a credential on h.
func sshAddrOf(t *testing.T, h *truenashost.Host, name string) (string, int, string) {
	t.Helper()
	rows, err := h.Query("keychaincredential.query")
	must(t, err)
	for _, r := range rows {
		if r["name"] == name {
			a, _ := r["attributes"].(map[string]any)
			host, _ := a["host"].(string)
			port, _ := a["port"].(float64)
			key, _ := a["remote_host_key"].(string)
			return host, int(port), key
		}
	}
	t.Fatalf("no credential %s", name)
	return "", 0, ""
}

// zvols (iSCSI) cross systems the same way: the volume arrives with its
// size and data, and gets the target's own extent.
func TestCloneZvolAcrossTrueNASSystemsOverSSHReplication(t *testing.T) {
	r := newRig(t)
	ha, hb := startTrueNAS(t), startTrueNAS(t)
	seedCredential(t, ha, hb, "to-nas-b")
	r.write("tn-a", ha.DriverConfig("freenas-api-iscsi", "old", "")+"replication:\n  sshCredentials: to-nas-b\n")
	r.write("tn-b", hb.DriverConfig("freenas-api-iscsi", "new", ""))
	ctx := context.Background()
	req := setReq("pvc-blk", map[string]string{ConnectionParameter: "tn-a"}, nil)
	req.CapacityRange = &csipb.CapacityRange{RequiredBytes: 64 << 20}
	req.VolumeCapabilities = []*csipb.VolumeCapability{{
		AccessType: &csipb.VolumeCapability_Block{Block: &csipb.VolumeCapability_BlockVolume{}},
		AccessMode: &csipb.VolumeCapability_AccessMode{Mode: csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
	}}
	src, err := r.ctl.CreateVolume(ctx, req)
	must(t, err)
	clone := cloneReq("pvc-blk-moved", "tn-b", src.GetVolume().GetVolumeId())
	clone.CapacityRange, clone.VolumeCapabilities = req.CapacityRange, req.VolumeCapabilities
	moved, err := r.ctl.CreateVolume(ctx, clone)
	if err != nil {
		t.Fatalf("zvol clone across TrueNAS systems: %v", err)
	}
	mb := hb.Server.Model()
	dstDS := hb.Pool + "/k8s/new/pvc-blk-moved"
	if got := tnGet(t, mb, dstDS, "type"); got != "volume" {
		t.Fatalf("%s type %q", dstDS, got)
	}
	if got := tnGet(t, mb, dstDS, "volsize"); got != "64M" {
		t.Fatalf("%s volsize %q", dstDS, got)
	}
	if got := tnGet(t, mb, dstDS, "democratic-csi:provision_success"); got != "true" {
		t.Fatalf("provision_success %q", got)
	}
	if moved.GetVolume().GetVolumeContext()["iqn"] == src.GetVolume().GetVolumeContext()["iqn"] {
		t.Fatalf("the copy shares the source's target: %v", moved.GetVolume().GetVolumeContext())
	}
}
