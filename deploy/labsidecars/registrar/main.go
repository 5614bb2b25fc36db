// Command registrar registers a CSI driver's node plugin with the kubelet,
// as kubernetes-csi's node-driver-registrar does (see ../README.md for why
// the lab has its own): it learns the driver's name from the driver, serves
// the kubelet's plugin registration API on a socket in the kubelet's
// plugins_registry directory, and stops with an error when the kubelet
// refuses the registration, so the pod restarts and tries again.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	csi "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	registration "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

func main() {
	csiAddress := flag.String("csi-address", "/csi/csi.sock", "the driver's CSI socket inside this container")
	kubeletPath := flag.String("kubelet-registration-path", "", "the driver's socket as the kubelet sees it on the host (required)")
	regDir := flag.String("plugin-registration-path", "/registration", "the kubelet's plugins_registry directory inside this container")
	timeout := flag.Duration("timeout", time.Minute, "how long to wait for the driver to answer GetPluginInfo")
	_ = flag.Int("v", 0, "log verbosity (accepted for compatibility)")
	_ = flag.String("http-endpoint", "", "accepted for compatibility; no health endpoint here")
	flag.Parse()
	if *kubeletPath == "" {
		log.Fatal("--kubelet-registration-path is required: the driver's socket path on the host, e.g. /var/lib/kubelet/plugins/<driver>/csi.sock")
	}

	name, err := driverName(*csiAddress, *timeout)
	if err != nil {
		log.Fatalf("asking the driver at %s for its name: %v", *csiAddress, err)
	}
	sock := filepath.Join(*regDir, name+"-reg.sock")
	if err := os.Remove(sock); err != nil && !errors.Is(err, os.ErrNotExist) {
		log.Fatalf("removing the old registration socket: %v", err)
	}
	lis, err := net.Listen("unix", sock)
	if err != nil {
		log.Fatalf("listening on %s: %v", sock, err)
	}
	failed := make(chan string, 1)
	srv := grpc.NewServer()
	registration.RegisterRegistrationServer(srv, &registrar{name: name, endpoint: *kubeletPath, failed: failed})

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		select {
		case s := <-sigs:
			log.Printf("%v: removing %s", s, sock)
			srv.Stop()
			_ = os.Remove(sock)
			os.Exit(0)
		case msg := <-failed:
			srv.Stop()
			_ = os.Remove(sock)
			log.Fatalf("the kubelet refused the registration of %s: %s", name, msg)
		}
	}()
	log.Printf("registering driver %s (endpoint %s) through %s", name, *kubeletPath, sock)
	if err := srv.Serve(lis); err != nil {
		log.Fatalf("serving %s: %v", sock, err)
	}
}

// driverName asks the driver for its name, retrying while its socket is not up yet.
func driverName(address string, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	conn, err := grpc.NewClient("unix://"+address, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return "", err
	}
	defer func() { _ = conn.Close() }()
	client := csi.NewIdentityClient(conn)
	for {
		resp, err := client.GetPluginInfo(ctx, &csi.GetPluginInfoRequest{})
		if err == nil {
			if resp.GetName() == "" {
				return "", fmt.Errorf("the driver answered GetPluginInfo with an empty name")
			}
			return resp.GetName(), nil
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("no answer within %v: %w", timeout, err)
		case <-time.After(time.Second):
		}
	}
}

type registrar struct {
	registration.UnimplementedRegistrationServer
	name, endpoint string
	failed         chan<- string
}

func (r *registrar) GetInfo(context.Context, *registration.InfoRequest) (*registration.PluginInfo, error) {
	return &registration.PluginInfo{
		Type:              registration.CSIPlugin,
		Name:              r.name,
		Endpoint:          r.endpoint,
		SupportedVersions: []string{"1.0.0"},
	}, nil
}

func (r *registrar) NotifyRegistrationStatus(_ context.Context, st *registration.RegistrationStatus) (*registration.RegistrationStatusResponse, error) {
	if st.GetPluginRegistered() {
		log.Printf("the kubelet registered %s", r.name)
	} else {
		select {
		case r.failed <- st.GetError():
		default:
		}
	}
	return &registration.RegistrationStatusResponse{}, nil
}
