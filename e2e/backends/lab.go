// Package backends is the table the data-path suites iterate: one row per
// backend family with the connection file it needs, its StorageClass
// parameters, its access types, where it can run, and how to ask the
// storage system (a simulator, through its own SSH or HTTP API, never
// through the driver) what is left on it. A new backend adds a row.
package backends

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strings"
)

// Lab is the storage the cluster's nodes can reach, as written by the
// lab (make e2e) into E2E_LAB_FILE. Addresses are given twice where the
// driver's controller and this test process may reach a simulator
// differently (a port forwarded from the storage VM).
type Lab struct {
	// HostNode runs the kubelet on this machine (local-hostpath);
	// VMNode the kubelet in the storage VM, whose kernel has the NFS,
	// SMB, iSCSI and NVMe/TCP clients. Empty: found by Kubernetes label
	// or not present.
	HostNode string `json:"hostNode,omitempty"`
	VMNode   string `json:"vmNode,omitempty"`

	ZFS     *ZFSHost     `json:"zfs,omitempty"`
	TrueNAS *TrueNASHost `json:"truenas,omitempty"`
	Infinia *InfiniaHost `json:"infinia,omitempty"`

	Synology *SynologyHost `json:"synology,omitempty"`

	ShareClients *ShareClients `json:"shareClients,omitempty"`
}

// ZFSHost is a ZFS-over-SSH host (switchyard-lab zfs-ssh --kernel).
type ZFSHost struct {
	SSH      string `json:"ssh"`                // host:port for the driver
	CheckSSH string `json:"checkSSH,omitempty"` // host:port for this process (default SSH)
	User     string `json:"user"`
	Password string `json:"password"`
	Pool     string `json:"pool,omitempty"` // default tank
	// TargetHost is the address nodes mount shares and connect targets
	// at (default 127.0.0.1: the simulators serve inside the VM node).
	TargetHost string `json:"targetHost,omitempty"`
	ISCSIPort  int    `json:"iscsiPort,omitempty"` // default 3260
	NVMePort   int    `json:"nvmePort,omitempty"`  // default 4420
}

// TrueNASHost is the TrueNAS middleware simulator.
type TrueNASHost struct {
	URL        string `json:"url"`                // http(s)://host:port for the driver
	CheckURL   string `json:"checkURL,omitempty"` // for this process (default URL)
	User       string `json:"user,omitempty"`     // default root
	APIKey     string `json:"apiKey,omitempty"`   // or Password
	Password   string `json:"password,omitempty"` // of User
	Pool       string `json:"pool,omitempty"`
	TargetHost string `json:"targetHost,omitempty"`
	ISCSIPort  int    `json:"iscsiPort,omitempty"`
	NVMePort   int    `json:"nvmePort,omitempty"`
}

// InfiniaHost is the Infinia REST simulator.
type InfiniaHost struct {
	URL      string `json:"url"`
	CheckURL string `json:"checkURL,omitempty"`
	// Account is <cluster>/<tenant>/<account>, Service <subtenant>/<service>.
	Account  string `json:"account"`
	Password string `json:"password"`
	Service  string `json:"service"`
	DataPort int    `json:"dataPort,omitempty"`
}

// StorageNode is the node whose kernel reaches the simulators' targets:
// the VM's, else (a simulator on the host, nothing mounts) the host's.
func (l *Lab) StorageNode() string {
	if l.VMNode != "" {
		return l.VMNode
	}
	return l.HostNode
}

// LoadLab reads a lab file; an empty path is an empty lab.
func LoadLab(path string) (*Lab, error) {
	l := &Lab{}
	if path == "" {
		return l, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("E2E_LAB_FILE: %w", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(l); err != nil {
		return nil, fmt.Errorf("E2E_LAB_FILE %s: %w", path, err)
	}
	return l, l.check()
}

func (l *Lab) check() error {
	var bad []string
	if z := l.ZFS; z != nil {
		if _, _, err := net.SplitHostPort(z.SSH); err != nil || z.User == "" || z.Password == "" {
			bad = append(bad, "zfs: needs ssh (host:port), user and password")
		}
	}
	if t := l.TrueNAS; t != nil && (!strings.Contains(t.URL, "://") || t.APIKey == "" && t.Password == "") {
		bad = append(bad, "truenas: needs url (http(s)://host:port) and apiKey or password")
	}
	if i := l.Infinia; i != nil && (i.URL == "" || strings.Count(i.Account, "/") != 2 || strings.Count(i.Service, "/") != 1 || i.Password == "") {
		bad = append(bad, "infinia: needs url, account (<cluster>/<tenant>/<account>), service (<subtenant>/<service>) and password")
	}
	if s := l.Synology; s != nil && (!strings.Contains(s.URL, "://") || s.User == "" || s.Password == "") {
		bad = append(bad, "synology: needs url (http(s)://host:port), user and password")
	}
	if c := l.ShareClients; c != nil {
		if msg := c.check(); msg != "" {
			bad = append(bad, msg)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("E2E_LAB_FILE: %s", strings.Join(bad, "; "))
	}
	return nil
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func orInt(n, def int) int {
	if n == 0 {
		return def
	}
	return n
}
