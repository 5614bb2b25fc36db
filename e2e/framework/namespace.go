package framework

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LabelKey marks every object the suites create, so a leftover is easy
// to find (kubectl get pvc,pv,sc,volumesnapshotclass -A -l switchyard-e2e).
const LabelKey = "switchyard-e2e"

// UniqueName is prefix plus a random suffix, a valid DNS label.
func UniqueName(prefix string) string {
	const letters = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = letters[int(b[i])%len(letters)]
	}
	prefix = strings.ToLower(prefix)
	if len(prefix) > 63-6 {
		prefix = prefix[:63-6]
	}
	return strings.TrimRight(prefix, "-.") + "-" + string(b)
}

// Namespace makes a namespace for the current spec. It is deleted when
// the spec ends (after the spec's own cleanups, which remove its volumes
// first), and the deletion is waited for: the next spec starts clean.
func (f *F) Namespace(ctx context.Context, prefix string) string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: UniqueName("e2e-" + prefix), Labels: map[string]string{LabelKey: "true"}}}
	_, err := f.Kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	ginkgo.GinkgoHelper()
	if err != nil {
		ginkgo.Fail(fmt.Sprintf("creating namespace %s: %v", ns.Name, err))
	}
	f.specNamespaces = append(f.specNamespaces, ns.Name)
	// The default service account is made by kube-controller-manager; a
	// pod created before it exists is refused, so wait for it.
	if err := f.Wait(ctx, "the default service account in "+ns.Name, time.Minute, func(ctx context.Context) (bool, string, error) {
		_, err := f.Kube.CoreV1().ServiceAccounts(ns.Name).Get(ctx, "default", metav1.GetOptions{})
		if err != nil {
			return Retry(err)
		}
		return true, "", nil
	}); err != nil {
		ginkgo.Fail(err.Error())
	}
	ginkgo.DeferCleanup(func(ctx context.Context) {
		f.deleteNamespace(ctx, ns.Name)
	}, ginkgo.NodeTimeout(f.Config.Scale(5*time.Minute)))
	return ns.Name
}

func (f *F) deleteNamespace(ctx context.Context, name string) {
	ginkgo.GinkgoHelper()
	err := f.Kube.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return
	}
	if err != nil {
		ginkgo.Fail(fmt.Sprintf("deleting namespace %s: %v", name, err))
	}
	if err := f.Wait(ctx, "namespace "+name+" to be deleted", 4*time.Minute, func(ctx context.Context) (bool, string, error) {
		n, err := f.Kube.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, "", nil
		}
		if err != nil {
			return Retry(err)
		}
		return false, "phase " + string(n.Status.Phase), nil
	}); err != nil {
		ginkgo.Fail(err.Error())
	}
}

// SpecNamespaces are the namespaces made since the last ResetSpec, for
// a failure dump.
func (f *F) SpecNamespaces() []string { return append([]string(nil), f.specNamespaces...) }

// ResetSpec forgets the previous spec's namespaces (call in BeforeEach).
func (f *F) ResetSpec() { f.specNamespaces = nil }
