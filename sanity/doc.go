// Package sanity runs csi-sanity (github.com/kubernetes-csi/csi-test/v5)
// in-process against every backend, directly and through the proxy, with
// real mounts. `make sanity` prints passed/failed/skipped per configuration.
package sanity
