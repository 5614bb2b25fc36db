package storage

import (
	"encoding/json"
	"strconv"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// poolRows are pool.query's entries, ids from 1 in name order (the
// middleware's database ids of imported pools).
func (s *service) poolRows() []middleware.Row {
	var rows []middleware.Row
	for i, p := range s.m.Pools() {
		healthy := p.Health == "ONLINE" || p.Health == ""
		status := p.Health
		if status == "" {
			status = "ONLINE"
		}
		statusCode := "HEALTHY"
		if !healthy {
			statusCode = "UNHEALTHY"
		}
		vdev := map[string]any{
			"name": "sim-" + p.Name, "type": "DISK", "path": "/dev/disk/by-partuuid/sim-" + p.Name,
			"guid": strconv.FormatUint(p.GUID+1, 10), "status": status, "children": []any{},
			"stats": map[string]any{"size": p.Size, "allocated": p.Allocated,
				"read_errors": 0, "write_errors": 0, "checksum_errors": 0},
		}
		rows = append(rows, middleware.Row{
			"id":                i + 1,
			"name":              p.Name,
			"guid":              strconv.FormatUint(p.GUID, 10),
			"status":            status,
			"path":              altroot + "/" + p.Name,
			"scan":              nil,
			"expand":            nil,
			"is_upgraded":       true,
			"healthy":           healthy,
			"warning":           false,
			"status_code":       statusCode,
			"status_detail":     nil,
			"size":              p.Size,
			"allocated":         p.Allocated,
			"free":              p.Free,
			"freeing":           0,
			"dedup_table_size":  0,
			"dedup_table_quota": "auto",
			"fragmentation":     "0",
			"size_str":          strconv.FormatInt(p.Size, 10),
			"allocated_str":     strconv.FormatInt(p.Allocated, 10),
			"free_str":          strconv.FormatInt(p.Free, 10),
			"freeing_str":       "0",
			"autotrim":          map[string]any{"parsed": "off", "rawvalue": "off", "source": "DEFAULT", "value": "off"},
			"topology": map[string]any{
				"data": []any{vdev}, "log": []any{}, "cache": []any{}, "spare": []any{},
				"special": []any{}, "dedup": []any{},
			},
		})
	}
	if s.v.AtLeast(26, 0, 0) {
		for _, r := range rows {
			r["all_sed"] = false // no self-encrypting disks in a simulated pool
		}
	}
	return rows
}

func (s *service) poolQuery(_ *middleware.Call, params []json.RawMessage) (any, error) {
	if err := positional(params, 2); err != nil {
		return nil, err
	}
	filters, opts, err := middleware.ParseQuery(params, "pool_query")
	if err != nil {
		return nil, err
	}
	return middleware.Query(s.poolRows(), filters, opts)
}

func (s *service) poolGetInstance(_ *middleware.Call, params []json.RawMessage) (any, error) {
	return getInstance(params, "Pool", s.poolQuery)
}

func (s *service) registerPool() {
	s.r.Add(middleware.Method{Name: "pool.query", Params: []string{"filters", "options"}, Handler: s.poolQuery})
	s.r.Add(middleware.Method{Name: "pool.get_instance", Params: []string{"id", "options"}, Handler: s.poolGetInstance})
}

func (s *service) registerDataset() {
	add := func(name string, job bool, params []string, h middleware.Handler) {
		s.r.Add(middleware.Method{Name: "pool.dataset." + name, Job: job, Params: params, Handler: h})
	}
	add("query", false, []string{"filters", "options"}, s.datasetQuery)
	add("get_instance", false, []string{"id", "options"}, s.datasetGetInstance)
	add("create", false, []string{"data"}, s.datasetCreate)
	add("update", false, []string{"id", "data"}, s.datasetUpdate)
	add("delete", false, []string{"id", "options"}, s.datasetDelete)
	add("promote", false, []string{"id"}, s.datasetPromote)
	if !s.v.AtLeast(26, 0, 0) {
		add("destroy_snapshots", true, []string{"name", "snapshots"}, s.datasetDestroySnapshots)
	}
}
