package assembly

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Every way a config can name no usable driver type reads the same from
// all three entry points: start-up (New), `switchyard config check`
// (Check) and the proxy loading the same file as a connection. Only the
// proxy's own "connection <name>: " prefix and its one-line form differ.
func TestResolveFailuresReadTheSameEverywhere(t *testing.T) {
	tests := []struct {
		name, content string
		// want is the problem text with FILE for the file's path.
		want string
		code codes.Code // what the proxy answers
		// connectionOnly: a valid main config (driver: proxy), so only
		// the proxy and the check of its folder see the failure.
		connectionOnly bool
	}{
		{name: "missing", content: "local-hostpath:\n  shareBasePath: /x\n",
			want: "FILE: driver: required: the driver type this file configures, e.g. local-hostpath (proxy only in a main config)",
			code: codes.FailedPrecondition},
		{name: "objectivefs", content: "driver: objectivefs\n",
			want: "FILE: driver: objectivefs cannot be used in switchyard, standalone or behind the proxy: its NodeStageVolume needs the driver config, which node calls never see; run it in its own democratic-csi deployment",
			code: codes.InvalidArgument},
		{name: "ephemeral", content: "driver: zfs-local-ephemeral-inline\n",
			want: "FILE: driver: zfs-local-ephemeral-inline cannot be used in switchyard, standalone or behind the proxy: inline ephemeral volumes never pass through CreateVolume, so no handle can carry the connection; use zfs-local-dataset or zfs-local-zvol, or run it in its own democratic-csi deployment",
			code: codes.InvalidArgument},
		{name: "nested", content: "driver: proxy\nproxy:\n  configFolder: /tmp\n", connectionOnly: true,
			want: "FILE: driver: proxy cannot be used behind the proxy: a proxy cannot route to another proxy; name a backend driver type here, e.g. local-hostpath",
			code: codes.InvalidArgument},
		{name: "planned", content: "driver: synology-iscsi\n",
			want: "FILE: driver: synology-iscsi is not available in this build of switchyard yet; this build has: local-hostpath",
			code: codes.FailedPrecondition},
		{name: "unknown", content: "driver: teleport\n",
			want: `FILE: driver: unknown driver "teleport"; known: local-hostpath (proxy only in a main config)`,
			code: codes.FailedPrecondition},
		{name: "typo", content: "driver: local-hostpth\n",
			want: `FILE: driver: unknown driver "local-hostpth"; did you mean "local-hostpath"?; known: local-hostpath (proxy only in a main config)`,
			code: codes.FailedPrecondition},
		{name: "invalid", content: "driver: local-hostpath\nlocal-hostpath:\n  shareBasePath: x\n",
			want: "FILE: local-hostpath.shareBasePath: must be an absolute path, got \"x\"\nFILE: local-hostpath.controllerBasePath: required: the absolute path of the directory that holds the volumes",
			code: codes.FailedPrecondition},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			conns := filepath.Join(dir, "conns")
			file := writeFile(t, filepath.Join(conns, tt.name+".yaml"), tt.content)
			want := strings.ReplaceAll(tt.want, "FILE", file)

			if !tt.connectionOnly {
				// Start-up, standalone.
				_, err := New(Options{ConfigFile: file, NodeName: "n", StateDir: t.TempDir(), Logger: quiet})
				if err == nil || err.Error() != want {
					t.Errorf("start-up:\n got %v\nwant %s", err, want)
				}
				// config check of the same file as a main config.
				if got := Check(file).Error(); got != want {
					t.Errorf("config check:\n got %s\nwant %s", got, want)
				}
			}

			// config check of a proxy whose folder holds the file.
			main := writeFile(t, filepath.Join(dir, "main.yaml"), "driver: proxy\nproxy:\n  configFolder: "+conns+"\n  nodeTopology:\n    type: node\n")
			if got := Check(main).Error(); got != want {
				t.Errorf("config check of the proxy:\n got %s\nwant %s", got, want)
			}

			// The proxy loading the file as connection tt.name.
			p, err := New(Options{ConfigFile: main, NodeName: "n", Modes: []string{ModeController}, Logger: quiet})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			_, err = p.Controller.CreateVolume(context.Background(), &csipb.CreateVolumeRequest{Name: "pvc-1", Parameters: map[string]string{"connection": tt.name},
				VolumeCapabilities: []*csipb.VolumeCapability{{AccessType: &csipb.VolumeCapability_Mount{Mount: &csipb.VolumeCapability_MountVolume{}},
					AccessMode: &csipb.VolumeCapability_AccessMode{Mode: csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER}}}})
			st := status.Convert(err)
			wantProxy := "connection " + tt.name + ": " + strings.ReplaceAll(want, "\n", "; ")
			if st.Code() != tt.code || st.Message() != wantProxy {
				t.Errorf("proxy:\n got %s %s\nwant %s %s", st.Code(), st.Message(), tt.code, wantProxy)
			}
		})
	}
}
