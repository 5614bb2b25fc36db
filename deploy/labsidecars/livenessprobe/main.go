// Command livenessprobe answers the kubelet's liveness checks for a CSI
// driver, as kubernetes-csi's livenessprobe does (see ../README.md for why
// the lab has its own): GET /healthz calls the driver's Probe and answers
// 200 when the driver says it is ready, 500 with the reason otherwise.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/http"
	"time"

	csi "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

func main() {
	csiAddress := flag.String("csi-address", "/run/csi/socket", "the driver's CSI socket inside this container")
	port := flag.Int("health-port", 9808, "TCP port of /healthz (all addresses)")
	endpoint := flag.String("http-endpoint", "", "address of /healthz, e.g. :9808; wins over --health-port")
	probeTimeout := flag.Duration("probe-timeout", time.Second, "how long the driver has to answer Probe")
	_ = flag.Int("v", 0, "log verbosity (accepted for compatibility)")
	flag.Parse()

	conn, err := grpc.NewClient("unix://"+*csiAddress, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		log.Fatalf("driver socket %s: %v", *csiAddress, err)
	}
	h := &prober{client: csi.NewIdentityClient(conn), timeout: *probeTimeout}

	addr := *endpoint
	if addr == "" {
		addr = fmt.Sprintf(":%d", *port)
	}
	mux := http.NewServeMux()
	mux.Handle("/healthz", h)
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	log.Printf("serving /healthz on %s for the driver at %s", addr, *csiAddress)
	err = srv.ListenAndServe()
	_ = conn.Close()
	log.Fatal(err)
}

type prober struct {
	client  csi.IdentityClient
	timeout time.Duration
}

func (p *prober) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), p.timeout)
	defer cancel()
	resp, err := p.client.Probe(ctx, &csi.ProbeRequest{})
	switch {
	case err != nil:
		http.Error(w, "driver Probe failed: "+err.Error(), http.StatusInternalServerError)
	case resp.GetReady() != nil && !resp.GetReady().GetValue():
		http.Error(w, "driver is not ready", http.StatusInternalServerError)
	default:
		_, _ = w.Write([]byte("ok"))
	}
}
