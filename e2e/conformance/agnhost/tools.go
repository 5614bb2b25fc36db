//go:build tools

// Package conformanceagnhost pins agnhost, the multi-purpose test image
// program of Kubernetes' e2e tests (test/images/agnhost), at the cluster's
// release: the storage suites' subPath tests run it as
// registry.k8s.io/e2e-test-images/agnhost:2.66.1, which no registry here
// serves. scripts/ensure-e2e-test-images.sh builds it from this module
// (static, cached by content key) and packages it under that name. A module
// of its own, so that building it does not change e2e.test's cache key.
package conformanceagnhost

import _ "k8s.io/kubernetes/test/images/agnhost"
