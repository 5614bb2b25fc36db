package storage

import (
	"testing"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

func TestUserPropertiesRoundTrip(t *testing.T) {
	for _, v := range versions {
		e := newEnv(t, v)
		e.mkfs("tank/a", map[string]any{"user_properties": []any{
			map[string]any{"key": "democratic-csi:csi_volume_name", "value": "pvc-1"},
			map[string]any{"key": "democratic-csi:managed_resource", "value": "true"},
		}})
		e.mkfs("tank/a/child", nil)
		got := e.must("pool.dataset.update", "tank/a", map[string]any{"user_properties_update": []any{
			map[string]any{"key": "democratic-csi:provision_success", "value": "true"},
			map[string]any{"key": "democratic-csi:managed_resource", "remove": true},
		}})
		up := obj(t, at(t, got, "user_properties"))
		if _, ok := up["democratic-csi:managed_resource"]; ok {
			t.Errorf("%s: removed property still there: %v", v, up)
		}
		if at(t, up, "democratic-csi:provision_success.value") != "true" || at(t, up, "democratic-csi:csi_volume_name.source") != "LOCAL" {
			t.Errorf("%s: user_properties after update: %v", v, up)
		}
		child := obj(t, e.must("pool.dataset.get_instance", "tank/a/child"))
		if at(t, child, "user_properties.democratic-csi:csi_volume_name.source") != "INHERITED" ||
			at(t, child, "user_properties.democratic-csi:csi_volume_name.source_info") != "tank/a" {
			t.Errorf("%s: inherited user property: %v", v, child["user_properties"])
		}
		rows := e.must("pool.dataset.query", []any{[]any{"user_properties.democratic-csi:csi_volume_name.value", "=", "pvc-1"}},
			map[string]any{"select": []any{"id"}})
		if l, _ := rows.([]any); len(l) != 2 { // tank/a and, by inheritance, its child
			t.Errorf("%s: query by user property: %v", v, rows)
		}
		// a full user_properties list replaces them all
		got = e.must("pool.dataset.update", "tank/a", map[string]any{"user_properties": []any{
			map[string]any{"key": "ns:only", "value": "1"},
		}})
		if up := obj(t, at(t, got, "user_properties")); len(up) != 1 || at(t, up, "ns:only.value") != "1" {
			t.Errorf("%s: replacing user_properties: %v", v, up)
		}
		_, err := e.call("pool.dataset.update", "tank/a", map[string]any{"user_properties_update": []any{
			map[string]any{"key": "ns:x", "value": "1", "remove": true}}})
		wantValidation(t, err, "pool_dataset_update.user_properties_update.0.remove", `When "value" is specified, this cannot be set`)
		_, err = e.call("pool.dataset.update", "tank/a", map[string]any{"user_properties_update": []any{map[string]any{"key": "ns:x"}}})
		wantValidation(t, err, "pool_dataset_update.user_properties_update.0.value", `Either "value" or "remove" must be specified`)
	}
}

func TestDatasetUpdate(t *testing.T) {
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			e := newEnv(t, v)
			e.mkfs("tank/a", nil)
			e.must("pool.dataset.create", map[string]any{"name": "tank/vol", "type": "VOLUME", "volsize": 1 << 30, "sparse": true})

			got := e.must("pool.dataset.update", "tank/a", map[string]any{"refquota": 2 << 30, "compression": "LZ4", "comments": "c"})
			if at(t, got, "refquota.rawvalue") != "2147483648" || at(t, got, "refquota.value") != "2G" ||
				at(t, got, "compression.value") != "LZ4" || at(t, got, "comments.value") != "c" {
				t.Errorf("after update: refquota %v compression %v comments %v", got.(map[string]any)["refquota"],
					at(t, got, "compression"), got.(map[string]any)["comments"])
			}
			got = e.must("pool.dataset.update", "tank/a", map[string]any{"refquota": 0, "compression": "INHERIT"})
			if at(t, got, "refquota.value") != nil || at(t, got, "compression.source") != "DEFAULT" {
				t.Errorf("after reset: refquota %v compression %v", at(t, got, "refquota"), at(t, got, "compression"))
			}
			got = e.must("pool.dataset.update", "tank/vol", map[string]any{"volsize": 2 << 30})
			if at(t, got, "volsize.value") != "2G" {
				t.Errorf("grown volsize %v", at(t, got, "volsize"))
			}
			cases := []struct {
				id        string
				body      map[string]any
				attr, msg string
				errno     int
			}{
				{"tank/vol", map[string]any{"volsize": 1 << 30}, "pool_dataset_update.volsize", "You cannot shrink a zvol from GUI, this may lead to data loss.", 0},
				{"tank/vol", map[string]any{"volsize": 2<<30 + 512}, "pool_dataset_update.volsize", "Volume size should be a multiple of volume block size", 0},
				{"tank/vol", map[string]any{"refquota": 1 << 30}, "pool_dataset_update.refquota", "This field is not valid for VOLUME", 0},
				{"tank/a", map[string]any{"volsize": 1 << 30}, "pool_dataset_update.volsize", "This field is not valid for FILESYSTEM", 0},
				{"tank/a", map[string]any{"name": "tank/b"}, "pool_dataset_update.name", "", 0},
				{"tank/nope", map[string]any{"comments": "x"}, "id", "tank/nope does not exist", middleware.ENOENT},
			}
			for _, c := range cases {
				_, err := e.call("pool.dataset.update", c.id, c.body)
				wantValidation(t, err, c.attr, c.msg)
				if c.errno != 0 && err.(middleware.ValidationErrors)[0].Errno != c.errno {
					t.Errorf("%v: errno %d, want %d", c.body, err.(middleware.ValidationErrors)[0].Errno, c.errno)
				}
			}
			// zfs refuses a refreservation larger than the pool: the error names the attribute
			_, err := e.call("pool.dataset.update", "tank/a", map[string]any{"refreservation": 100 << 30})
			if e.v.AtLeast(25, 10, 0) {
				wantValidation(t, err, "pool.dataset.update", "Failed to update properties")
			} else {
				wantValidation(t, err, "pool_dataset_update.refreservation", "size is greater than available space")
			}
			if ve := err.(middleware.ValidationErrors); ve[0].Errno != middleware.ENOSPC {
				t.Errorf("refreservation beyond the pool: errno %d, want ENOSPC", ve[0].Errno)
			}
		})
	}
}
