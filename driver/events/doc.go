// Package events posts Kubernetes Events about the driver's connection
// files, so that `kubectl describe pod` and `kubectl get events` name a
// broken file without anyone reading the driver's log (issue 13: a
// connections Secret updated with a broken file).
//
// It is on only when the driver runs in a cluster: the pod's service
// account (token and CA under /var/run/secrets/kubernetes.io/serviceaccount,
// KUBERNETES_SERVICE_HOST/PORT) and its own name and namespace from the
// downward API (POD_NAME, POD_NAMESPACE; POD_UID when given), which the
// chart sets. Each Event regards the driver's own Pod.
//
// Events go through the events.k8s.io/v1 API with plain HTTPS calls rather
// than client-go: linking client-go's events recorder into cmd/switchyard
// (measured with v0.37.2) made the stripped binary 42.2 MB instead of
// 17.8 MB, which would put the controller image over its 40 MB bound; this
// package adds 41 kB. The driver's go.mod keeps Kubernetes' libraries out
// besides (the Makefile's NESTED_MODULES note), and two typed requests
// (create, and a merge patch of the series when the same problem repeats)
// are all this needs.
//
// Repeats are deduplicated and everything is rate-limited: the same
// problem (reason, connection, file, message) makes one Event whose series
// count grows, patched at most once per Interval; a token bucket bounds the
// API calls of all problems together. Posting is asynchronous, so the
// proxy's observer call stays quick; a failure to post is logged, never
// fatal, and never blocks serving.
package events
