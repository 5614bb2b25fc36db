package validate

import (
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// serviceMonitor is the part of the Prometheus Operator's ServiceMonitor
// (monitoring.coreos.com/v1) that the chart renders, field names as in its
// CRD. The operator's Go module would bring a large dependency tree for one
// kind; decoding strictly into this subset still refuses a misspelt or
// misplaced key, and check adds what the CRD requires.
type serviceMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Selector          metav1.LabelSelector `json:"selector"`
		NamespaceSelector struct {
			Any        bool     `json:"any,omitempty"`
			MatchNames []string `json:"matchNames,omitempty"`
		} `json:"namespaceSelector"`
		Endpoints []struct {
			Port          string `json:"port"`
			Path          string `json:"path,omitempty"`
			Interval      string `json:"interval,omitempty"`
			ScrapeTimeout string `json:"scrapeTimeout,omitempty"`
		} `json:"endpoints"`
	} `json:"spec"`
}

// check: the CRD requires spec.selector; an endpoint without a port name
// scrapes nothing the chart's Services name.
func (s *serviceMonitor) check() error {
	if s.Name == "" {
		return errors.New("no metadata.name")
	}
	if len(s.Spec.Selector.MatchLabels) == 0 && len(s.Spec.Selector.MatchExpressions) == 0 {
		return errors.New("spec.selector selects every Service of the namespace")
	}
	if len(s.Spec.Endpoints) == 0 {
		return errors.New("no spec.endpoints")
	}
	for i, e := range s.Spec.Endpoints {
		if e.Port == "" {
			return fmt.Errorf("spec.endpoints[%d] names no port", i)
		}
	}
	return nil
}
