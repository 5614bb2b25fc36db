package demo

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/lab/csiclient"
	"github.com/switchyard-csi/switchyard/lab/infiniahost"
	"github.com/switchyard-csi/switchyard/simulators/infinia"
)

// demoHostNQN is the demo node's NVMe host NQN (proxy.nodeId.nqnFile):
// this machine may have no /etc/nvme/hostnqn.
const demoHostNQN = "nqn.2014-08.org.nvmexpress:uuid:de7a0000-5a1e-4c5b-9d1e-000000000001"

// infiniaConnections is the demo's connection file for the simulated
// Infinia: DDN's own config format plus `driver: infinia-nvmeof`.
func infiniaConnections(dir string, h *infiniahost.Host) map[string]string {
	return map[string]string{filepath.Join(dir, "connections", "infinia.yaml"): string(h.DriverConfig("infinia", nil))}
}

// infiniaTour provisions an Infinia block volume, grants and revokes this
// node's host NQN, grows it, and shows what Infinia holds through its own
// REST API.
func (w *walk) infiniaTour(ctx context.Context, c *csiclient.Client, h *infiniahost.Host) error {
	blockCap := &csipb.VolumeCapability{AccessType: &csipb.VolumeCapability_Block{Block: &csipb.VolumeCapability_BlockVolume{}},
		AccessMode: &csipb.VolumeCapability_AccessMode{Mode: csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER}}
	var vol *csipb.Volume
	var nodeID string
	h.Server.ResetStats()
	steps := []struct {
		call, args string
		fn         func() (string, error)
	}{
		{"CreateVolume", "name=pvc-red-demo connection=infinia service=" + h.Service + " 1GiB block", func() (string, error) {
			req := createReq("pvc-red-demo", "infinia", nil)
			req.Parameters["service"] = h.Service
			req.VolumeCapabilities = []*csipb.VolumeCapability{blockCap}
			r, err := c.Controller.CreateVolume(ctx, req)
			vol = r.GetVolume()
			vc := vol.GetVolumeContext()
			return fmt.Sprintf("volume_id=%s nqn=%s paths=%s", vol.GetVolumeId(), vc["nqn"], vc["transports"]), err
		}},
		{"NodeGetInfo", "", func() (string, error) {
			r, err := c.Node.NodeGetInfo(ctx, &csipb.NodeGetInfoRequest{})
			nodeID = r.GetNodeId()
			return "node_id=" + nodeID + " (n=node name, v=host NQN)", err
		}},
		{"ControllerPublishVolume", "pvc-red-demo to this node", func() (string, error) {
			r, err := c.Controller.ControllerPublishVolume(ctx, &csipb.ControllerPublishVolumeRequest{VolumeId: vol.GetVolumeId(), NodeId: nodeID, VolumeCapability: blockCap})
			return fmt.Sprintf("host NQN granted on the volume's subsystem; publish_context carries %d attach keys", len(r.GetPublishContext())), err
		}},
		{"ControllerExpandVolume", "pvc-red-demo to 2GiB", func() (string, error) {
			r, err := c.Controller.ControllerExpandVolume(ctx, &csipb.ControllerExpandVolumeRequest{VolumeId: vol.GetVolumeId(),
				CapacityRange: &csipb.CapacityRange{RequiredBytes: 2 * gib}, VolumeCapability: blockCap})
			return fmt.Sprintf("capacity=%dGiB node_expansion_required=%v (PUT …/resize)", r.GetCapacityBytes()/gib, r.GetNodeExpansionRequired()), err
		}},
	}
	for _, s := range steps {
		if err := w.step(s.call, s.args, s.fn); err != nil {
			return err
		}
	}
	st := h.Server.Stats() // before the demo's own look below
	subs, err := infiniaSubsystems(ctx, h)
	if err != nil {
		return err
	}
	w.say("on Infinia: switchyard made %d REST requests for these steps with %d new logins and %d new TLS connections (its pool and token came from the earlier ListVolumes)",
		st.Total(), st.Logins, st.TLSHandshakes)
	for _, s := range subs {
		w.say("  subsystem %s  hosts %v  %d namespace(s)  %d listener(s)", s.NQN, s.Hosts, len(s.Namespaces), len(s.Listeners))
	}
	if !w.kernel {
		w.say("(staging it needs an NVMe/TCP host: `make demo-vm` connects to one for real)")
	}
	if err := w.step("ControllerUnpublishVolume", "pvc-red-demo from this node", func() (string, error) {
		_, err := c.Controller.ControllerUnpublishVolume(ctx, &csipb.ControllerUnpublishVolumeRequest{VolumeId: vol.GetVolumeId(), NodeId: nodeID})
		return "host NQN revoked", err
	}); err != nil {
		return err
	}
	if err := w.deleteAll(ctx, c, []deletion{{"DeleteVolume", vol.GetVolumeId()}}); err != nil {
		return err
	}
	return w.step("subsystems", "on Infinia after the delete", func() (string, error) {
		subs, err := infiniaSubsystems(ctx, h)
		if err != nil {
			return "", err
		}
		if len(subs) != 0 {
			return "", fmt.Errorf("left on Infinia: %+v", subs)
		}
		return "no subsystem, no volume left", nil
	})
}

// infiniaSubsystem is what the demo prints of GET …/list.
type infiniaSubsystem struct {
	NQN        string            `json:"nqn"`
	Hosts      []string          `json:"hosts"`
	Namespaces []json.RawMessage `json:"namespaces"`
	Listeners  []json.RawMessage `json:"listeners"`
}

// infiniaSubsystems asks the simulator over its REST API, as an operator
// would: log in by headers, then GET the subtenant's NVMe-oF targets.
func infiniaSubsystems(ctx context.Context, h *infiniahost.Host) ([]infiniaSubsystem, error) {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(h.CertPEM)
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	defer hc.CloseIdleConnections()
	get := func(path string, hdr map[string]string, out any) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.URL+"/redapi/v1"+path, nil)
		if err != nil {
			return err
		}
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s", path, resp.Status)
		}
		return json.NewDecoder(resp.Body).Decode(&struct{ Data any }{Data: out})
	}
	parts := strings.SplitN(h.Account, "/", 3) // cluster/tenant/user
	var login struct{ Token string }
	if err := get("/auth_user", map[string]string{"user_id": parts[2], "password": h.Password, "level": parts[0] + "/" + parts[1]}, &login); err != nil {
		return nil, err
	}
	var list struct {
		Targets []struct {
			Subsystems []infiniaSubsystem `json:"subsystems"`
		} `json:"targets"`
	}
	path := fmt.Sprintf("/clusters/%s/tenants/%s/subtenants/%s/list", parts[0], parts[1], infinia.DefaultSubtenant)
	if err := get(path, map[string]string{"Authorization": "Bearer " + login.Token}, &list); err != nil {
		return nil, err
	}
	var out []infiniaSubsystem
	for _, t := range list.Targets {
		out = append(out, t.Subsystems...)
	}
	return out, nil
}
