#!/usr/bin/env bash
# make chart-cluster-test: the chart's cluster tests (cluster_test.go) on the
# local cluster: `switchyard-lab cluster up` with the images of
# scripts/images.sh imported into the host node, then a duplicate driver
# name refused by name, and `helm install` timed to the driver Ready; the
# test namespaces removed and the cluster stopped however it ends.
#
# The cluster is machine-wide: run it under the lab's lock where several
# people share a machine (flock <lock file> make chart-cluster-test).
# Root only. Skips (exit 0, the reason said) when the cluster tier cannot run
# here; LAB_REQUIRE=cluster makes that a failure, as in make e2e.
#
# env: GO (default go), CHART_KEEP=1 leaves the cluster running.
set -euo pipefail

say() { echo "chart-cluster-test: $*" >&2; }
die() {
	say "$*"
	exit 1
}

ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$ROOT"
export PATH="$PATH:/usr/local/go/bin:/usr/sbin:/sbin"
GO=${GO:-go}
[ "$(id -u)" = 0 ] || die "not root: the local cluster needs root"
[ -x bin/switchyard-lab ] || die "bin/switchyard-lab is missing: run make build (make chart-cluster-test does)"

rc=0
out=$(bin/switchyard-lab cluster check --tier) || rc=$?
case $rc in
0) ;;
3)
	say "$out"
	case ",${LAB_REQUIRE:-}," in
	*,cluster,* | *,all,*) die "the cluster tier is required (LAB_REQUIRE=$LAB_REQUIRE) but cannot run: the reason is above" ;;
	esac
	say "SKIP: the chart's cluster tests need the cluster tier (LAB_REQUIRE=cluster makes this a failure)"
	exit 0
	;;
*) die "bin/switchyard-lab cluster check --tier exited $rc: the reason is above" ;;
esac

IMGDIR=$(GO=$GO scripts/images.sh | tail -1)
if [ ! -f "$IMGDIR/images.txt" ] || [ ! -f "$IMGDIR/lab-values.yaml" ]; then
	die "scripts/images.sh printed $IMGDIR, which lacks images.txt or lab-values.yaml"
fi
HELM=$(GO=$GO scripts/ensure-helm.sh)
KUBECTL=$(GO=$GO scripts/ensure-kube.sh)/kubectl
# The test binary is built before the cluster starts (a cold module cache
# downloads through the proxy; the cluster's clients run without it).
WORK=$(mktemp -d /tmp/switchyard-chart.XXXXXX)
$GO test -c -o "$WORK/chart.test" ./deploy/charts/switchyard

# The cluster's addresses are local: a proxy named in the environment
# would refuse them (e2e/run.sh says more).
for v in http_proxy HTTP_PROXY https_proxy HTTPS_PROXY all_proxy ALL_PROXY no_proxy NO_PROXY; do unset "$v"; done

args=(cluster up)
while read -r tar _; do args+=(--image "$IMGDIR/$tar"); done <"$IMGDIR/images.txt"
cleanup() {
	local rc=$?
	set +e
	if [ -n "${KUBECONFIG:-}" ]; then
		"$KUBECTL" delete namespace chart-test-a chart-test-b chart-test-ready --ignore-not-found --wait --timeout=2m >&2
	fi
	if [ "${CHART_KEEP:-0}" != 1 ]; then
		say "cluster down"
		bin/switchyard-lab cluster down >&2
	fi
	rm -rf "$WORK"
	exit $rc
}
trap cleanup EXIT
say "cluster up"
bin/switchyard-lab "${args[@]}" | tee "$WORK/up.log" >&2
KUBECONFIG=$(sed -n 's/^export KUBECONFIG=//p' "$WORK/up.log" | tail -1)
[ -n "$KUBECONFIG" ] || die "cluster up printed no kubeconfig"
export KUBECONFIG
# A storage VM Node from an earlier --vm run (etcd outlives the processes)
# would keep the DaemonSet from ever being Ready.
"$KUBECTL" delete node storage-vm --ignore-not-found >&2
"$KUBECTL" delete pods --all-namespaces --field-selector spec.nodeName=storage-vm --force --grace-period=0 --ignore-not-found >&2 2>/dev/null || true

say "tests (go test ./deploy/charts/switchyard -run Cluster)"
(cd deploy/charts/switchyard && HELM=$HELM KUBECTL=$KUBECTL CHART_KUBECONFIG=$KUBECONFIG CHART_LAB_VALUES=$IMGDIR/lab-values.yaml LAB_REQUIRE=cluster \
	"$WORK/chart.test" -test.run Cluster -test.v -test.count=1 -test.timeout 15m)
