package cluster

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// certValidity is long: a lab state dir is reused for warm starts for as
// long as it exists, and an expired certificate would fail in confusing ways.
const certValidity = 10 * 365 * 24 * time.Hour

// keyPair is a certificate and its private key, PEM encoded.
type keyPair struct {
	CertPEM, KeyPEM []byte
	cert            *x509.Certificate
	key             crypto.Signer
}

// newCA makes a self-signed CA.
func newCA(cn string) (*keyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(certValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	return sign(tmpl, tmpl, key, key)
}

// certSpec describes a leaf certificate.
type certSpec struct {
	CN     string
	Orgs   []string
	DNS    []string
	IPs    []net.IP
	Server bool // serving (else client) certificate
}

// issue makes a leaf certificate signed by kp, a CA.
func (kp *keyPair) issue(s certSpec) (*keyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	usage := x509.ExtKeyUsageClientAuth
	if s.Server {
		usage = x509.ExtKeyUsageServerAuth
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: s.CN, Organization: s.Orgs},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(certValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
		DNSNames:     s.DNS,
		IPAddresses:  s.IPs,
	}
	return sign(tmpl, kp.cert, key, kp.key)
}

func sign(tmpl, parent *x509.Certificate, key crypto.Signer, parentKey crypto.Signer) (*keyPair, error) {
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, key.Public(), parentKey)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return &keyPair{
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
		cert:    cert,
		key:     key,
	}, nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	if err != nil {
		// crypto/rand does not fail on Linux; a constant serial is still a valid certificate.
		return big.NewInt(time.Now().UnixNano())
	}
	return n
}

// write stores the pair as <dir>/<name>.crt and <name>.key (the key 0600).
func (kp *keyPair) write(dir, name string) error {
	if err := os.WriteFile(filepath.Join(dir, name+".crt"), kp.CertPEM, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, name+".key"), kp.KeyPEM, 0o600)
}

// loadKeyPair reads what write stored.
func loadKeyPair(dir, name string) (*keyPair, error) {
	certPEM, err := os.ReadFile(filepath.Join(dir, name+".crt"))
	if err != nil {
		return nil, err
	}
	keyPEM, err := os.ReadFile(filepath.Join(dir, name+".key"))
	if err != nil {
		return nil, err
	}
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, fmt.Errorf("%s/%s.crt or .key is not PEM", dir, name)
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s/%s.crt: %w", dir, name, err)
	}
	k, err := x509.ParsePKCS8PrivateKey(kb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s/%s.key: %w", dir, name, err)
	}
	signer, ok := k.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("%s/%s.key is not a signing key", dir, name)
	}
	return &keyPair{CertPEM: certPEM, KeyPEM: keyPEM, cert: cert, key: signer}, nil
}

// Fixed addresses of the local cluster.
var (
	// ServiceCIDR is --service-cluster-ip-range; its first address is the
	// kubernetes service's ClusterIP.
	ServiceCIDR = "10.96.0.0/16"
	// APIServiceIP is the kubernetes service's ClusterIP; the lab forwards
	// it to the apiserver on the host node (there is no kube-proxy).
	APIServiceIP = net.IPv4(10, 96, 0, 1)
	// VMHostIP is the host as the storage VM sees it (QEMU user network).
	VMHostIP = net.IPv4(10, 0, 2, 2)
	// VMAPIServerIP is the guestfwd address the VM's kubelet dials.
	VMAPIServerIP = net.IPv4(10, 0, 2, 100)
	// HostNodeIP is the host node's address, on a veth the cluster makes.
	HostNodeIP = net.IPv4(10, 250, 0, 1)
)

// pki is the cluster's certificate set.
type pki struct {
	dir string
	ca  *keyPair
}

// Leaf certificates of the control plane, by file name.
func controlPlaneCerts() map[string]certSpec {
	return map[string]certSpec{
		"apiserver": {CN: "kube-apiserver", Server: true,
			DNS: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
			IPs: []net.IP{net.IPv4(127, 0, 0, 1), VMHostIP, VMAPIServerIP, APIServiceIP, HostNodeIP}},
		"admin":                    {CN: "switchyard-lab-admin", Orgs: []string{"system:masters"}},
		"apiserver-kubelet-client": {CN: "kube-apiserver-kubelet-client", Orgs: []string{"system:masters"}},
		"kube-controller-manager":  {CN: "system:kube-controller-manager"},
		"kube-scheduler":           {CN: "system:kube-scheduler"},
	}
}

// ensurePKI loads the cluster's certificates from dir, making what is
// missing; an existing set is kept so that a warm start reuses it (and
// kubeconfigs handed out earlier stay valid).
func ensurePKI(dir string) (*pki, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	ca, err := loadKeyPair(dir, "ca")
	if errors.Is(err, os.ErrNotExist) {
		if ca, err = newCA("switchyard-lab-ca"); err == nil {
			err = ca.write(dir, "ca")
		}
	}
	if err != nil {
		return nil, fmt.Errorf("cluster CA in %s: %w", dir, err)
	}
	p := &pki{dir: dir, ca: ca}
	for name, spec := range controlPlaneCerts() {
		if _, err := p.leaf(name, spec); err != nil {
			return nil, err
		}
	}
	if err := ensureServiceAccountKey(dir); err != nil {
		return nil, err
	}
	return p, nil
}

// leaf loads <name>.crt/.key when signed by this CA, else issues it.
func (p *pki) leaf(name string, spec certSpec) (*keyPair, error) {
	if kp, err := loadKeyPair(p.dir, name); err == nil && kp.cert.CheckSignatureFrom(p.ca.cert) == nil && matches(kp.cert, spec) {
		return kp, nil
	}
	kp, err := p.ca.issue(spec)
	if err != nil {
		return nil, fmt.Errorf("certificate %s: %w", name, err)
	}
	if err := kp.write(p.dir, name); err != nil {
		return nil, err
	}
	return kp, nil
}

// nodeCert is the kubelet's client certificate: the Node authorizer and
// the NodeRestriction admission plugin know a node by this CN and group.
func (p *pki) nodeCert(nodeName string) (*keyPair, error) {
	return p.leaf("node-"+nodeName, certSpec{CN: "system:node:" + nodeName, Orgs: []string{"system:nodes"}})
}

// ensureServiceAccountKey makes the key pair that signs service account
// tokens (sa.key for the apiserver and the controller manager, sa.pub).
func ensureServiceAccountKey(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, "sa.key")); err == nil {
		return nil
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "sa.pub"), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "sa.key"), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600)
}

// matches reports whether cert was issued for spec (a changed SAN list
// reissues the serving certificate on the next start).
func matches(cert *x509.Certificate, s certSpec) bool {
	if cert.Subject.CommonName != s.CN || fmt.Sprint(cert.Subject.Organization) != fmt.Sprint(s.Orgs) ||
		fmt.Sprint(cert.DNSNames) != fmt.Sprint(s.DNS) || len(cert.IPAddresses) != len(s.IPs) {
		return false
	}
	for i, ip := range cert.IPAddresses {
		if !ip.Equal(s.IPs[i]) {
			return false
		}
	}
	return time.Now().Before(cert.NotAfter)
}
