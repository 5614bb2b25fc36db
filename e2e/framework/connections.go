package framework

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// Store is where a release's connection files live. Specs add and remove
// files while the driver runs, as a user edits the Secret: that is the
// live reload the proxy promises.
type Store interface {
	// Put writes <name>.yaml.
	Put(ctx context.Context, name, content string) error
	// Delete removes <name>.yaml; a missing file is no error.
	Delete(ctx context.Context, name string) error
	// String says where the files are, for messages.
	String() string
}

// ParseStore splits "secret:<name>" or "dir:<path>".
func ParseStore(spec string) (kind, value string, err error) {
	kind, value, ok := strings.Cut(spec, ":")
	switch {
	case !ok || value == "":
		return "", "", fmt.Errorf("%q: want secret:<name> or dir:<absolute path>", spec)
	case kind == "secret":
		return kind, value, nil
	case kind == "dir" && filepath.IsAbs(value):
		return kind, value, nil
	}
	return "", "", fmt.Errorf("%q: want secret:<name> or dir:<absolute path>", spec)
}

// NewStore opens the store spec names; secrets are in namespace ns.
func NewStore(spec string, cs kubernetes.Interface, ns string) (Store, error) {
	kind, value, err := ParseStore(spec)
	if err != nil {
		return nil, err
	}
	if kind == "dir" {
		return dirStore(value), nil
	}
	return &secretStore{cs: cs, ns: ns, name: value}, nil
}

// FileKey is the file (or Secret key) of connection name.
func FileKey(name string) string { return name + ".yaml" }

type dirStore string

func (d dirStore) Put(_ context.Context, name, content string) error {
	if err := os.MkdirAll(string(d), 0o755); err != nil {
		return err
	}
	// Write then rename, so the driver never reads half a file.
	tmp := filepath.Join(string(d), "."+FileKey(name)+".tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(string(d), FileKey(name)))
}

func (d dirStore) Delete(_ context.Context, name string) error {
	err := os.Remove(filepath.Join(string(d), FileKey(name)))
	if os.IsNotExist(err) {
		return nil
	}
	return err
}

func (d dirStore) String() string { return "folder " + string(d) }

type secretStore struct {
	cs       kubernetes.Interface
	ns, name string
}

func (s *secretStore) String() string { return "Secret " + s.ns + "/" + s.name }

func (s *secretStore) Put(ctx context.Context, name, content string) error {
	// The same content again changes nothing: no kubelet refresh, no
	// driver rebuild.
	if sec, err := s.cs.CoreV1().Secrets(s.ns).Get(ctx, s.name, metav1.GetOptions{}); err == nil && string(sec.Data[FileKey(name)]) == content {
		return nil
	}
	return s.edit(ctx, func(sec *corev1.Secret) {
		if sec.Data == nil {
			sec.Data = map[string][]byte{}
		}
		sec.Data[FileKey(name)] = []byte(content)
	})
}

func (s *secretStore) Delete(ctx context.Context, name string) error {
	return s.edit(ctx, func(sec *corev1.Secret) { delete(sec.Data, FileKey(name)) })
}

// edit changes the Secret, creating it if the release has none yet.
func (s *secretStore) edit(ctx context.Context, change func(*corev1.Secret)) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		sec, err := s.cs.CoreV1().Secrets(s.ns).Get(ctx, s.name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			sec = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: s.ns}}
			change(sec)
			_, err = s.cs.CoreV1().Secrets(s.ns).Create(ctx, sec, metav1.CreateOptions{})
			return err
		}
		if err != nil {
			return err
		}
		change(sec)
		_, err = s.cs.CoreV1().Secrets(s.ns).Update(ctx, sec, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("%s: %w", s, err)
	}
	return nil
}
