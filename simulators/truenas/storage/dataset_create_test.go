package storage

import (
	"testing"
)

func TestDatasetEntryShape(t *testing.T) {
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			e := newEnv(t, v)
			fs := e.mkfs("tank/a", map[string]any{"comments": "hello", "sync": "ALWAYS"})
			for k, want := range map[string]any{
				"id": "tank/a", "name": "tank/a", "pool": "tank", "type": "FILESYSTEM",
				"mountpoint": "/mnt/tank/a", "encrypted": false, "locked": false,
				"sync.value": "ALWAYS", "sync.rawvalue": "always", "sync.source": "LOCAL",
				"comments.value": "hello", "compression.source": "DEFAULT",
				"refquota.value": nil, "refquota.rawvalue": "0", "xattr.value": "SA",
				"origin.value": "", "readonly.parsed": false,
			} {
				if got := at(t, fs, k); got != want {
					t.Errorf("%s = %#v, want %#v", k, got, want)
				}
			}
			if _, ok := fs["user_properties"].(map[string]any)["org.freenas:description"]; ok {
				t.Error("comments leaked into user_properties")
			}
			used := at(t, fs, "used").(map[string]any)
			if _, ok := used["parsed"].(float64); !ok || used["rawvalue"] == "" || used["value"] == used["rawvalue"] {
				t.Errorf("used = %v: want parsed int, rawvalue bytes, human value", used)
			}
			for _, c := range []struct {
				body                           map[string]any
				volsize, blocksize, refreserve string
			}{
				{map[string]any{"name": "tank/thick", "type": "VOLUME", "volsize": 1 << 30}, "1G", "16K", "1G"},
				{map[string]any{"name": "tank/thin", "type": "VOLUME", "volsize": 512 << 20, "sparse": true, "volblocksize": "64K"}, "512M", "64K", ""},
			} {
				vol := obj(t, e.must("pool.dataset.create", c.body))
				if vol["mountpoint"] != nil || vol["type"] != "VOLUME" {
					t.Errorf("%s: mountpoint %v type %v", c.body["name"], vol["mountpoint"], vol["type"])
				}
				if got := at(t, vol, "volsize.value"); got != c.volsize {
					t.Errorf("%s volsize %v, want %v", c.body["name"], got, c.volsize)
				}
				if got := at(t, vol, "volsize.parsed"); got != float64(c.body["volsize"].(int)) {
					t.Errorf("%s volsize parsed %v", c.body["name"], got)
				}
				if got := at(t, vol, "volblocksize.value"); got != c.blocksize {
					t.Errorf("%s volblocksize %v, want %v", c.body["name"], got, c.blocksize)
				}
				rv := at(t, vol, "refreservation.value")
				if c.refreserve == "" && rv != nil || c.refreserve != "" && rv == nil {
					t.Errorf("%s refreservation %v, want %q", c.body["name"], rv, c.refreserve)
				}
				if _, ok := vol["refquota"]; ok {
					t.Errorf("%s: a volume has no refquota", c.body["name"])
				}
			}
		})
	}
}

func TestDatasetCreateErrors(t *testing.T) {
	type tc struct {
		name      string
		body      map[string]any
		attr, msg string            // validation error
		errno     int               // or a CallError
		only      func(string) bool // versions the case applies to
	}
	legacy := func(v string) bool { return v == "24.10" || v == "25.04" }
	modern := func(v string) bool { return !legacy(v) }
	cases := []tc{
		{name: "exists fs", body: map[string]any{"name": "tank/a"}, attr: "pool_dataset_create.name", msg: "Path /mnt/tank/a already exists"},
		{name: "exists vol", body: map[string]any{"name": "tank/v", "type": "VOLUME", "volsize": 1 << 20}, errno: 17, msg: "already exists"},
		{name: "no slash", body: map[string]any{"name": "tank"}, attr: "pool_dataset_create.name", msg: "You need a full name, e.g. pool/newdataset"},
		{name: "bad chars", body: map[string]any{"name": "tank/a*b"}, attr: "pool_dataset_create.name", msg: "Invalid dataset name", only: legacy},
		{name: "bad chars", body: map[string]any{"name": "tank/a*b"}, attr: "pool_dataset_create.name", msg: "valid dataset name according to ZFS standards", only: modern},
		{name: "trailing space", body: map[string]any{"name": "tank/a "}, attr: "pool_dataset_create.name", msg: "Trailing spaces are not permitted in dataset names"},
		{name: "parent missing", body: map[string]any{"name": "tank/x/y"}, attr: "pool_dataset_create.name", msg: "Parent dataset does not exist for specified name", only: legacy},
		{name: "parent missing", body: map[string]any{"name": "tank/x/y"}, attr: "pool_dataset_create.name", msg: "Parent dataset (tank/x) does not exist.", only: modern},
		{name: "pool missing", body: map[string]any{"name": "nopool/y"}, attr: "pool_dataset_create.name", msg: "zpool (nopool) does not exist.", only: modern},
		{name: "ancestors without pool", body: map[string]any{"name": "nopool/a/b", "create_ancestors": true}, attr: "pool_dataset_create.name", msg: "Please specify a pool which exists"},
		{name: "parent is volume", body: map[string]any{"name": "tank/v/x"}, attr: "pool_dataset_create.name", msg: "tank/v: parent may not be a ZFS volume"},
		{name: "volsize alignment", body: map[string]any{"name": "tank/w", "type": "VOLUME", "volsize": 1<<20 + 512}, attr: "pool_dataset_create.volsize", msg: "Volume size should be a multiple of volume block size"},
		{name: "volsize alignment 4K", body: map[string]any{"name": "tank/w", "type": "VOLUME", "volsize": 6144, "volblocksize": "4K"}, attr: "pool_dataset_create.volsize", msg: "Volume size should be a multiple of volume block size"},
		{name: "volume without volsize", body: map[string]any{"name": "tank/w", "type": "VOLUME"}, attr: "pool_dataset_create.volsize", msg: "This field is required for VOLUME", only: legacy},
		{name: "volume without volsize", body: map[string]any{"name": "tank/w", "type": "VOLUME"}, attr: "pool_dataset_create.volsize", msg: "Field required", only: modern},
		{name: "too big", body: map[string]any{"name": "tank/w", "type": "VOLUME", "volsize": 9 << 30}, attr: "pool_dataset_create.volsize", msg: "not recommended to use more than 80%"},
		{name: "volsize on fs", body: map[string]any{"name": "tank/w", "volsize": 1 << 20}, attr: "pool_dataset_create.volsize", msg: "This field is not valid for FILESYSTEM", only: legacy},
		{name: "volsize on fs", body: map[string]any{"name": "tank/w", "volsize": 1 << 20}, attr: "pool_dataset_create.volsize", msg: "Extra inputs are not permitted", only: modern},
		{name: "refquota on vol", body: map[string]any{"name": "tank/w", "type": "VOLUME", "volsize": 1 << 20, "refquota": 1 << 30}, attr: "pool_dataset_create.refquota", msg: "This field is not valid for VOLUME", only: legacy},
		{name: "unknown field", body: map[string]any{"name": "tank/w", "bogus": 1}, attr: "pool_dataset_create.bogus", msg: "Field was not expected", only: legacy},
		{name: "unknown field", body: map[string]any{"name": "tank/w", "bogus": 1}, attr: "pool_dataset_create.bogus", msg: "Extra inputs are not permitted", only: modern},
		{name: "bad enum", body: map[string]any{"name": "tank/w", "sync": "SOMETIMES"}, attr: "pool_dataset_create.sync", msg: "Invalid choice: SOMETIMES", only: legacy},
		{name: "bad enum", body: map[string]any{"name": "tank/w", "sync": "SOMETIMES"}, attr: "pool_dataset_create.sync", msg: "Input should be 'STANDARD', 'ALWAYS', 'DISABLED' or 'INHERIT'", only: modern},
		{name: "bad type", body: map[string]any{"name": "tank/w", "sparse": "yes"}, attr: "pool_dataset_create.sparse", msg: "Not a boolean", only: legacy},
		{name: "small refquota", body: map[string]any{"name": "tank/w", "refquota": 1 << 20}, attr: "pool_dataset_create.refquota", msg: "1073741824"},
		{name: "posix acl mode", body: map[string]any{"name": "tank/w", "acltype": "POSIX", "aclmode": "PASSTHROUGH"}, attr: "pool_dataset_create.aclmode", msg: "Must be set to DISCARD when acltype is POSIX or OFF"},
		{name: "recordsize", body: map[string]any{"name": "tank/w", "recordsize": "3K"}, attr: "pool_dataset_create.recordsize", msg: "'3K' is an invalid recordsize."},
		{name: "user property key", body: map[string]any{"name": "tank/w", "user_properties": []any{map[string]any{"key": "nocolon", "value": "x"}}}, attr: "pool_dataset_create.user_properties.0.key", msg: "match"},
		{name: "out of space", body: map[string]any{"name": "tank/w", "type": "VOLUME", "volsize": 20 << 30, "force_size": true}, errno: 28, msg: "out of space"},
		{name: "missing name", body: map[string]any{}, attr: "pool_dataset_create.name", msg: "required"},
	}
	for _, v := range versions {
		e := newEnv(t, v)
		e.mkfs("tank/a", nil)
		e.must("pool.dataset.create", map[string]any{"name": "tank/v", "type": "VOLUME", "volsize": 1 << 20})
		for _, c := range cases {
			if c.only != nil && !c.only(v) {
				continue
			}
			_, err := e.call("pool.dataset.create", c.body)
			if c.attr != "" {
				wantValidation(t, err, c.attr, c.msg)
			} else {
				wantCallError(t, err, c.errno, c.msg)
			}
		}
		if e.m.Exists("tank/w") || e.m.Exists("tank/x") {
			t.Errorf("%s: a refused create left a dataset behind", v)
		}
	}
}

func TestDatasetCreateAncestorsAndShareType(t *testing.T) {
	for _, v := range versions {
		e := newEnv(t, v)
		e.mkfs("tank/k8s/vols/pvc-1", map[string]any{"create_ancestors": true, "share_type": "SMB"})
		for _, n := range []string{"tank/k8s", "tank/k8s/vols"} {
			if !e.m.Exists(n) {
				t.Errorf("%s: ancestor %s not created", v, n)
			}
		}
		got := obj(t, e.must("pool.dataset.get_instance", "tank/k8s/vols/pvc-1"))
		for k, want := range map[string]any{"casesensitivity.value": "INSENSITIVE", "acltype.value": "NFSV4", "aclmode.value": "RESTRICTED"} {
			if at(t, got, k) != want {
				t.Errorf("%s: SMB share_type %s = %v, want %v", v, k, at(t, got, k), want)
			}
		}
		// a parent of a new dataset under create_ancestors must have a pool
		e.mkfs("tank/k8s/vols/pvc-2", map[string]any{"create_ancestors": true})
	}
}
