package vmprobe

import (
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

func TestConfigfsMounted(t *testing.T) {
	inVM(t)
	mounts, err := os.ReadFile("/proc/mounts")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(mounts), "\n") {
		f := strings.Fields(l)
		if len(f) >= 3 && f[1] == "/sys/kernel/config" && f[2] == "configfs" {
			return
		}
	}
	t.Fatalf("configfs is not mounted at /sys/kernel/config:\n%s", mounts)
}

func TestModprobeNVMe(t *testing.T) {
	inVM(t)
	modprobe(t, "nvmet", "nvmet-tcp", "nvme-tcp")
	for _, m := range []string{"nvmet", "nvmet_tcp", "nvme_tcp"} {
		if _, err := os.Stat("/sys/module/" + m); err != nil {
			t.Errorf("module %s is not loaded after modprobe: %v", m, err)
		}
	}
	if _, err := os.Stat("/sys/kernel/config/nvmet/subsystems"); err != nil {
		t.Errorf("nvmet has no configfs tree: %v", err)
	}
}

// TestOutcomes lets the host check that passes, failures and skips come
// back per test; it runs only when asked.
func TestOutcomes(t *testing.T) {
	if os.Getenv("SWITCHYARD_VM_PROBE_OUTCOMES") != "1" {
		t.Skip("runs only when lab/vm's harness test asks (SWITCHYARD_VM_PROBE_OUTCOMES=1)")
	}
	t.Run("pass", func(t *testing.T) { t.Log("this one passes") })
	t.Run("fail", func(t *testing.T) { t.Error("deliberate failure") })
	t.Run("skip", func(t *testing.T) { t.Skip("deliberate skip") })
}

// TestServeOnce answers one TCP connection on the port in
// SWITCHYARD_VM_PROBE_SERVE: the host checks its port forwarding with it.
func TestServeOnce(t *testing.T) {
	port := os.Getenv("SWITCHYARD_VM_PROBE_SERVE")
	if port == "" {
		t.Skip("runs only when lab/vm's forwarding test asks (SWITCHYARD_VM_PROBE_SERVE=<port>)")
	}
	l, err := net.Listen("tcp", ":"+port)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	l.(*net.TCPListener).SetDeadline(time.Now().Add(2 * time.Minute))
	c, err := l.Accept()
	if err != nil {
		t.Fatalf("no connection from the host: %v", err)
	}
	defer c.Close()
	host, _ := os.Hostname()
	if _, err := c.Write([]byte("hello from " + host + "\n")); err != nil {
		t.Fatal(err)
	}
}
