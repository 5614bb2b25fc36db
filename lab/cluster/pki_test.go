package cluster

import (
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestPKIIssuesTheControlPlaneCertificates(t *testing.T) {
	dir := t.TempDir()
	p, err := ensurePKI(dir)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(p.ca.cert)
	srv, err := loadKeyPair(dir, "apiserver")
	if err != nil {
		t.Fatal(err)
	}
	// The serving certificate verifies for every name a client uses.
	for _, host := range []string{"127.0.0.1", "10.0.2.2", "10.0.2.100", "10.96.0.1", HostNodeIP.String(), "localhost", "kubernetes.default.svc"} {
		if _, err := srv.cert.Verify(x509.VerifyOptions{DNSName: host, Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
			t.Errorf("apiserver certificate for %s: %v", host, err)
		}
	}
	if _, err := srv.cert.Verify(x509.VerifyOptions{DNSName: "10.0.2.15", Roots: pool}); err == nil {
		t.Error("apiserver certificate verifies for 10.0.2.15, which is not in its SANs")
	}
	admin, _ := loadKeyPair(dir, "admin")
	if !slices.Equal(admin.cert.Subject.Organization, []string{"system:masters"}) {
		t.Errorf("admin organization = %v", admin.cert.Subject.Organization)
	}
	if _, err := admin.cert.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("admin client certificate: %v", err)
	}
	for _, f := range []string{"sa.key", "sa.pub", "kube-controller-manager.crt", "kube-scheduler.crt", "apiserver-kubelet-client.crt"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	if st, _ := os.Stat(filepath.Join(dir, "ca.key")); st == nil || st.Mode().Perm() != 0o600 {
		t.Errorf("ca.key mode: %v", st)
	}
}

func TestPKINodeCertificateNamesTheNode(t *testing.T) {
	p, err := ensurePKI(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	kp, err := p.nodeCert("vm-node")
	if err != nil {
		t.Fatal(err)
	}
	if kp.cert.Subject.CommonName != "system:node:vm-node" || !slices.Equal(kp.cert.Subject.Organization, []string{"system:nodes"}) {
		t.Errorf("node certificate subject = %v", kp.cert.Subject)
	}
}

func TestPKIIsReusedAndReissuedWhenItsSpecChanges(t *testing.T) {
	dir := t.TempDir()
	p1, err := ensurePKI(dir)
	if err != nil {
		t.Fatal(err)
	}
	a1, _ := loadKeyPair(dir, "apiserver")
	p2, err := ensurePKI(dir)
	if err != nil {
		t.Fatal(err)
	}
	a2, _ := loadKeyPair(dir, "apiserver")
	if !p1.ca.cert.Equal(p2.ca.cert) || !a1.cert.Equal(a2.cert) {
		t.Fatal("a second ensurePKI on the same dir made new certificates (a warm start would invalidate kubeconfigs)")
	}
	// A certificate for other SANs (an older release of this code) is reissued.
	spec := controlPlaneCerts()["apiserver"]
	spec.IPs = []net.IP{net.IPv4(127, 0, 0, 1)}
	old, err := p2.ca.issue(spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := old.write(dir, "apiserver"); err != nil {
		t.Fatal(err)
	}
	if _, err := ensurePKI(dir); err != nil {
		t.Fatal(err)
	}
	a3, _ := loadKeyPair(dir, "apiserver")
	if len(a3.cert.IPAddresses) != len(controlPlaneCerts()["apiserver"].IPs) {
		t.Errorf("stale apiserver certificate kept: IPs %v", a3.cert.IPAddresses)
	}
}
