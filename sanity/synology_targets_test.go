package sanity

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/switchyard-csi/switchyard/simulators/synology"
)

// noNodeSynology is why the Synology targets' node specs do not run here.
const noNodeSynology = "node specs need an iSCSI initiator, an NFS or a CIFS client: the host kernel has none (no modules); the storage VM tier runs them"

// Each Synology target gets a DSM of its own: a LUN name is the volume
// name itself (csi-sanity's 128-character names leave no room for a
// prefix), so targets sharing a DSM would list each other's volumes.
//
// The targets list has no placeholder for this host, so the simulators
// listen from init on ports of their own and are made (in a scratch
// directory under the system's temporary directory) by their first
// request: a run that never reaches a Synology target makes nothing.
//
// In the storage VM (SANITY_KERNEL=1) the simulators serve their LUNs and
// shares through the VM's kernel (vmKernel). The DSMs then must not
// collide in the kernel: each has its own volume (/volume<n>: NFS exports
// are /volume<n>/<share>), base IQN and SMB share prefix.
//
// In the VM tier (vmTargetNames) since 2026-11-26: synology-iscsi/proxy.
// In the VM, node specs included: synology-iscsi/proxy 90 passed, 0
// failed, 13 skipped (each explained) in 65.8 s; its +block variant 85
// passed in about 70 s.
//
// synology-nfs/proxy's node mounts got no answer in the VM (2026-11-26)
// because the VM's rpc.mountd segfaulted on the first upcall for the
// share's crossmnt export; the simulator no longer gives crossmnt to the
// kernel (simulators/synology/kernel.go). With that, synology-nfs/proxy
// and synology-smb/proxy passed in the VM, node specs included: 54 passed,
// 0 failed, 12 skipped each (SANITY_VM_FOCUS='synology-(nfs|smb)/proxy
// (Node|Controller)', 160 s); both are in vmTargetNames.
func init() {
	targets = append(targets, synologyTargets()...)
}

// synologyTargets: each flavour standalone and behind the proxy.
func synologyTargets() []target {
	var out []target
	for _, flavour := range []string{"iscsi", "nfs", "smb"} {
		driver := "synology-" + flavour
		direct := lazySynology(driver + "-direct")
		proxied := lazySynology(driver + "-proxy")
		block := flavour == "iscsi"
		out = append(out,
			target{name: driver + "/direct", main: synologyConfig(driver, direct), noNode: noNodeSynology, block: block},
			target{
				name:        driver + "/proxy",
				main:        "driver: proxy\nproxy:\n  configFolder: {{dir}}/connections\n",
				connections: map[string]string{"syno": synologyConfig(driver, proxied)},
				params:      map[string]string{"connection": "syno"}, noNode: noNodeSynology, block: block,
			})
	}
	return out
}

// synologyConfig is democratic-csi's config of a flavour for a DSM (http,
// as democratic-csi's example).
func synologyConfig(driver string, dsm *lazyDSM) string {
	host, port, _ := net.SplitHostPort(dsm.addr)
	n := strconv.Itoa(dsm.n)
	cfg := fmt.Sprintf(`driver: %s
instance_id: sanity
httpConnection:
  protocol: http
  host: %s
  port: %s
  username: %s
  password: %s
  session: switchyard-sanity
synology:
  volume: /volume%s
`, driver, host, port, synology.DefaultUser, synology.DefaultPassword, n)
	switch driver {
	case "synology-iscsi":
		cfg += "iscsi:\n  targetPortal: 127.0.0.1:3260\n  baseiqn: iqn.2000-01.com.synology:sanity-" + n + ".\n  lunTemplate:\n    type: BLUN\n  lunSnapshotTemplate:\n    is_locked: true\n  targetTemplate:\n    auth_type: 0\n    max_sessions: 0\n"
	case "synology-nfs":
		cfg += "nfs:\n  shareHost: 127.0.0.1\n  shareAllowedNetworks: [127.0.0.0/8]\n"
	case "synology-smb":
		cfg += "smb:\n  shareHost: 127.0.0.1\n  namePrefix: s" + n + "-\n  shareUsers: [" + smbUser + "]\n"
	}
	return cfg
}

// lazySynology listens on 127.0.0.1; the simulator behind the address
// is made by the first request.
func lazySynology(name string) *lazyDSM {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic("synology sanity host: " + err.Error())
	}
	dsmCount++
	h := &lazyDSM{name: name, n: dsmCount, addr: l.Addr().String()}
	go (&http.Server{Handler: h, ReadHeaderTimeout: 30 * time.Second}).Serve(l)
	return h
}

var dsmCount int

type lazyDSM struct {
	name string
	n    int // its volume is /volume<n>
	addr string
	once sync.Once
	srv  *synology.Server
	err  error
}

func (h *lazyDSM) start() {
	o := synology.Options{
		StateDir: filepath.Join(synologyScratch(), h.name), Plain: true, DeleteDelay: 20 * time.Millisecond,
		Users:   map[string]string{synology.DefaultUser: synology.DefaultPassword, smbUser: smbPassword},
		Volumes: []synology.Volume{{Path: "/volume" + strconv.Itoa(h.n), Size: 1 << 40}},
		Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	if kernelMode() {
		k, reason := vmKernel()
		if k == nil {
			h.err = fmt.Errorf("in the VM but the kernel targets are unusable: %s", reason)
			return
		}
		o.Kernel, o.Owner = k, "sanity-"+h.name
	}
	h.srv, h.err = synology.New(o)
}

func (h *lazyDSM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.once.Do(h.start)
	if h.err != nil {
		http.Error(w, h.err.Error(), http.StatusInternalServerError)
		return
	}
	h.srv.ServeHTTP(w, r)
}

var (
	scratchOnce sync.Once
	scratchDir  string
)

// synologyScratch is this test binary's scratch directory for the
// simulators' state; those of test binaries that are gone are removed.
func synologyScratch() string {
	scratchOnce.Do(func() {
		base := filepath.Join(os.TempDir(), "switchyard-sanity-synology")
		if old, err := os.ReadDir(base); err == nil {
			for _, e := range old {
				if pid, err := strconv.Atoi(e.Name()); err == nil && pid != os.Getpid() && !alive(pid) {
					os.RemoveAll(filepath.Join(base, e.Name()))
				}
			}
		}
		scratchDir = filepath.Join(base, strconv.Itoa(os.Getpid()))
	})
	return scratchDir
}

func alive(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return err == nil || !strings.Contains(err.Error(), "no such file")
}
