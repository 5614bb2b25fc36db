package assembly

import (
	"errors"
	"fmt"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/config"
	csisrv "github.com/switchyard-csi/switchyard/driver/csi"
	"github.com/switchyard-csi/switchyard/driver/proxy"
)

// Check validates a main config and, for the proxy, every connection file,
// without starting anything. Each problem names its file and key.
func Check(path string) config.Problems {
	main, err := config.LoadMain(path)
	if err != nil {
		var p config.Problem
		if errors.As(err, &p) {
			return config.Problems{p}
		}
		return config.Problems{{File: path, Msg: err.Error()}}
	}
	drv, _ := backend.DriverOf(main)
	switch {
	case drv == "":
		return config.Problems{{File: path, Key: "driver", Msg: "required (proxy or a backend driver type)"}}
	case drv == "proxy":
		set, ps := proxy.ParseSettings(main)
		_, cps := proxyCaps().Override(main)
		ps = append(ps, cps...).InFile(path)
		if set.ConfigFolder != "" {
			ps = append(ps, proxy.CheckFolder(&set, main)...)
		}
		return ps
	}
	if why, bad := backend.ProxyIncompatible[drv]; bad {
		return config.Problems{{File: path, Key: "driver", Msg: fmt.Sprintf("%s is not supported by switchyard (%s)", drv, why)}}
	}
	typ, ok := backend.Lookup(drv)
	if !ok {
		return config.Problems{{File: path, Key: "driver", Msg: backend.Unknown(drv) + " (or proxy)"}}
	}
	var ps config.Problems
	if typ.Validate != nil {
		ps = append(ps, typ.Validate(main)...)
	}
	_, cps := csisrv.CapabilitySet{}.Override(main)
	return append(ps, cps...).InFile(path)
}
