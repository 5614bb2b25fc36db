package truenas

import "context"

// BackendVersion (engine.VersionReporter) is the TrueNAS release from
// system.version, e.g. "TrueNAS-SCALE 24.10.2".
func (p *apiPlatform) BackendVersion(ctx context.Context) (string, error) {
	v, err := p.version(ctx)
	if err != nil {
		return "", err
	}
	return v.String(), nil
}
