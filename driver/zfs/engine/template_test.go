package engine

import "testing"

func TestTemplate(t *testing.T) {
	params := map[string]string{"foo": "a'b=c", "csi.storage.k8s.io/pvc/name": "data"}
	cases := []struct{ in, want string }{
		{"{{ name }}", "pvc-1"},
		{"{{ parameters.foo }}", "a&#x27;b&#x3D;c"},
		{"{{{ parameters.foo }}}", "a'b=c"},
		{"x-{{parameters.[csi.storage.k8s.io/pvc/name]}}-y", "x-data-y"},
		{"{{ parameters.missing }}", ""},
		{"plain", "plain"},
	}
	for _, c := range cases {
		tm, err := parseTemplate(c.in)
		if err != nil {
			t.Fatalf("%q: %v", c.in, err)
		}
		if got := tm.render("pvc-1", params); got != c.want {
			t.Errorf("%q rendered %q, want %q", c.in, got, c.want)
		}
	}
	for _, bad := range []string{"{{#if x}}y{{/if}}", "{{ lookup parameters 'x' }}", "{{ name", "{{> partial }}"} {
		if _, err := parseTemplate(bad); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
}
