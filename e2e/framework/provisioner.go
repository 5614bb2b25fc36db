package framework

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

// TopologyFlags are the external-provisioner flags the three
// StorageClass modes of docs/proxy.md depend on.
var TopologyFlags = []string{"--strict-topology", "--immediate-topology"}

// SetProvisionerFlags sets flags (e.g. "--strict-topology=true") on the
// container of "<deployment>/<container>" in the driver's namespace,
// replacing any earlier value of the same flags, and waits for the
// rollout. It returns the container's previous arguments.
func (f *F) SetProvisionerFlags(ctx context.Context, target string, flags []string) []string {
	ginkgo.GinkgoHelper()
	dep, ctr, ok := strings.Cut(target, "/")
	if !ok {
		ginkgo.Fail(fmt.Sprintf("provisioner %q: want <deployment>/<container>", target))
	}
	var old []string
	must(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d, err := f.Kube.AppsV1().Deployments(f.Config.DriverNamespace).Get(ctx, dep, metav1.GetOptions{})
		if err != nil {
			return err
		}
		found := false
		for i := range d.Spec.Template.Spec.Containers {
			c := &d.Spec.Template.Spec.Containers[i]
			if c.Name != ctr {
				continue
			}
			found = true
			old = append([]string(nil), c.Args...)
			c.Args = WithFlags(c.Args, flags)
		}
		if !found {
			return fmt.Errorf("deployment %s has no container %s", dep, ctr)
		}
		_, err = f.Kube.AppsV1().Deployments(f.Config.DriverNamespace).Update(ctx, d, metav1.UpdateOptions{})
		return err
	}))
	f.WaitRollout(ctx, dep, 4*time.Minute)
	return old
}

// RestoreProvisionerArgs puts back what SetProvisionerFlags returned.
func (f *F) RestoreProvisionerArgs(ctx context.Context, target string, args []string) {
	ginkgo.GinkgoHelper()
	dep, ctr, _ := strings.Cut(target, "/")
	must(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d, err := f.Kube.AppsV1().Deployments(f.Config.DriverNamespace).Get(ctx, dep, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for i := range d.Spec.Template.Spec.Containers {
			if d.Spec.Template.Spec.Containers[i].Name == ctr {
				d.Spec.Template.Spec.Containers[i].Args = args
			}
		}
		_, err = f.Kube.AppsV1().Deployments(f.Config.DriverNamespace).Update(ctx, d, metav1.UpdateOptions{})
		return err
	}))
	f.WaitRollout(ctx, dep, 4*time.Minute)
}

// WithFlags drops every earlier value of flags' names from args and
// appends flags.
func WithFlags(args, flags []string) []string {
	names := map[string]bool{}
	for _, fl := range flags {
		n, _, _ := strings.Cut(fl, "=")
		names[n] = true
	}
	var out []string
	for _, a := range args {
		n, _, _ := strings.Cut(a, "=")
		if !names[n] {
			out = append(out, a)
		}
	}
	return append(out, flags...)
}

// WaitRollout waits until every replica of the deployment runs the
// current template and no old pod is left.
func (f *F) WaitRollout(ctx context.Context, name string, timeout time.Duration) {
	ginkgo.GinkgoHelper()
	must(f.Wait(ctx, "deployment "+name+" to roll out", timeout, func(ctx context.Context) (bool, string, error) {
		d, err := f.Kube.AppsV1().Deployments(f.Config.DriverNamespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return Retry(err)
		}
		return rolledOut(d), fmt.Sprintf("generation %d observed %d, replicas %d updated %d available %d",
			d.Generation, d.Status.ObservedGeneration, d.Status.Replicas, d.Status.UpdatedReplicas, d.Status.AvailableReplicas), nil
	}))
}

func rolledOut(d *appsv1.Deployment) bool {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	s := d.Status
	return s.ObservedGeneration >= d.Generation && s.UpdatedReplicas == want && s.Replicas == want && s.AvailableReplicas == want
}
