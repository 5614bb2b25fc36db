// Package csiclient is the lab's CSI client: it dials a plugin socket and
// waits until the plugin answers Probe.
package csiclient

import (
	"context"
	"fmt"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"
)

// Client holds the three CSI service clients of one plugin.
type Client struct {
	Conn       *grpc.ClientConn
	Identity   csipb.IdentityClient
	Controller csipb.ControllerClient
	Node       csipb.NodeClient
}

// Dial connects to endpoint ("unix:///path" or "host:port").
func Dial(endpoint string) (*Client, error) {
	// A short reconnect backoff: the lab dials plugins that are still
	// starting, and gRPC's default first retry waits a whole second.
	cc, err := grpc.NewClient(endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: backoff.Config{BaseDelay: 2 * time.Millisecond, Multiplier: 1.5, MaxDelay: 50 * time.Millisecond}, MinConnectTimeout: time.Second}))
	if err != nil {
		return nil, err
	}
	return &Client{Conn: cc, Identity: csipb.NewIdentityClient(cc), Controller: csipb.NewControllerClient(cc), Node: csipb.NewNodeClient(cc)}, nil
}

// WaitReady polls Probe until the plugin is ready or ctx ends, and returns
// how long that took.
func (c *Client) WaitReady(ctx context.Context) (time.Duration, error) {
	start := time.Now()
	for {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		resp, err := c.Identity.Probe(pctx, &csipb.ProbeRequest{})
		cancel()
		if err == nil && resp.GetReady().GetValue() {
			return time.Since(start), nil
		}
		select {
		case <-ctx.Done():
			return time.Since(start), fmt.Errorf("plugin not ready: %v (last probe: %v)", ctx.Err(), err)
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// Close closes the connection.
func (c *Client) Close() error { return c.Conn.Close() }
