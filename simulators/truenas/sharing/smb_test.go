package sharing

import (
	"reflect"
	"testing"
)

func TestSMBCRUD(t *testing.T) {
	for _, version := range allVersions {
		t.Run(version, func(t *testing.T) {
			e := newEnv(t, version)
			share := e.must("sharing.smb.create", map[string]any{"name": "pvc-1", "path": "/mnt/tank/a", "comment": "c"})
			if share["purpose"] != "DEFAULT_SHARE" || share["name"] != "pvc-1" || share["path"] != "/mnt/tank/a" || share["enabled"] != true || share["locked"] != false {
				t.Fatalf("created %v", share)
			}
			roKey := "ro"
			if e.v.AtLeast(25, 10, 0) {
				roKey = "readonly"
				if !reflect.DeepEqual(share["options"], map[string]any{"aapl_name_mangling": false}) {
					t.Errorf("DEFAULT_SHARE options %v", share["options"])
				}
				if _, old := share["hostsallow"]; old {
					t.Error("25.10 share has the pre-25.10 field hostsallow")
				}
			} else if share["path_local"] != "/mnt/tank/a" || len(share["vuid"].(string)) != 36 || share["hostsallow"] == nil {
				t.Errorf("pre-25.10 entry %v", share)
			}
			if share[roKey] != false {
				t.Errorf("%s = %v", roKey, share[roKey])
			}
			upd := e.must("sharing.smb.update", id(share), map[string]any{roKey: true, "audit": map[string]any{"enable": true}})
			if upd[roKey] != true || upd["audit"].(map[string]any)["enable"] != true || upd["comment"] != "c" {
				t.Errorf("update %v", upd)
			}
			if got := e.s.State().SMBShares; len(got) != 1 || !got[0].ReadOnly || got[0].Name != "pvc-1" {
				t.Errorf("State().SMBShares = %+v", got)
			}
			e.must("sharing.smb.delete", id(share))
			if n := len(e.list("sharing.smb.query")); n != 0 {
				t.Errorf("%d shares after delete", n)
			}
		})
	}
}

func TestSMBValidation(t *testing.T) {
	cases := []struct {
		name    string
		version string
		data    string
		attr    string
		msg     string
	}{
		{"missing path", "24.10", `{"name":"x","path":"/mnt/tank/nope"}`, "sharingsmb_create.path", "Path does not exist."},
		{"outside a pool", "25.10", `{"name":"x","path":"/srv"}`, "sharingsmb_create.path", "The path must reside within a pool mount point"},
		{"name required", "25.04", `{"path":"/mnt/tank/a"}`, "sharingsmb_create.name", "attribute required"},
		{"name required, pydantic", "25.10", `{"path":"/mnt/tank/a"}`, "data.name", "Field required"},
		{"unknown field, old schema", "25.04", `{"name":"x","path":"/mnt/tank/a","readonly":true}`, "sharingsmb_create.readonly", "Field was not expected"},
		{"moved field, 25.10", "25.10", `{"name":"x","path":"/mnt/tank/a","hostsallow":["10.0.0.1"]}`, "data.hostsallow", "Extra inputs are not permitted"},
		{"name too long", "24.10", `{"name":"` + long(81) + `","path":"/mnt/tank/a"}`, "sharingsmb_create.name", "Value greater than 80 not allowed"},
		{"reserved name", "25.04", `{"name":"Homes","path":"/mnt/tank/a"}`, "sharingsmb_create.name", "Homes is a reserved section name"},
		{"reserved name, 25.10 model", "25.10", `{"name":"Homes","path":"/mnt/tank/a"}`, "data.name", "Value error, Homes: share name is reserved."},
		{"invalid characters, 25.10 model", "26.04", `{"name":"a%b","path":"/mnt/tank/a"}`, "data.name", "Value error, a%b: share name contains the following invalid characters: %"},
		{"invalid characters", "24.10", `{"name":"a:b*c","path":"/mnt/tank/a"}`, "sharingsmb_create.name", "Share name contains the following invalid characters: *, :"},
		{"old purpose in 25.10", "25.10", `{"name":"x","path":"/mnt/tank/a","purpose":"NO_PRESET","options":{}}`, "data.purpose", "Input should be 'DEFAULT_SHARE', 'LEGACY_SHARE'"},
		{"new purpose before 25.10", "25.04", `{"name":"x","path":"/mnt/tank/a","purpose":"LEGACY_SHARE"}`, "sharingsmb_create.purpose", "Invalid choice: LEGACY_SHARE"},
		{"options without purpose", "25.10", `{"name":"x","path":"/mnt/tank/a","options":{}}`, "data", "You must set `purpose` if you set `options`."},
		{"option of another purpose", "25.10", `{"name":"x","path":"/mnt/tank/a","purpose":"DEFAULT_SHARE","options":{"guestok":true}}`, "data.options.DEFAULT_SHARE.guestok", "Extra inputs are not permitted"},
		{"external share path", "25.10", `{"name":"x","path":"/mnt/tank/a","purpose":"EXTERNAL_SHARE","options":{"remote_path":["srv\\share"]}}`, "data", "You must set `path` to \"EXTERNAL\""},
		{"time machine needs AAPL", "24.10", `{"name":"x","path":"/mnt/tank/a","timemachine":true}`, "sharingsmb_create.timemachine", "Apple SMB2/3 protocol extension support is required"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, c.version)
			_, err := e.call("sharing.smb.create", c.data)
			wantInvalid(t, err, c.attr, c.msg)
		})
	}
}

func long(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'x'
	}
	return string(b)
}

func TestSMBNamesAreCaseInsensitiveAndUnique(t *testing.T) {
	for _, version := range []string{"24.10", "25.10"} {
		e := newEnv(t, version)
		e.must("sharing.smb.create", map[string]any{"name": "Data", "path": "/mnt/tank/a"})
		_, err := e.call("sharing.smb.create", map[string]any{"name": "data", "path": "/mnt/tank/b"})
		wantInvalid(t, err, "sharingsmb_create.name", "Share names are case-insensitive and must be unique")
		// renaming a share to its own name is no conflict
		e.must("sharing.smb.update", 1, map[string]any{"name": "DATA"})
	}
}

func TestSMBPurposes(t *testing.T) {
	t.Run("pre-25.10 presets", func(t *testing.T) {
		e := newEnv(t, "25.04")
		for i, p := range []string{"NO_PRESET", "MULTI_PROTOCOL_NFS", "PRIVATE_DATASETS", "WORM_DROPBOX"} {
			got := e.must("sharing.smb.create", map[string]any{"name": "s" + itoa(i), "path": "/mnt/tank/a", "purpose": p})
			if got["purpose"] != p {
				t.Errorf("purpose %v, want %s", got["purpose"], p)
			}
		}
	})
	t.Run("25.10 options per purpose", func(t *testing.T) {
		e := newEnv(t, "25.10")
		legacy := e.must("sharing.smb.create", map[string]any{"name": "legacy", "path": "/mnt/tank/a", "purpose": "LEGACY_SHARE",
			"options": map[string]any{"hostsallow": []string{"10.0.0.0/8"}, "guestok": true}})
		opts := legacy["options"].(map[string]any)
		if opts["guestok"] != true || !reflect.DeepEqual(opts["hostsallow"], []any{"10.0.0.0/8"}) || opts["streams"] != true || len(opts["vuid"].(string)) != 36 {
			t.Errorf("LEGACY_SHARE options %v", opts)
		}
		locked := e.must("sharing.smb.create", map[string]any{"name": "worm", "path": "/mnt/tank/b", "purpose": "TIME_LOCKED_SHARE", "options": nil})
		if locked["options"].(map[string]any)["grace_period"] != 900.0 {
			t.Errorf("TIME_LOCKED_SHARE defaults %v", locked["options"])
		}
		ext := e.must("sharing.smb.create", map[string]any{"name": "ext", "path": "EXTERNAL", "purpose": "EXTERNAL_SHARE",
			"options": map[string]any{"remote_path": []string{`srv\share`}}})
		if ext["path"] != "EXTERNAL" {
			t.Errorf("external share %v", ext)
		}
		_, err := e.call("sharing.smb.create", map[string]any{"name": "tl", "path": "/mnt/tank/b", "purpose": "TIME_LOCKED_SHARE", "options": map[string]any{"grace_period": 10}})
		wantInvalid(t, err, "data.options.TIME_LOCKED_SHARE.grace_period", "Input should be greater than or equal to 60")
	})
}
