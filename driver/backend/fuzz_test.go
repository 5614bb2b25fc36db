package backend_test

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	_ "github.com/switchyard-csi/switchyard/driver/allbackends" // every driver type's Validate
	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/config"
)

// checkResolve asserts Resolve's contract on one tree: never a panic; an
// error is a *ResolveError of a known kind whose every problem names the
// file; a type comes back alone or with Invalid problems; a type
// returned is the one the config names.
func checkResolve(t *testing.T, tree config.Tree) {
	t.Helper()
	const file = "conn.yaml"
	typ, err := backend.Resolve(tree, file)
	name, _ := backend.DriverOf(tree)
	if err != nil {
		var re *backend.ResolveError
		if !errors.As(err, &re) {
			t.Fatalf("Resolve error %T %v is not a *ResolveError", err, err)
		}
		if re.Kind < backend.MissingDriver || re.Kind > backend.Invalid || len(re.Problems) == 0 {
			t.Fatalf("Resolve error kind %d with %d problems", re.Kind, len(re.Problems))
		}
		for _, p := range re.Problems {
			if p.File != file || p.Msg == "" {
				t.Fatalf("problem %#v does not name the file or say what is wrong", p)
			}
		}
		if (typ != nil) != (re.Kind == backend.Invalid) {
			t.Fatalf("Resolve(%q) returned type %v with failure kind %d", name, typ, re.Kind)
		}
		if typ == nil {
			return
		}
	}
	if typ == nil {
		t.Fatalf("Resolve(%q) returned neither a type nor an error", name)
	}
	if typ.Name != name && !slices.Contains(typ.Aliases, name) {
		t.Fatalf("config names %q; Resolve returned type %q", name, typ.Name)
	}
}

// FuzzResolve feeds arbitrary YAML through the whole load path
// (config.Parse, then backend.Resolve with every registered type's
// Validate).
func FuzzResolve(f *testing.F) {
	for _, s := range []string{
		"driver: local-hostpath\nlocal-hostpath:\n  shareBasePath: /x\n  controllerBasePath: /x\n",
		"driver: zfs-generic-nfs\nsshConnection: {host: h, username: u, password: p}\nzfs: {datasetParentName: tank/k8s/v, detachedSnapshotsDatasetParentName: tank/k8s/s}\n",
		"driver: freenas-api-iscsi\nhttpConnection: {host: h, apiKey: k}\nzfs: {datasetParentName: tank/v}\niscsi: {targetPortal: '1.2.3.4:3260'}\n",
		"accounts:\n  a: {apis: [https://x], user: u, password: p, level: c/t}\n",
		"driver: proxy\n", "driver: objectivefs\n", "driver: nfs-client\n", "driver: locl-hostpath\n", "driver: [a]\n", "driver: 1\n",
		"driver: zfs-generic-nvmeof\nzfs: 7\nnvmeof: [x]\nsshConnection: ''\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tree, err := config.Parse(data)
		if err != nil {
			return
		}
		checkResolve(t, tree)
	})
}

// FuzzValidate runs every registered type's Validate (through Resolve) on
// arbitrary YAML: the fuzzer picks the type, so each Validate gets hostile
// trees even when the fuzzer never writes its name.
func FuzzValidate(f *testing.F) {
	for i, s := range []string{
		"zfs: {datasetParentName: tank/v}\n", "sshConnection: {host: h, port: 99999}\n", "httpConnection: {host: h, port: -1, apiVersion: 7}\n",
		"local-hostpath: {shareBasePath: ''}\n", "accounts: [1]\n", "iscsi: {targetPortals: 3}\nnvmeof: {transports: {a: b}}\n",
		"_private: {csi: {volume: {idHash: {strategy: sha9}}}}\n", "node: {format: {ext4: {customOptions: [1]}}}\n",
	} {
		f.Add(uint8(i), []byte(s))
	}
	names := backend.Names()
	f.Fuzz(func(t *testing.T, pick uint8, data []byte) {
		tree, err := config.Parse(data)
		if err != nil {
			return
		}
		tree["driver"] = names[int(pick)%len(names)]
		checkResolve(t, tree)
	})
}

// FuzzCapacity: Capacity's answer is at least required_bytes, at most
// limit_bytes when set, a whole number of blocks, never negative, and
// whatever it cannot serve is OUT_OF_RANGE; Fits agrees with it and
// CheckRange; nothing panics.
func FuzzCapacity(f *testing.F) {
	f.Add(int64(1<<30), int64(0), int64(4096))
	f.Add(int64(0), int64(0), int64(0))
	f.Add(int64(1), int64(4096), int64(4096))
	f.Add(int64(5000), int64(6000), int64(4096))
	f.Add(int64(math.MaxInt64), int64(0), int64(16384))
	f.Add(int64(-1), int64(10), int64(1))
	f.Add(int64(10), int64(5), int64(1))
	f.Add(int64(0), int64(100), int64(-7))
	f.Fuzz(func(t *testing.T, req, lim, block int64) {
		r := &csi.CapacityRange{RequiredBytes: req, LimitBytes: lim}
		size, err := backend.Capacity(r, block)
		rangeErr := backend.CheckRange(r)
		if err != nil {
			if status.Code(err) != codes.OutOfRange {
				t.Fatalf("Capacity(%d, %d, %d) = %v; want OUT_OF_RANGE", req, lim, block, err)
			}
			if len(err.Error()) > 400 {
				t.Fatalf("Capacity error is %d bytes long", len(err.Error()))
			}
			return
		}
		if rangeErr != nil {
			t.Fatalf("Capacity(%d, %d) succeeded but CheckRange says %v", req, lim, rangeErr)
		}
		if size <= 0 || size < req || (lim > 0 && size > lim) {
			t.Fatalf("Capacity(%d, %d, %d) = %d: outside the range", req, lim, block, size)
		}
		if block > 0 && size%block != 0 {
			t.Fatalf("Capacity(%d, %d, %d) = %d: not whole blocks", req, lim, block, size)
		}
		if !backend.Fits(size, r) {
			t.Fatalf("Fits(%d, [%d, %d]) = false for Capacity's own answer", size, req, lim)
		}
		if req == 0 && lim == 0 && block > 0 && block <= backend.DefaultCapacity && size < backend.DefaultCapacity {
			t.Fatalf("no range gave %d, under the default", size)
		}
		if block > 0 && req > 0 && size-req >= block {
			t.Fatalf("Capacity(%d, block %d) = %d rounds up by a whole block or more", req, block, size)
		}
	})
}
