package truenas

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
	"github.com/switchyard-csi/switchyard/simulators/zfsssh"
)

// StartSSH serves SSH on addr over the same ZFS model, for the freenas-*
// (SSH) and zfs-generic-* backends: a real SSH server whose shell runs zfs,
// zpool, targetcli and nvmetcli (simulators/zfsssh), reporting Linux and
// Options.Hostname, with its LIO/nvmet state in StateDir/ssh. It returns
// the address listened on. One SSH endpoint per server.
func (s *Server) StartSSH(addr string, users map[string]zfsssh.User) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return "", ErrServerClosed
	}
	if len(s.ssh) > 0 {
		return "", errors.New("truenas: the SSH endpoint is already started")
	}
	srv, err := zfsssh.New(zfsssh.Options{
		Host:      s.model,
		Users:     users,
		StateDir:  filepath.Join(s.opts.StateDir, "ssh"),
		Hostname:  s.opts.Hostname,
		Uname:     zfsssh.Uname{System: "Linux", Release: kernelRelease(s.version.Year, s.version.Month)},
		FaultSeed: s.opts.FaultSeed,
		Logger:    s.log,
		// A volsize changed over SSH refreshes the API's targets as well:
		// any owner's Apply follows every resized zvol.
		Kernel:      s.opts.Kernel,
		KernelOwner: "truenas-" + s.opts.Hostname + "-ssh",
		// SCALE serves iSCSI with SCST: while the iSCSI service runs, each
		// enabled extent is a device in its sysfs, where drivers write
		// resync_size after growing a zvol.
		DynamicRoot: scstRoot,
		Dynamic:     s.scstSysfs,
	})
	if err != nil {
		return "", fmt.Errorf("truenas: SSH endpoint: %w", err)
	}
	a, err := srv.Start(addr)
	if err != nil {
		srv.Close()
		return "", fmt.Errorf("truenas: SSH endpoint: %w", err)
	}
	s.ssh = append(s.ssh, srv)
	s.SetServiceRunning("ssh") // an SSH endpoint means the admin started sshd
	return a.String(), nil
}

// kernelRelease is the uname -r of a TrueNAS release (its kernel line).
func kernelRelease(year, month int) string {
	switch {
	case year < 25:
		return "6.6.44-production+truenas"
	case year == 25 && month < 10:
		return "6.12.15-production+truenas"
	}
	return "6.12.33-production+truenas"
}

// SSHFaults is the fault-injection control of the SSH endpoint (nil
// before StartSSH): its commands fail, wait or drop like the ZFS-over-SSH
// simulator's.
func (s *Server) SSHFaults() *zfsssh.Faults {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.ssh) == 0 {
		return nil
	}
	return s.ssh[0].Faults()
}

// scstRoot is SCST's sysfs tree.
const scstRoot = "/sys/kernel/scst_tgt"

// scstSysfs lists the SCST sysfs files of the enabled iSCSI extents while
// the iscsitarget service runs (the module is loaded then), named as
// scst.conf names devices: dots become underscores, slashes dashes.
func (s *Server) scstSysfs() map[string]string {
	st := s.svcState
	if st == nil {
		return nil
	}
	st.mu.Lock()
	running := st.Running["iscsitarget"]
	st.mu.Unlock()
	if !running {
		return nil
	}
	out := map[string]string{scstRoot + "/devices/": ""}
	m, ok := s.reg.Lookup("iscsi.extent.query")
	if !ok {
		return out
	}
	res, err := m.Handler(&middleware.Call{Ctx: context.Background(), Version: s.version, User: "root", Progress: func(float64, string) {}}, nil)
	if err != nil {
		return out
	}
	raw, _ := json.Marshal(res)
	var extents []struct {
		Name    string `json:"name"`
		Path    string `json:"path"`
		Enabled bool   `json:"enabled"`
	}
	_ = json.Unmarshal(raw, &extents)
	for _, e := range extents {
		if !e.Enabled {
			continue
		}
		dev := scstRoot + "/devices/" + strings.NewReplacer(".", "_", "/", "-").Replace(e.Name)
		out[dev+"/resync_size"] = ""
		out[dev+"/filename"] = "/dev/" + e.Path + "\n"
	}
	return out
}
