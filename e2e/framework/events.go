package framework

import (
	"context"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
)

// Events lists the events about object name in ns, oldest first. Events
// about cluster-scoped objects (PersistentVolumes) live in "default".
func (f *F) Events(ctx context.Context, ns, name string) ([]corev1.Event, error) {
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	list, err := f.Kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("involvedObject.name", name).String(),
	})
	if err != nil {
		return nil, err
	}
	ev := list.Items
	sort.SliceStable(ev, func(i, j int) bool { return eventTime(ev[i]).Before(eventTime(ev[j])) })
	return ev, nil
}

func eventTime(e corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

// lastEvent is "; last event: <reason>: <message>" for a wait's status.
func (f *F) lastEvent(ctx context.Context, ns, name string) string {
	ev, err := f.Events(ctx, ns, name)
	if err != nil || len(ev) == 0 {
		return ""
	}
	e := ev[len(ev)-1]
	return "; last event: " + e.Reason + ": " + e.Message
}

// WaitEvent waits for an event about name in ns whose message contains
// every one of want, and returns its message.
func (f *F) WaitEvent(ctx context.Context, ns, name string, timeout time.Duration, want ...string) (string, error) {
	var msg string
	err := f.Wait(ctx, "an event on "+name+" saying "+strings.Join(want, " … "), timeout, func(ctx context.Context) (bool, string, error) {
		ev, err := f.Events(ctx, ns, name)
		if err != nil {
			return Retry(err)
		}
		for _, e := range ev {
			if containsAll(e.Message, want) {
				msg = e.Message
				return true, "", nil
			}
		}
		if len(ev) == 0 {
			return false, "no events", nil
		}
		return false, "last event: " + ev[len(ev)-1].Reason + ": " + ev[len(ev)-1].Message, nil
	})
	return msg, err
}

func containsAll(s string, want []string) bool {
	for _, w := range want {
		if !strings.Contains(s, w) {
			return false
		}
	}
	return true
}
