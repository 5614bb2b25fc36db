package backends

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
)

// The checks ask the storage system itself, never the driver: a driver
// bug that forgets a volume must not hide the volume from the check.

// zfsLeftovers lists the datasets, zvols and snapshots under the
// connection's two parents on a ZFS-over-SSH host.
func zfsLeftovers(ctx context.Context, addr, user, password, pool, conn string) ([]string, error) {
	var left []string
	for _, parent := range []string{pool + "/k8s/" + conn, pool + "/k8s/" + conn + "-snapshots"} {
		out, err := SSHRun(ctx, addr, user, password, "zfs list -H -o name -t all -r "+parent)
		if err != nil {
			if strings.Contains(out, "does not exist") {
				continue
			}
			return nil, fmt.Errorf("zfs list on %s: %v: %s", addr, err, out)
		}
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			if l = strings.TrimSpace(l); l != "" && l != parent {
				left = append(left, l)
			}
		}
	}
	return left, nil
}

// zfsSize reads a numeric property (refquota, volsize) of a dataset.
func zfsSize(ctx context.Context, addr, user, password, dataset, prop string) (int64, error) {
	out, err := SSHRun(ctx, addr, user, password, "zfs get -Hp -o value "+prop+" "+dataset)
	if err != nil {
		return 0, fmt.Errorf("zfs get %s %s: %v: %s", prop, dataset, err, out)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(out), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("zfs get %s %s: %q is not a size", prop, dataset, strings.TrimSpace(out))
	}
	return n, nil
}

// SSHRun runs one command on a lab storage host over SSH (password login,
// host key not pinned: the lab starts the host on loopback with a new key
// each run); the output is stdout and stderr together.
func SSHRun(ctx context.Context, addr, user, password, cmd string) (string, error) {
	cfg := &ssh.ClientConfig{
		User: user,
		Auth: []ssh.AuthMethod{ssh.Password(password)},
		// The lab started this host on loopback for this run; its key is
		// new every time, so there is nothing to pin it to.
		HostKeyCallback: ssh.InsecureIgnoreHostKey(), //nolint:gosec // a lab host on 127.0.0.1, see above
		Timeout:         15 * time.Second,
	}
	d := net.Dialer{Timeout: 15 * time.Second}
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	c, chans, reqs, err := ssh.NewClientConn(nc, addr, cfg)
	if err != nil {
		nc.Close()
		return "", err
	}
	client := ssh.NewClient(c, chans, reqs)
	defer client.Close()
	s, err := client.NewSession()
	if err != nil {
		return "", err
	}
	defer s.Close()
	stop := context.AfterFunc(ctx, func() { client.Close() })
	defer stop()
	out, err := s.CombinedOutput(cmd)
	return string(out), err
}

// httpJSON GETs u with headers and decodes the body into v.
func httpJSON(ctx context.Context, u string, headers map[string]string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	for k, x := range headers {
		req.Header.Set(k, x)
	}
	c := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{
		// The simulators' certificates are self-signed for this run.
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // lab simulator on loopback
	}}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: HTTP %d: %.300s", req.URL.Path, resp.StatusCode, body)
	}
	return json.Unmarshal(body, v)
}

// truenasLeftovers lists the datasets (and zvols) under the
// connection's parents through the REST API.
func truenasLeftovers(ctx context.Context, base string, t *TrueNASHost, pool, conn string) ([]string, error) {
	var ds []struct {
		Name string `json:"name"`
	}
	auth := "Bearer " + t.APIKey
	if t.APIKey == "" {
		auth = "Basic " + base64.StdEncoding.EncodeToString([]byte(or(t.User, "root")+":"+t.Password))
	}
	if err := httpJSON(ctx, strings.TrimRight(base, "/")+"/api/v2.0/pool/dataset", map[string]string{"Authorization": auth}, &ds); err != nil {
		return nil, fmt.Errorf("TrueNAS datasets: %w", err)
	}
	var left []string
	for _, d := range ds {
		for _, parent := range []string{pool + "/k8s/" + conn + "/", pool + "/k8s/" + conn + "-snapshots/"} {
			if strings.HasPrefix(d.Name, parent) {
				left = append(left, d.Name)
			}
		}
	}
	return left, nil
}

// infiniaLeftovers lists which of the volumes made are still in the
// service's dataset.
func infiniaLeftovers(ctx context.Context, h *InfiniaHost, made []string) ([]string, error) {
	base := strings.TrimRight(strings.TrimSuffix(or(h.CheckURL, h.URL), "/redapi/v1"), "/") + "/redapi/v1"
	parts := strings.Split(h.Account, "/") // cluster, tenant, account
	sub, svc, _ := strings.Cut(h.Service, "/")
	var tok struct {
		Data struct {
			Token string `json:"token"`
		} `json:"data"`
	}
	if err := httpJSON(ctx, base+"/auth_user", map[string]string{"user_id": parts[2], "password": h.Password, "level": parts[0] + "/" + parts[1]}, &tok); err != nil {
		return nil, fmt.Errorf("infinia login: %w", err)
	}
	auth := map[string]string{"Authorization": "Bearer " + tok.Data.Token}
	p := fmt.Sprintf("%s/clusters/%s/tenants/%s/subtenants/%s", base, url.PathEscape(parts[0]), url.PathEscape(parts[1]), url.PathEscape(sub))
	var service struct {
		Data struct {
			Dataset string `json:"dataset"`
		} `json:"data"`
	}
	if err := httpJSON(ctx, p+"/services/"+url.PathEscape(svc), auth, &service); err != nil {
		return nil, fmt.Errorf("infinia service %s: %w", h.Service, err)
	}
	var vols struct {
		Data []struct {
			Name string `json:"name"`
		} `json:"data"`
	}
	if err := httpJSON(ctx, p+"/datasets/"+url.PathEscape(service.Data.Dataset)+"/volumes", auth, &vols); err != nil {
		return nil, fmt.Errorf("infinia volumes: %w", err)
	}
	want := map[string]bool{}
	for _, id := range made {
		// An Infinia id is <account>:<subtenant>/<service>/<volume>.
		want[id[strings.LastIndex(id, "/")+1:]] = true
	}
	var left []string
	for _, v := range vols.Data {
		if want[v.Name] {
			left = append(left, v.Name)
		}
	}
	return left, nil
}
