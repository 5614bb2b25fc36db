package truenas

import (
	"context"
	"sort"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/zfs"
)

// datasets is zfs.Datasets over the TrueNAS API: pool.dataset.* for
// filesystems and zvols, zfs.snapshot.* / pool.snapshot.* for snapshots,
// replication.run_onetime for send | receive.
type datasets struct{ t *truenas }

var _ zfs.Datasets = (*datasets)(nil)

func (d *datasets) Create(ctx context.Context, name string, o zfs.CreateOptions) error {
	_, err := d.create(ctx, name, o, nil)
	return err
}

func (d *datasets) CreateAndGet(ctx context.Context, name string, o zfs.CreateOptions, props ...string) (zfs.Properties, error) {
	e, err := d.create(ctx, name, o, props)
	if err != nil {
		return nil, err
	}
	return entryProps(e, props), nil
}

// create makes the dataset with its properties in one call and returns
// the new entry, decoded only as far as entryProps needs for props.
func (d *datasets) create(ctx context.Context, name string, o zfs.CreateOptions, props []string) (map[string]any, error) {
	fields, user, err := payload(o.Props)
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "%s: creating %s: %v", d.t.kind.name, name, err)
	}
	fields["name"] = name
	fields["type"] = "FILESYSTEM"
	if o.Volsize > 0 {
		fields["type"] = "VOLUME"
		fields["volsize"] = o.Volsize
		fields["sparse"] = o.Sparse
	}
	if o.Parents {
		fields["create_ancestors"] = true
	}
	if len(user) > 0 {
		fields["user_properties"] = user
	}
	raw, err := d.t.api.Call(ctx, "pool.dataset.create", fields)
	if err != nil {
		return nil, d.t.datasetErr(err, "pool.dataset.create")
	}
	e, err := entryOf(raw, props)
	if err != nil {
		return nil, d.t.datasetErr(d.t.unexpected("pool.dataset.create", err), "pool.dataset.create")
	}
	return e, nil
}

func (d *datasets) Destroy(ctx context.Context, name string, o zfs.DestroyOptions) error {
	if strings.Contains(name, "@") {
		ns, err := d.t.snapshotNS(ctx)
		if err != nil {
			return err
		}
		err = d.t.call(ctx, nil, ns+".delete", name, map[string]any{"defer": o.Defer})
		return d.t.datasetErr(err, ns+".delete")
	}
	err := d.t.call(ctx, nil, "pool.dataset.delete", name, map[string]any{"recursive": o.Recursive, "force": o.Force})
	return d.t.datasetErr(err, "pool.dataset.delete")
}

func (d *datasets) Set(ctx context.Context, name string, props ...zfs.Prop) error {
	fields, user, err := payload(props)
	if err != nil {
		return status.Errorf(codes.InvalidArgument, "%s: setting properties of %s: %v", d.t.kind.name, name, err)
	}
	if len(user) > 0 {
		fields["user_properties_update"] = user
	}
	if len(fields) == 0 {
		return nil
	}
	method := "pool.dataset.update"
	if strings.Contains(name, "@") {
		ns, err := d.t.snapshotNS(ctx)
		if err != nil {
			return err
		}
		method = ns + ".update"
	}
	return d.t.datasetErr(d.t.call(ctx, nil, method, name, fields), method)
}

func (d *datasets) Snapshot(ctx context.Context, snap string, props ...zfs.Prop) error {
	ns, err := d.t.snapshotNS(ctx)
	if err != nil {
		return err
	}
	ds, short, _ := strings.Cut(snap, "@")
	req := map[string]any{"dataset": ds, "name": short}
	if len(props) > 0 {
		p := map[string]string{}
		for _, x := range props {
			p[x.Name] = x.Value
		}
		req["properties"] = p
	}
	return d.t.datasetErr(d.t.call(ctx, nil, ns+".create", req), ns+".create")
}

func (d *datasets) Clone(ctx context.Context, snap, name string, props ...zfs.Prop) error {
	ns, err := d.t.snapshotNS(ctx)
	if err != nil {
		return err
	}
	err = d.t.call(ctx, nil, ns+".clone", map[string]any{"snapshot": snap, "dataset_dst": name})
	if err != nil {
		return d.t.datasetErr(err, ns+".clone")
	}
	return d.Set(ctx, name, props...)
}

// SendReceive copies a snapshot into a new dataset with a one-time local
// replication (the API's zfs send | zfs receive).
func (d *datasets) SendReceive(ctx context.Context, snap, target string) error {
	ds, short, _ := strings.Cut(snap, "@")
	req := map[string]any{
		"direction":        "PUSH",
		"transport":        "LOCAL",
		"source_datasets":  []string{ds},
		"target_dataset":   target,
		"recursive":        false,
		"name_regex":       "^" + regexpQuote(short) + "$",
		"retention_policy": "NONE",
		"readonly":         "IGNORE",
		"properties":       true,
	}
	_, err := d.t.api.CallJob(ctx, "replication.run_onetime", req)
	return d.t.datasetErr(err, "replication.run_onetime")
}

func regexpQuote(s string) string {
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune(`\.+*?()|[]{}^$`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func (d *datasets) Get(ctx context.Context, name string, props ...string) (zfs.Properties, error) {
	var rows []map[string]any
	var err error
	if strings.Contains(name, "@") {
		rows, err = d.snapshots(ctx, []any{[]any{"id", "=", name}}, props)
	} else {
		rows, err = d.datasetRows(ctx, []any{[]any{"id", "=", name}}, props)
	}
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, notExist(name)
	}
	return entryProps(rows[0], props), nil
}

// List answers `zfs list` (-d 1 or -r, with types) from the dataset and
// snapshot queries.
func (d *datasets) List(ctx context.Context, root string, o zfs.ListOptions) ([]zfs.Row, error) {
	if strings.Contains(root, "@") { // zfs list <snapshot>: that snapshot
		snaps, err := d.snapshots(ctx, []any{[]any{"id", "=", root}}, o.Props)
		if err != nil {
			return nil, err
		}
		if len(snaps) == 0 {
			return nil, notExist(root)
		}
		return []zfs.Row{row(root, snaps[0], o.Props)}, nil
	}
	types := map[string]bool{}
	for _, t := range o.Types {
		types[t] = true
	}
	if len(types) == 0 {
		types["filesystem"], types["volume"] = true, true
	}
	// The snapshot query does not depend on the dataset query: both are
	// sent at once on the one connection, so the listing costs one round
	// trip of latency instead of two (the snapshots are dropped when the
	// root turns out not to exist).
	type snapResult struct {
		rows []map[string]any
		err  error
	}
	var snapc chan snapResult
	if types["snapshot"] {
		filter := []any{"dataset", "=", root}
		if o.Recursive || o.Depth > 1 {
			filter = []any{"OR", []any{filter, []any{"dataset", "^", root + "/"}}}
		}
		snapc = make(chan snapResult, 1)
		go func() {
			rows, err := d.snapshots(ctx, []any{filter}, o.Props)
			snapc <- snapResult{rows, err}
		}()
	}
	under := []any{"OR", []any{[]any{"id", "=", root}, []any{"id", "^", root + "/"}}}
	rows, err := d.datasetRows(ctx, []any{under}, o.Props)
	if err != nil {
		return nil, err
	}
	found := false
	var out []zfs.Row
	for _, e := range rows {
		id := str(e["id"])
		if id == root {
			found = true
		}
		depth := strings.Count(strings.TrimPrefix(id, root), "/")
		if (!o.Recursive && o.Depth == 0 && id != root) || (o.Depth > 0 && depth > o.Depth) {
			continue
		}
		if !types[strings.ToLower(str(e["type"]))] {
			continue
		}
		out = append(out, row(id, e, o.Props))
	}
	if !found {
		return nil, notExist(root)
	}
	if snapc != nil {
		r := <-snapc
		if r.err != nil {
			return nil, r.err
		}
		for _, e := range r.rows {
			id := str(e["id"])
			if o.Depth > 0 && strings.Count(strings.TrimPrefix(id, root), "/")+1 > o.Depth {
				continue
			}
			out = append(out, row(id, e, o.Props))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func row(id string, e map[string]any, props []string) zfs.Row {
	r := zfs.Row{Name: id, Props: map[string]string{}}
	for _, p := range props {
		r.Props[p] = entryProp(e, p).Value
	}
	return r
}

// datasetRows queries pool.dataset flat, asking only for the native
// properties needed (TrueNAS reads each from zfs).
func (d *datasets) datasetRows(ctx context.Context, filters []any, props []string) ([]map[string]any, error) {
	var native []string
	for _, p := range props {
		if !isUserProp(p) && p != "name" && p != "type" && p != "mountpoint" {
			native = append(native, p)
		}
	}
	opts := map[string]any{"extra": map[string]any{"flat": true, "retrieve_children": false,
		"properties": append(native, "mountpoint"), "user_properties": true}}
	var rows []map[string]any
	if err := d.t.call(ctx, &rows, "pool.dataset.query", filters, opts); err != nil {
		return nil, d.t.datasetErr(err, "pool.dataset.query")
	}
	return rows, nil
}

func (d *datasets) snapshots(ctx context.Context, filters []any, props []string) ([]map[string]any, error) {
	ns, err := d.t.snapshotNS(ctx)
	if err != nil {
		return nil, err
	}
	opts := map[string]any{"extra": map[string]any{"properties": props}}
	var rows []map[string]any
	if err := d.t.call(ctx, &rows, ns+".query", filters, opts); err != nil {
		return nil, d.t.datasetErr(err, ns+".query")
	}
	return rows, nil
}

func sortStrings(s []string) { sort.Strings(s) }
