package cluster

import (
	"bytes"
	_ "embed"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"text/template"
	"time"
)

// The guest side of the VM node (its run.sh and the configuration it
// installs) and the host side (the script Local.Spawn runs).
var (
	//go:embed files/vm-node.sh
	vmNodeScript string
	//go:embed files/vm-host.sh
	vmHostScript string
	//go:embed files/vm-mounts.sh
	vmMountsScript string
	//go:embed files/vm-containerd.toml
	vmContainerdTemplate string
	//go:embed files/vm-cni.conflist
	vmCNITemplate string
)

// vmShare is the layout of the VM node's 9p share (/lab in the guest).
type vmShare struct{ dir string }

func (s vmShare) path(elem ...string) string {
	return filepath.Join(append([]string{s.dir}, elem...)...)
}
func (s vmShare) nodeDir() string { return s.path("node") }
func (s vmShare) logsDir() string { return s.path("logs") }

// mountsDir holds the host's requests to mount a share in the guest
// (files/vm-mounts.sh): /lab/mounts in the guest.
func (s vmShare) mountsDir() string { return s.path("mounts") }

// VMShareMountRoot is where the guest mounts shares on request
// (files/vm-mounts.sh): under the kubelet's root directory, which the
// kubelet makes a shared mount and the node plugin mounts with
// Bidirectional propagation, so a share mounted there at any time appears
// in the plugin's container (its controller's controllerBasePath) without
// a volume of its own. e2e/cmd/e2e-lab writes the requests.
const VMShareMountRoot = "/var/lib/kubelet/switchyard-lab-shares"

// vmGuestNodeDir is where the guest sees the node's files.
const vmGuestNodeDir = "/lab/node"

// prepare makes the share's directories.
func (s vmShare) prepare() error {
	for _, d := range []string{s.nodeDir(), s.logsDir(), s.mountsDir(), s.path("images"), s.path("bin")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	return nil
}

// vmShareConfig is what the guest needs besides the node's bootstrap files.
type vmShareConfig struct {
	NodeName     string
	NodeIP       string
	PodSubnet    string
	SandboxImage string
	ServiceIP    string // the kubernetes service's ClusterIP
	APIServer    string // host:port of the apiserver as the guest reaches it
	Labels       map[string]string
	Images       []string // tarball file names under /lab/images, in import order
	// ImageStore is the filesystem label of a disk holding containerd's
	// root with the images imported (vmstore.go); empty: import Images.
	ImageStore  string
	Simulators  []vmSimulatorCommand
	KubeletArgs []string // the node files' flags (KubeletArgs), guest paths
}

// vmSimulatorCommand is one simulator's command line in the guest.
type vmSimulatorCommand struct {
	Name string
	Args []string // after the switchyard-lab binary
}

// writeGuestFiles writes run.sh and the node's configuration (not the
// binaries, images or bootstrap files) into the share.
func (s vmShare) writeGuestFiles(c vmShareConfig) error {
	fill := func(name, tmpl string) ([]byte, error) {
		t, err := template.New(name).Option("missingkey=error").Parse(tmpl)
		if err != nil {
			return nil, err
		}
		var b bytes.Buffer
		if err := t.Execute(&b, c); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return b.Bytes(), nil
	}
	containerd, err := fill("vm-containerd.toml", vmContainerdTemplate)
	if err != nil {
		return err
	}
	cni, err := fill("vm-cni.conflist", vmCNITemplate)
	if err != nil {
		return err
	}
	files := map[string][]byte{
		s.path("run.sh"):                  []byte(vmNodeScript),
		s.path("node", "mounts.sh"):       []byte(vmMountsScript),
		s.path("node", "node.env"):        []byte(vmNodeEnv(c)),
		s.path("node", "containerd.toml"): containerd,
		s.path("node", "cni.conflist"):    cni,
	}
	for _, sim := range c.Simulators {
		files[s.path("node", "sim-"+sim.Name+".sh")] = []byte(vmSimulatorScript(sim))
	}
	if err := s.prepare(); err != nil {
		return err
	}
	for p, b := range files {
		mode := os.FileMode(0o644)
		if strings.HasSuffix(p, ".sh") {
			mode = 0o755
		}
		if err := os.WriteFile(p, b, mode); err != nil {
			return err
		}
	}
	return nil
}

// vmNodeEnv is node.env, sourced by vm-node.sh.
func vmNodeEnv(c vmShareConfig) string {
	var sims []string
	for _, s := range c.Simulators {
		sims = append(sims, s.Name)
	}
	args := append([]string(nil), c.KubeletArgs...)
	if len(c.Labels) > 0 {
		args = append(args, "--node-labels="+vmLabelList(c.Labels))
	}
	var b strings.Builder
	b.WriteString("# Written by lab/cluster vmnode.go for vm-node.sh.\n")
	for _, kv := range [][2]string{
		{"NODE_NAME", c.NodeName},
		{"NODE_IP", c.NodeIP},
		{"SERVICE_IP", c.ServiceIP},
		{"APISERVER", c.APIServer},
		{"IMAGES", strings.Join(c.Images, " ")},
		{"IMAGE_STORE", c.ImageStore},
		{"SIMULATORS", strings.Join(sims, " ")},
		{"MOUNT_ROOT", VMShareMountRoot},
		{"KUBELET_ARGS", strings.Join(args, " ")},
	} {
		fmt.Fprintf(&b, "%s=%s\n", kv[0], vmShQuote(kv[1]))
	}
	return b.String()
}

// vmHostEnv is host.env, sourced by vm-host.sh.
func vmHostEnv(nodeIP, link, share string, grace time.Duration) string {
	return fmt.Sprintf("# Written by lab/cluster vmnode.go for vm-host.sh.\nNODE_IP=%s\nLINK=%s\nSHARE=%s\nGRACE=%d\n",
		vmShQuote(nodeIP), vmShQuote(link), vmShQuote(share), grace/(100*time.Millisecond))
}

// vmSimulatorScript starts one simulator in the guest; its arguments may
// hold credentials, so they live in the share (a directory only root
// reads), never on the console.
func vmSimulatorScript(sim vmSimulatorCommand) string {
	words := []string{"exec", "/lab/bin/switchyard-lab"}
	for _, a := range sim.Args {
		words = append(words, vmShQuote(a))
	}
	return "#!/bin/sh\n# Written by lab/cluster vmnode.go: the " + sim.Name + " simulator.\n" +
		"mkdir -p " + vmShQuote(vmSimStateDir(sim.Name)) + " || exit 1\n" + strings.Join(words, " ") + "\n"
}

// vmSimStateDir is a simulator's state directory in the guest (on the
// VM's disk, which is a throw-away snapshot).
func vmSimStateDir(name string) string { return "/var/lib/switchyard-sim/" + name }

// vmLabelList is the kubelet's --node-labels value, sorted.
func vmLabelList(labels map[string]string) string {
	var kv []string
	for k, v := range labels {
		kv = append(kv, k+"="+v)
	}
	sort.Strings(kv)
	return strings.Join(kv, ",")
}

// vmShQuote quotes s for sh.
func vmShQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// vmLabelKey and vmLabelValue are Kubernetes' label syntax (prefix optional).
var (
	vmLabelKey   = regexp.MustCompile(`^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`)
	vmLabelValue = regexp.MustCompile(`^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$`)
	vmSimName    = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,30}[a-z0-9])?$`)
)

// vmLinkOrCopy puts src at dst: a hard link when both are on one
// filesystem (images are hundreds of MB), else a copy.
func vmLinkOrCopy(src, dst string) error {
	_ = os.Remove(dst)
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, st.Mode().Perm()|0o400)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
