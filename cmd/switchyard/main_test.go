package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestConfigCheck(t *testing.T) {
	dir := t.TempDir()
	conns := filepath.Join(dir, "conns")
	os.MkdirAll(conns, 0o755)
	os.WriteFile(filepath.Join(conns, "ok.yaml"), []byte("driver: local-hostpath\nlocal-hostpath:\n  shareBasePath: /x\n  controllerBasePath: /x\n"), 0o600)
	main := filepath.Join(dir, "main.yaml")
	os.WriteFile(main, []byte("driver: proxy\nproxy:\n  configFolder: "+conns+"\n  nodeTopology:\n    type: node\n"), 0o600)

	var out, errOut bytes.Buffer
	if code := run([]string{"config", "check", main}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "ok") {
		t.Fatalf("good config: exit %d, %q %q", code, out.String(), errOut.String())
	}
	os.WriteFile(filepath.Join(conns, "broken.yaml"), []byte("driver: [\n"), 0o600)
	os.WriteFile(filepath.Join(conns, "unknown.yaml"), []byte("driver: teleport\n"), 0o600)
	out.Reset()
	code := run([]string{"config", "check", main}, &out, &errOut)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if code != 1 || len(lines) != 2 || !strings.Contains(out.String(), "broken.yaml: invalid YAML") || !strings.Contains(out.String(), "unknown.yaml: driver: unknown driver") {
		t.Fatalf("exit %d, want 1 with one line per problem:\n%s", code, out.String())
	}
	if code := run([]string{"config", "check"}, &out, &errOut); code != 2 {
		t.Fatalf("usage error exit %d", code)
	}
}

func TestServeFlagErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--csi-name=x", "--server-socket=/tmp/s"}, "--driver-config-file is required"},
		{[]string{"--driver-config-file=/x", "--server-socket=/tmp/s"}, "--csi-name is required"},
		{[]string{"--driver-config-file=/x", "--csi-name=x"}, "--server-socket"},
		{[]string{"--driver-config-file=/x", "--csi-name=x", "--server-socket=/s", "--csi-version=0.3.0"}, "CSI 1.x"},
		{[]string{"--driver-config-file=/nonexistent.yaml", "--csi-name=x", "--server-socket=/tmp/s"}, "/nonexistent.yaml"},
		{[]string{"--driver-config-file=/x", "--csi-name=x", "--server-socket=/s", "--csi-mode=both"}, "--csi-mode"},
		{[]string{"--log-level=chatty"}, "--log-level"},
	}
	for _, tt := range tests {
		var out, errOut bytes.Buffer
		code := run(tt.args, &out, &errOut)
		if code == 0 || !strings.Contains(errOut.String(), tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want a failure mentioning %q", tt.args, code, errOut.String(), tt.want)
		}
	}
}

// An SSH host key that nothing pins is trusted on first use: config check
// says so without failing; a knownHosts file that is not there fails it,
// naming the key.
func TestConfigCheckSSHHostKeys(t *testing.T) {
	dir := t.TempDir()
	conns := filepath.Join(dir, "conns")
	os.MkdirAll(conns, 0o755)
	main := filepath.Join(dir, "main.yaml")
	os.WriteFile(main, []byte("driver: proxy\nproxy:\n  configFolder: "+conns+"\n"), 0o600)
	zfsConn := func(extra string) string {
		return "driver: zfs-generic-nfs\nsshConnection:\n  host: 127.0.0.1\n  username: root\n  password: secret-pw\n" + extra +
			"zfs:\n  datasetParentName: tank/k8s/v\n  detachedSnapshotsDatasetParentName: tank/k8s/s\nnfs:\n  shareStrategy: setDatasetProperties\n  shareHost: 127.0.0.1\n"
	}
	known := filepath.Join(dir, "known_hosts")
	os.WriteFile(known, []byte("127.0.0.1 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n"), 0o600)
	for _, tc := range []struct {
		name, extra string
		code        int
		want, never string
	}{
		{"unpinned", "", 0, "warning: " + filepath.Join(conns, "nas.yaml") + ": sshConnection: no hostKeyFingerprint or knownHosts", "secret-pw"},
		{"fingerprint", "  hostKeyFingerprint: SHA256:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU\n", 0, "ok", "warning"},
		{"known hosts", "  knownHosts: " + known + "\n", 0, "ok", "warning"},
		{"missing known hosts", "  knownHosts: " + filepath.Join(dir, "nope") + "\n", 1, "sshConnection.knownHosts", "ok\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.WriteFile(filepath.Join(conns, "nas.yaml"), []byte(zfsConn(tc.extra)), 0o600)
			var out, errOut bytes.Buffer
			code := run([]string{"config", "check", main}, &out, &errOut)
			if code != tc.code || !strings.Contains(out.String(), tc.want) || strings.Contains(out.String(), tc.never) {
				t.Fatalf("exit %d, want %d; output must say %q and not %q:\n%s%s", code, tc.code, tc.want, tc.never, out.String(), errOut.String())
			}
		})
	}
}
