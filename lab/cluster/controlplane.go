package cluster

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/switchyard-csi/switchyard/lab/vm"
)

// etcdArgs runs Debian's etcd 3.4 on loopback only, plain HTTP: nothing
// but the apiserver on this machine talks to it.
func etcdArgs(dir string) []string {
	client := "http://127.0.0.1:" + strconv.Itoa(EtcdClientPort)
	peer := "http://127.0.0.1:" + strconv.Itoa(EtcdPeerPort)
	return []string{
		"etcd",
		"--name=lab",
		"--data-dir=" + filepath.Join(dir, "etcd"),
		"--listen-client-urls=" + client,
		"--advertise-client-urls=" + client,
		"--listen-peer-urls=" + peer,
		"--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=lab=" + peer,
		"--logger=zap",
		"--log-outputs=stderr",
		// A lab cluster's data is disposable: snapshot less often.
		"--snapshot-count=10000",
	}
}

// apiserverArgs: Node and RBAC authorization with NodeRestriction (the
// kubelets get only what a real node gets), privileged pods allowed (the
// CSI node plugin is one), service account tokens signed by sa.key.
func apiserverArgs(bin, dir string) []string {
	pki := func(f string) string { return filepath.Join(dir, "pki", f) }
	return []string{
		filepath.Join(bin, "kube-apiserver"),
		"--etcd-servers=http://127.0.0.1:" + strconv.Itoa(EtcdClientPort),
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(APIServerPort),
		"--advertise-address=" + HostNodeIP.String(),
		"--tls-cert-file=" + pki("apiserver.crt"),
		"--tls-private-key-file=" + pki("apiserver.key"),
		"--client-ca-file=" + pki("ca.crt"),
		"--kubelet-client-certificate=" + pki("apiserver-kubelet-client.crt"),
		"--kubelet-client-key=" + pki("apiserver-kubelet-client.key"),
		"--kubelet-preferred-address-types=InternalIP",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + pki("sa.pub"),
		"--service-account-signing-key-file=" + pki("sa.key"),
		"--service-cluster-ip-range=" + ServiceCIDR,
		"--authorization-mode=Node,RBAC",
		"--enable-admission-plugins=NodeRestriction",
		"--allow-privileged=true",
		"--profiling=false",
		"--v=1",
	}
}

// controllerManagerArgs: every controller, each with its own service
// account's credentials, as a real cluster runs them.
func controllerManagerArgs(bin, dir string) []string {
	kc := filepath.Join(dir, "controller-manager.kubeconfig")
	return []string{
		filepath.Join(bin, "kube-controller-manager"),
		"--kubeconfig=" + kc,
		"--authentication-kubeconfig=" + kc,
		"--authorization-kubeconfig=" + kc,
		// No front proxy: nothing to look up (else it logs every few seconds).
		"--authentication-skip-lookup=true",
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(ControllerManagerPort),
		"--controllers=*",
		"--use-service-account-credentials=true",
		"--service-account-private-key-file=" + filepath.Join(dir, "pki", "sa.key"),
		"--root-ca-file=" + filepath.Join(dir, "pki", "ca.crt"),
		"--service-cluster-ip-range=" + ServiceCIDR,
		"--leader-elect=false",
		"--profiling=false",
		"--v=1",
	}
}

func schedulerArgs(bin, dir string) []string {
	kc := filepath.Join(dir, "scheduler.kubeconfig")
	return []string{
		filepath.Join(bin, "kube-scheduler"),
		"--kubeconfig=" + kc,
		"--authentication-kubeconfig=" + kc,
		"--authorization-kubeconfig=" + kc,
		"--authentication-skip-lookup=true",
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(SchedulerPort),
		"--leader-elect=false",
		"--profiling=false",
		"--v=1",
	}
}

// startControlPlane starts etcd and the apiserver, waits for /readyz, then
// starts the controller manager and the scheduler.
func (c *Local) startControlPlane(ctx context.Context) error {
	if err := os.MkdirAll(c.path("etcd"), 0o700); err != nil {
		return err
	}
	for file, user := range map[string]string{
		"admin.kubeconfig":              "admin",
		"controller-manager.kubeconfig": "kube-controller-manager",
		"scheduler.kubeconfig":          "kube-scheduler",
	} {
		kp, err := loadKeyPair(c.path("pki"), user)
		if err != nil {
			return err
		}
		if err := writeKubeconfig(c.path(file), c.APIServerURL(), c.pki.ca.CertPEM, user, kp); err != nil {
			return err
		}
	}
	etcd, err := vm.LookTool("etcd")
	if err != nil {
		return fmt.Errorf("%w (package etcd-server; scripts/ensure-cluster-deps.sh installs it)", err)
	}
	args := etcdArgs(c.dir)
	args[0] = etcd
	if err := c.step("etcd started", func() error { return c.Spawn("etcd", args, nil) }); err != nil {
		return err
	}
	if err := c.Spawn("kube-apiserver", apiserverArgs(c.bin, c.dir), nil); err != nil {
		return err
	}
	if err := c.step("etcd+apiserver ready", func() error { return c.waitReadyz(ctx, 2*time.Minute) }); err != nil {
		return err
	}
	if err := c.Spawn("kube-controller-manager", controllerManagerArgs(c.bin, c.dir), nil); err != nil {
		return err
	}
	return c.Spawn("kube-scheduler", schedulerArgs(c.bin, c.dir), nil)
}

// waitReadyz polls the apiserver's /readyz; it fails at once, with the
// log's end, when etcd or the apiserver exits.
func (c *Local) waitReadyz(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last string
	for {
		for _, p := range []string{"etcd", "kube-apiserver"} {
			if !c.Running(p) {
				return fmt.Errorf("%s exited; the end of %s:\n%s", p, c.LogPath(p), tail(c.LogPath(p), 20))
			}
		}
		err := c.api(ctx, http.MethodGet, "/readyz", "", nil, nil)
		if err == nil {
			return nil
		}
		last = err.Error()
		select {
		case <-ctx.Done():
			return fmt.Errorf("apiserver not ready after %s: %s; the end of %s:\n%s", timeout, last, c.LogPath("kube-apiserver"), tail(c.LogPath("kube-apiserver"), 20))
		case <-time.After(200 * time.Millisecond):
		}
	}
}
