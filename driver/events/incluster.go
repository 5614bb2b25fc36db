package events

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ServiceAccountDir is where Kubernetes mounts a pod's service account.
const ServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// Pod is the object every Event regards: the driver's own Pod.
type Pod struct {
	Name, Namespace, UID string
}

// Env is what InCluster reads: the process environment and the service
// account directory (tests give their own).
type Env struct {
	Getenv func(string) string
	SADir  string
}

// ErrNotInCluster means the process does not run in a Kubernetes pod:
// events are off, which is normal (a test, the lab's demo).
var ErrNotInCluster = errors.New("not running in a Kubernetes pod (no KUBERNETES_SERVICE_HOST or service account token)")

// InClusterOptions returns Options for the API server of the cluster the
// process runs in, or ErrNotInCluster, or an error naming what the pod
// lacks (the downward API variables, a readable CA).
func InClusterOptions(env Env) (Options, error) {
	if env.Getenv == nil {
		env.Getenv = os.Getenv
	}
	if env.SADir == "" {
		env.SADir = ServiceAccountDir
	}
	host, port := env.Getenv("KUBERNETES_SERVICE_HOST"), env.Getenv("KUBERNETES_SERVICE_PORT")
	tokenFile := filepath.Join(env.SADir, "token")
	if host == "" || port == "" {
		return Options{}, ErrNotInCluster
	}
	if _, err := os.Stat(tokenFile); err != nil {
		return Options{}, fmt.Errorf("%w: %v (automountServiceAccountToken off?)", ErrNotInCluster, err)
	}
	pod := Pod{Name: env.Getenv("POD_NAME"), Namespace: env.Getenv("POD_NAMESPACE"), UID: env.Getenv("POD_UID")}
	if pod.Name == "" || pod.Namespace == "" {
		return Options{}, errors.New("POD_NAME and POD_NAMESPACE are not set: give the driver container its pod's name and namespace " +
			"through the downward API (env valueFrom fieldRef metadata.name and metadata.namespace; the chart does)")
	}
	caPEM, err := os.ReadFile(filepath.Join(env.SADir, "ca.crt"))
	if err != nil {
		return Options{}, fmt.Errorf("the service account's CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return Options{}, fmt.Errorf("%s holds no PEM certificate", filepath.Join(env.SADir, "ca.crt"))
	}
	client := &http.Client{
		Timeout: 10 * time.Second,
		Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
			// The pod's proxy variables are for the storage backends,
			// not for the in-cluster API server.
			Proxy: nil,
		},
	}
	return Options{
		APIServer: "https://" + net.JoinHostPort(host, port),
		Client:    client,
		Token:     fileToken(tokenFile),
		Pod:       pod,
	}, nil
}

// fileToken reads the token at each call: projected service account tokens
// are rotated by the kubelet while the pod runs.
func fileToken(path string) func() (string, error) {
	return func() (string, error) {
		b, err := os.ReadFile(path)
		if err != nil {
			return "", fmt.Errorf("the service account token: %w", err)
		}
		return strings.TrimSpace(string(b)), nil
	}
}
