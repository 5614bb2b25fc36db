package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
)

// Paths are built from escaped segments, so a name can never step into
// another part of the hierarchy.
func (c *Client) clusterPath(parts ...string) string {
	cluster, _, _ := strings.Cut(c.st.cfg.Level, "/")
	return join(append([]string{"clusters", cluster}, parts...))
}

func (c *Client) tenantPath(parts ...string) string {
	cluster, tenant, _ := strings.Cut(c.st.cfg.Level, "/")
	return join(append([]string{"clusters", cluster, "tenants", tenant}, parts...))
}

func (c *Client) subPath(sub string, parts ...string) string {
	return c.tenantPath(append([]string{"subtenants", sub}, parts...)...)
}

func join(parts []string) string {
	var b strings.Builder
	b.WriteString(basePath)
	for _, p := range parts {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(p))
	}
	return b.String()
}

// call runs Do and returns the decoded data, or the zero value on error.
func call[T any](ctx context.Context, c *Client, method, path string, hdr http.Header, body any) (T, error) {
	var out T
	if err := c.Do(ctx, method, path, hdr, body, &out); err != nil {
		var zero T
		return zero, err
	}
	if v := reflect.ValueOf(&out).Elem(); v.Kind() == reflect.Pointer && v.IsNil() {
		return out, fmt.Errorf("infinia %s: %s %s: the answer carries no data", c.currentLabel(), method, path)
	}
	return out, nil
}

func force(f bool) string { return "?force=" + strconv.FormatBool(f) }

// ListSubtenants lists the tenant's subtenants.
func (c *Client) ListSubtenants(ctx context.Context) ([]Subtenant, error) {
	return call[[]Subtenant](ctx, c, http.MethodGet, c.tenantPath("subtenants"), nil, nil)
}

// GetSubtenant reads one subtenant (quota and usage).
func (c *Client) GetSubtenant(ctx context.Context, sub string) (*Subtenant, error) {
	return call[*Subtenant](ctx, c, http.MethodGet, c.subPath(sub), nil, nil)
}

// ListServices lists a subtenant's services.
func (c *Client) ListServices(ctx context.Context, sub string) ([]Service, error) {
	return call[[]Service](ctx, c, http.MethodGet, c.subPath(sub, "services"), nil, nil)
}

// GetService reads one service.
func (c *Client) GetService(ctx context.Context, sub, name string) (*Service, error) {
	return call[*Service](ctx, c, http.MethodGet, c.subPath(sub, "services", name), nil, nil)
}

// GetDataset reads one dataset (quota and usage).
func (c *Client) GetDataset(ctx context.Context, sub, name string) (*Dataset, error) {
	return call[*Dataset](ctx, c, http.MethodGet, c.subPath(sub, "datasets", name), nil, nil)
}

// ListVolumes lists a dataset's volumes sorted by name: at most limit
// (0 = all), starting after the name from ("" = from the start).
func (c *Client) ListVolumes(ctx context.Context, sub, dataset string, limit int, from string) ([]Volume, error) {
	hdr := http.Header{}
	if limit > 0 {
		hdr.Set("limit", strconv.Itoa(limit))
	}
	if from != "" {
		hdr.Set("from", from)
	}
	return call[[]Volume](ctx, c, http.MethodGet, c.subPath(sub, "datasets", dataset, "volumes"), hdr, nil)
}

// GetVolume reads one volume.
func (c *Client) GetVolume(ctx context.Context, sub, dataset, name string) (*Volume, error) {
	out, err := call[struct {
		Volume *Volume `json:"volume"`
	}](ctx, c, http.MethodGet, c.subPath(sub, "datasets", dataset, "volumes", name), nil, nil)
	if err == nil && out.Volume == nil {
		err = fmt.Errorf("infinia %s: volume %s: the answer has no volume", c.currentLabel(), name)
	}
	return out.Volume, err
}

// CreateVolume makes a volume, a namespace of the subsystem v.NvmfTarget.
func (c *Client) CreateVolume(ctx context.Context, sub, dataset string, v NewVolume) (*Volume, error) {
	return call[*Volume](ctx, c, http.MethodPost, c.subPath(sub, "datasets", dataset, "volumes"), nil, v)
}

// DeleteVolume removes a volume; force removes its namespace even when the
// subsystem has hosts.
func (c *Client) DeleteVolume(ctx context.Context, sub, dataset, name string, f bool) error {
	return c.Do(ctx, http.MethodDelete, c.subPath(sub, "datasets", dataset, "volumes", name)+force(f), nil, nil, nil)
}

// ResizeVolume grows a volume to nblocks blocks.
func (c *Client) ResizeVolume(ctx context.Context, sub, dataset, name string, nblocks int64) (*Volume, error) {
	var out Volume
	body := map[string]int64{"nblocks": nblocks}
	return &out, c.Do(ctx, http.MethodPut, c.subPath(sub, "datasets", dataset, "volumes", name, "resize"), nil, body, &out)
}

// ExposeVolume adds a listener of instance to the volume's subsystem
// (idempotent). The facts do not say what it answers: the subsystem is
// returned when the answer's data reads as one, else nil (never an error:
// the expose itself succeeded).
func (c *Client) ExposeVolume(ctx context.Context, sub, dataset, name string, instance int) (*Subsystem, error) {
	body := map[string]any{"nvmf": map[string]any{"transport": "TCP", "instanceId": instance}}
	var raw json.RawMessage
	if err := c.Do(ctx, http.MethodPut, c.subPath(sub, "datasets", dataset, "volumes", name, "expose"), nil, body, &raw); err != nil {
		return nil, err
	}
	return subsystemIn(raw), nil
}

// subsystemIn reads data as a subsystem; nil when it is none (absent,
// null, another shape, or nameless).
func subsystemIn(raw json.RawMessage) *Subsystem {
	var s Subsystem
	if json.Unmarshal(raw, &s) != nil || s.Name == "" {
		return nil
	}
	return &s
}

// CreateSubsystem makes an NVMe-oF subsystem.
func (c *Client) CreateSubsystem(ctx context.Context, sub, name string, s NewSubsystem) (*Subsystem, error) {
	return call[*Subsystem](ctx, c, http.MethodPost, c.subPath(sub, "subsystems", name), nil, s)
}

// GetSubsystem reads one subsystem.
func (c *Client) GetSubsystem(ctx context.Context, sub, name string) (*Subsystem, error) {
	return call[*Subsystem](ctx, c, http.MethodGet, c.subPath(sub, "subsystems", name), nil, nil)
}

// DeleteSubsystem removes a subsystem; force removes its namespaces first
// (the volumes stay).
func (c *Client) DeleteSubsystem(ctx context.Context, sub, name string, f bool) error {
	return c.Do(ctx, http.MethodDelete, c.subPath(sub, "subsystems", name)+force(f), nil, nil, nil)
}

// ListSubsystems lists every subsystem of a subtenant (GET …/list).
func (c *Client) ListSubsystems(ctx context.Context, sub string) ([]Subsystem, error) {
	var out struct {
		Targets []struct {
			Subsystems []Subsystem `json:"subsystems"`
		} `json:"targets"`
	}
	if err := c.Do(ctx, http.MethodGet, c.subPath(sub, "list"), nil, nil, &out); err != nil {
		return nil, err
	}
	var all []Subsystem
	for _, t := range out.Targets {
		all = append(all, t.Subsystems...)
	}
	return all, nil
}

// AddHost allows a host NQN to connect to a subsystem.
func (c *Client) AddHost(ctx context.Context, sub, subsystem, nqn string) error {
	body := map[string]string{"host_nqn": nqn}
	return c.Do(ctx, http.MethodPost, c.subPath(sub, "subsystems", subsystem, "hosts"), nil, body, nil)
}

// RemoveHost withdraws a host NQN's access.
func (c *Client) RemoveHost(ctx context.Context, sub, subsystem, nqn string) error {
	return c.Do(ctx, http.MethodDelete, c.subPath(sub, "subsystems", subsystem, "hosts", nqn), nil, nil, nil)
}

// ListHosts lists the host NQNs allowed on a subsystem.
func (c *Client) ListHosts(ctx context.Context, sub, subsystem string) ([]string, error) {
	return call[[]string](ctx, c, http.MethodGet, c.subPath(sub, "subsystems", subsystem, "hosts"), nil, nil)
}

// Instances lists the cluster's instances.
func (c *Client) Instances(ctx context.Context) ([]Instance, error) {
	return call[[]Instance](ctx, c, http.MethodGet, c.clusterPath("instances"), nil, nil)
}

// ClusterCapacity reads the cluster's raw capacity.
func (c *Client) ClusterCapacity(ctx context.Context) (*Capacity, error) {
	return call[*Capacity](ctx, c, http.MethodGet, c.clusterPath("capacity_percent"), nil, nil)
}
