package cluster

import (
	"encoding/base64"
	"fmt"
	"os"
	"strings"
)

// kubeconfig renders a kubeconfig with everything embedded, so that the
// file works wherever it is copied (into the storage VM, into a pod).
func kubeconfig(server string, caPEM []byte, user string, client *keyPair) []byte {
	b64 := base64.StdEncoding.EncodeToString
	var sb strings.Builder
	fmt.Fprintf(&sb, `apiVersion: v1
kind: Config
clusters:
- name: switchyard-lab
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: %s
  user:
    client-certificate-data: %s
    client-key-data: %s
contexts:
- name: switchyard-lab
  context:
    cluster: switchyard-lab
    user: %s
current-context: switchyard-lab
`, server, b64(caPEM), user, b64(client.CertPEM), b64(client.KeyPEM), user)
	return []byte(sb.String())
}

// writeKubeconfig writes it 0600: it holds a private key.
func writeKubeconfig(path, server string, caPEM []byte, user string, client *keyPair) error {
	return os.WriteFile(path, kubeconfig(server, caPEM, user, client), 0o600)
}
