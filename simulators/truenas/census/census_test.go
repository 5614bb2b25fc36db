package census

import (
	"regexp"
	"strings"
	"testing"
)

// Every digest loads, names the tag and commit it came from, and has the
// methods every release has; an unknown release is an error naming it.
func TestLoad(t *testing.T) {
	commit := regexp.MustCompile(`^[0-9a-f]{40}$`)
	for _, r := range []string{"24.10", "25.04", "25.10", "26.04"} {
		c, err := Load(r)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(c.Source.Tag, "TS-"+strings.Split(r, ".")[0]) || !commit.MatchString(c.Source.Commit) {
			t.Errorf("%s: source %+v", r, c.Source)
		}
		for _, m := range []string{"pool.dataset.create", "pool.dataset.query", "sharing.nfs.create", "iscsi.target.create", "core.get_jobs"} {
			if _, ok := c.Methods[m]; !ok {
				t.Errorf("%s has no %s", r, m)
			}
		}
		if !c.HasService("pool.dataset") || c.HasService("pool.data") {
			t.Errorf("%s: HasService", r)
		}
		if len(c.Names()) != len(c.Methods) {
			t.Errorf("%s: Names", r)
		}
	}
	if _, err := Load("23.10"); err == nil || !strings.Contains(err.Error(), "23.10") {
		t.Errorf("Load(23.10) = %v", err)
	}
}
