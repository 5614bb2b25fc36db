package infinia

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestJournalLineIsMarshal: appendLine writes what json.Marshal writes,
// for the entries the server makes and for names that need escaping.
func TestJournalLineIsMarshal(t *testing.T) {
	vol, err := encodeObj(&volume{Name: "pvc-1", NBlocks: 16, Xattrs: map[string]any{"csi_volume_name": "a<b>&\"c\"\\ é\u2028"}})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := encodeObj(&subsystem{NQN: "nqn.2023-03.com.ddn:red", ReqInstances: []int{1, 2}, Listeners: []listener{{InstanceID: 1, ExposedBy: []string{"d/pvc-1"}}}})
	if err != nil {
		t.Fatal(err)
	}
	null, _ := encodeObj[volume](nil)
	odd := []string{"", "plain", `q"uote`, `back\slash`, "tab\there", "<html>&", "ünï", "\x7f", "\u2028\u2029", "\xff"}
	entries := []entry{
		{Next: 0},
		{Next: 7, Subsystems: []objEntry{{C: "clu1", T: "red", S: "red", Name: "pvc-1", Obj: sub}}},
		{Next: 12, Volumes: []objEntry{{C: "clu1", T: "red", S: "red", D: "csiService", Name: "pvc-1", Obj: vol}}},
		{Next: 3, Subsystems: []objEntry{{C: "c", T: "t", S: "s", Name: "x", Obj: null}, {C: "c", T: "t", S: "s", Name: "y", Obj: sub}},
			Volumes: []objEntry{{C: "c", T: "t", S: "s", D: "d", Name: "v", Obj: null}}},
	}
	for _, s := range odd {
		entries = append(entries, entry{Next: 1, Volumes: []objEntry{{C: s, T: s, S: s, D: s, Name: s, Obj: vol}}})
	}
	for _, e := range entries {
		want, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.appendLine(nil); !bytes.Equal(got, want) {
			t.Errorf("appendLine\n got %s\nwant %s", got, want)
		}
	}
}
