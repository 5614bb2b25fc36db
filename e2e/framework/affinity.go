package framework

import (
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// AffinityTerms renders a PV's required node affinity as one
// "k=v,k=v" string per term (sorted keys, sorted terms): the volume's
// accessible topology as the CSI driver returned it.
func AffinityTerms(pv *corev1.PersistentVolume) []string {
	if pv.Spec.NodeAffinity == nil || pv.Spec.NodeAffinity.Required == nil {
		return nil
	}
	var out []string
	for _, t := range pv.Spec.NodeAffinity.Required.NodeSelectorTerms {
		var kv []string
		for _, e := range t.MatchExpressions {
			kv = append(kv, e.Key+"="+strings.Join(e.Values, "|"))
		}
		sort.Strings(kv)
		out = append(out, strings.Join(kv, ","))
	}
	sort.Strings(out)
	return out
}
