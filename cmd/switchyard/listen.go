package main

import (
	"net"

	csisrv "github.com/switchyard-csi/switchyard/driver/csi"
)

func listen(endpoint string) (net.Listener, error) { return csisrv.Listen(endpoint) }
