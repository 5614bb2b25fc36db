// Package validate decodes every manifest the chart renders for its golden
// files (../switchyard/testdata/golden, kept current by the chart's own
// tests) into the Kubernetes API type of its kind, refusing unknown fields:
// a misspelt or misplaced key (mountPropagation one level off, a field of
// the wrong object) fails here instead of being dropped by the API server.
package validate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	"sigs.k8s.io/yaml"
)

func newObject(apiVersion, kind string) any {
	switch apiVersion + "/" + kind {
	case "v1/ServiceAccount":
		return &corev1.ServiceAccount{}
	case "v1/Secret":
		return &corev1.Secret{}
	case "v1/Service":
		return &corev1.Service{}
	case "monitoring.coreos.com/v1/ServiceMonitor":
		return &serviceMonitor{}
	case "v1/ConfigMap":
		return &corev1.ConfigMap{}
	case "apps/v1/Deployment":
		return &appsv1.Deployment{}
	case "apps/v1/DaemonSet":
		return &appsv1.DaemonSet{}
	case "rbac.authorization.k8s.io/v1/ClusterRole":
		return &rbacv1.ClusterRole{}
	case "rbac.authorization.k8s.io/v1/ClusterRoleBinding":
		return &rbacv1.ClusterRoleBinding{}
	case "rbac.authorization.k8s.io/v1/Role":
		return &rbacv1.Role{}
	case "rbac.authorization.k8s.io/v1/RoleBinding":
		return &rbacv1.RoleBinding{}
	case "storage.k8s.io/v1/CSIDriver":
		return &storagev1.CSIDriver{}
	case "storage.k8s.io/v1/StorageClass":
		return &storagev1.StorageClass{}
	case "snapshot.storage.k8s.io/v1/VolumeSnapshotClass":
		return &snapshotv1.VolumeSnapshotClass{}
	}
	return nil
}

func TestGoldenManifestsDecodeStrictly(t *testing.T) {
	files, err := filepath.Glob("../switchyard/testdata/golden/*.yaml")
	if err != nil || len(files) < 5 {
		t.Fatalf("golden files: %v, %v", files, err)
	}
	kinds := map[string]int{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range strings.Split(string(data), "\n---\n") {
			var head struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
			}
			if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
				t.Errorf("%s document %d: %v", f, i, err)
				continue
			}
			if head.Kind == "" {
				continue // the leading separator's empty document
			}
			obj := newObject(head.APIVersion, head.Kind)
			if obj == nil {
				t.Errorf("%s document %d: no API type known for %s %s (add it to newObject)", f, i, head.APIVersion, head.Kind)
				continue
			}
			if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
				t.Errorf("%s: %s document %d does not decode strictly: %v", filepath.Base(f), head.Kind, i, err)
			} else if sm, ok := obj.(*serviceMonitor); ok {
				if err := sm.check(); err != nil {
					t.Errorf("%s: ServiceMonitor document %d: %v", filepath.Base(f), i, err)
				}
			}
			kinds[head.Kind]++
		}
	}
	for _, k := range []string{"Deployment", "DaemonSet", "CSIDriver", "StorageClass", "VolumeSnapshotClass", "ClusterRole", "Secret", "Service", "ServiceMonitor"} {
		if kinds[k] == 0 {
			t.Errorf("no %s among the golden manifests", k)
		}
	}
	t.Logf("decoded: %v", kinds)
}
