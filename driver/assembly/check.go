package assembly

import (
	"errors"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/config"
	csisrv "github.com/switchyard-csi/switchyard/driver/csi"
	"github.com/switchyard-csi/switchyard/driver/nodeid"
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
	if drv, _ := backend.DriverOf(main); drv == "proxy" {
		set, ps := proxy.ParseSettings(main)
		_, cps := proxyCaps().Override(main)
		ps = append(ps, cps...).InFile(path)
		if set.ConfigFolder != "" {
			ps = append(ps, proxy.CheckFolder(&set, main)...)
		}
		return ps
	}
	// A standalone backend: the same resolution as at start-up.
	var ps config.Problems
	typ, err := backend.Resolve(main, path)
	if err != nil {
		var re *backend.ResolveError
		if !errors.As(err, &re) {
			return config.Problems{{File: path, Key: "driver", Msg: err.Error()}}
		}
		if re.Kind != backend.Invalid {
			return re.Problems
		}
		ps = re.Problems
	}
	_, cps := csisrv.CapabilitySet{}.Override(main)
	_, nps := nodeid.ParseSettings(main, nodeid.Settings{NodeName: true, NQN: typ.HostNQN})
	ps = append(ps, append(cps, nps...).InFile(path)...)
	if len(ps) == 0 && typ.Warnings != nil {
		ps = config.Problems(typ.Warnings(main)).InFile(path)
	}
	return ps
}
