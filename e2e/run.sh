#!/usr/bin/env bash
# make e2e: a cluster, switchyard installed from the chart with the images
# imported, the Ginkgo suites of e2e/suites, logs collected, the cluster
# stopped. docs/testing.md describes it; every step says what it does.
#
# env:
#   E2E_PROVIDER  local (default: switchyard-lab cluster up on this machine)
#                 or kind (kind-config.yaml; needs Docker and a kindest/node
#                 image, which these machines cannot pull: laptops and CI)
#   E2E_VM        1 (default): also the storage VM's node and its simulators
#                 (every backend family); 0: the host node only (local-hostpath,
#                 and a ZFS simulator on the host for the topology and limits specs)
#   E2E_LABELS    Ginkgo label filter, e.g. 'datapath && local-hostpath' (default: all; '!vm' with E2E_VM=0)
#   E2E_KEEP      1: leave the cluster and the releases running afterwards
#   E2E_ARTIFACTS where logs, failure dumps and timings go
#                 (default bin/e2e-artifacts/<UTC time>)
#   E2E_TIMEOUT   go test's -timeout (default 80m)
#   E2E_RUN       suites (default) or conformance (e2e/conformance/run.sh instead)
#   LAB_REQUIRE   with "cluster" (or "all"), a spec that cannot run fails
set -euo pipefail

# Daemons this run starts that outlive it (dockerd, through scripts/images.sh
# and scripts/ensure-docker.sh) must not inherit the descriptors this script
# was given. Run as `flock /work/notes/lab.lock make e2e`, fd 3 is the lab
# lock: a dockerd started here kept it after the run ended, and every later
# flock waited on an idle lab (2026-11-26). flock(1) itself holds the lock
# for the run; only the inherited copies are closed (255 is bash's own).
for fd in /proc/$$/fd/*; do
	case ${fd##*/} in 0 | 1 | 2 | 255) continue ;; esac
	eval "exec ${fd##*/}>&-" 2>/dev/null || true
done

say() { echo "e2e: $*" >&2; }
die() {
	say "$*"
	exit 1
}

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
export PATH="$PATH:/usr/local/go/bin:/usr/sbin:/sbin"
GO=${GO:-go}
PROVIDER=${E2E_PROVIDER:-local}
VM=${E2E_VM:-1}
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
ART=${E2E_ARTIFACTS:-$ROOT/bin/e2e-artifacts/$STAMP}
mkdir -p "$ART"
ART=$(cd "$ART" && pwd)
WORK=$(mktemp -d /tmp/switchyard-e2e.XXXXXX)
NS=switchyard
STATE=/var/lib/switchyard-lab/cluster
HOSTPATH=/var/lib/switchyard-lab/e2e-hostpath # e2e/deploy/main-values.yaml mounts it
HOST_ZFS_PORT=17122 # a ZFS simulator on the host when there is no VM (outside lab/cluster's 17020-17099)
SIM_ADDR=127.0.0.1  # where the host's simulators listen: the kind network's gateway with kind
KIND_CLUSTER=switchyard-e2e
t0=$(date +%s)

# No HTTP proxy for anything that talks to the cluster. CI's environment
# names an egress proxy (HTTPS_PROXY, HTTP_PROXY, no_proxy): go and apt
# reach their registries through it, so the builds below keep it. But
# every address of this lab (the nodes' 10.250.0.x, the storage VM) is
# local, and a Go client (kubectl, helm, the suites, snapshot-controller)
# sends non-loopback requests to whatever HTTPS_PROXY names: the proxy
# refuses them ("resolve_deny: denied destination"). kubectl, helm, the
# suites' test binary and the processes this script starts run through
# noproxy; lab/cluster drops the variables for the cluster's own
# processes (kube-apiserver, kubelets, containerd: lab/cluster/proc.go).
PROXY_VARS=(http_proxy HTTP_PROXY https_proxy HTTPS_PROXY all_proxy ALL_PROXY no_proxy NO_PROXY)
NOPROXY=(env)
for v in "${PROXY_VARS[@]}"; do NOPROXY+=(-u "$v"); done
noproxy() { "${NOPROXY[@]}" "$@"; }
# (Background processes run "${NOPROXY[@]}" directly: env execs the
# program, so $! is its pid; a function would fork a shell in between,
# and killing $! would leave the program running.)
for v in "${PROXY_VARS[@]}"; do
	if [ -n "${!v:-}" ]; then say "$v is set: the cluster, kubectl, helm and the suites run without it (builds keep it)"; fi
done

step() { say "[$(($(date +%s) - t0))s] $*"; }

cleanups=()
on_exit() {
	local rc=$?
	set +e
	for ((i = ${#cleanups[@]} - 1; i >= 0; i--)); do eval "${cleanups[$i]}"; done
	rm -rf "$WORK"
	say "artifacts in $ART (total $(($(date +%s) - t0))s, exit $rc)"
	exit $rc
}
trap on_exit EXIT

case "$PROVIDER" in
local) ;;
kind)
	# kind needs a kindest/node image from a registry; none is reachable
	# on these machines (docs/testing.md). On a laptop or in GitHub Actions:
	command -v kind >/dev/null || die "E2E_PROVIDER=kind: kind is not installed (go install sigs.k8s.io/kind@latest); on machines without a registry use E2E_PROVIDER=local"
	command -v docker >/dev/null || die "E2E_PROVIDER=kind: no docker command"
	KIND_IMAGE=${KIND_NODE_IMAGE:-kindest/node:v1.37.2} # lab/cluster.KindNodeImage
	docker image inspect "$KIND_IMAGE" >/dev/null 2>&1 || docker pull "$KIND_IMAGE" >&2 ||
		die "E2E_PROVIDER=kind: no node image $KIND_IMAGE (docker pull it, or name another with KIND_NODE_IMAGE)"
	;;
*) die "E2E_PROVIDER=$PROVIDER: want local or kind" ;;
esac

# Can this machine run the tier? Like lab/testtier.Need in the tests: if
# not, skip with the reason (exit 0), or fail when LAB_REQUIRE names the
# tier (CI). The storage VM's node is tier vm: without it, the host node
# only (E2E_VM=0), unless LAB_REQUIRE names vm.
if [ "$PROVIDER" = local ]; then
	[ -x bin/switchyard-lab ] || die "bin/switchyard-lab is missing: run make build (make e2e does)"
	if [ "$(id -u)" = 0 ]; then scripts/ensure-cluster-deps.sh || say "scripts/ensure-cluster-deps.sh failed: the check below says what is missing"; fi
	tier_check() {
		local rc=0 out
		out=$(bin/switchyard-lab cluster check --tier "$@") || rc=$?
		case $rc in
		0) return 0 ;;
		3) say "$out"; return 3 ;;
		*) die "make e2e cannot run (bin/switchyard-lab cluster check --tier $* exited $rc: the reason is above)" ;;
		esac
	}
	rc=0
	tier_check || rc=$?
	if [ $rc = 3 ]; then
		say "SKIP: make e2e needs the cluster tier (LAB_REQUIRE=cluster makes this a failure)"
		exit 0
	fi
	if [ "$VM" = 1 ]; then
		rc=0
		tier_check --vm || rc=$?
		if [ $rc = 3 ]; then
			say "the storage VM's node cannot run: E2E_VM=0, the host node only (LAB_REQUIRE=vm makes this a failure)"
			VM=0
		fi
	fi
fi

step "images (scripts/images.sh, cached by content key)"
[ -x scripts/images.sh ] || die "scripts/images.sh is missing: the images are built by make image (deploy/)"
IMGDIR=$(scripts/images.sh | tail -1)
[ -f "$IMGDIR/images.txt" ] || die "scripts/images.sh printed $IMGDIR, which has no images.txt"
images=()
while read -r tar ref; do images+=("$IMGDIR/$tar"); done <"$IMGDIR/images.txt"
for i in ${E2E_EXTRA_IMAGES:-}; do images+=("$i"); done # e2e/conformance/run.sh: Kubernetes' e2e test images, for every node
busybox=$(awk '$2 ~ /busybox/ {print $2}' "$IMGDIR/images.txt")
[ -n "$busybox" ] || die "no busybox image in $IMGDIR/images.txt: the test pods need it"
HELM=$(GO=$GO scripts/ensure-helm.sh)

if [ "$PROVIDER" = local ]; then
	step "cluster (switchyard-lab cluster up$([ "$VM" = 1 ] && echo " --vm"))"
	KUBEBIN=$(GO=$GO scripts/ensure-kube.sh)
	args=(cluster up)
	[ "$VM" = 1 ] && args+=(--vm)
	for i in "${images[@]}"; do args+=(--image "$i"); done
	[ "${E2E_KEEP:-0}" = 1 ] || cleanups+=("step 'cluster down'; bin/switchyard-lab cluster down >&2")
	bin/switchyard-lab "${args[@]}" | tee "$ART/cluster-up.log" >&2
	KUBECONFIG=$(sed -n 's/^export KUBECONFIG=//p' "$ART/cluster-up.log" | tail -1)
	[ -n "$KUBECONFIG" ] || die "cluster up printed no kubeconfig (see $ART/cluster-up.log)"
	export KUBECONFIG
	KUBECTL="$KUBEBIN/kubectl"
	HOST_NODE=lab-host
	VMJSON=$STATE/vm/storage-vm/vmnode.json
	if [ "$VM" != 1 ]; then
		# The cluster's etcd outlives its processes (a warm start): the
		# storage VM's Node from an earlier --vm run would keep DaemonSet
		# pods "Running" at an address nothing answers on any more.
		# Its pods go now too, not at the pod collector's leisure while a
		# spec counts the driver's pods.
		noproxy "$KUBECTL" delete node storage-vm --ignore-not-found >&2
		noproxy "$KUBECTL" delete pods --all-namespaces --field-selector spec.nodeName=storage-vm \
			--force --grace-period=0 --ignore-not-found >&2 || true
	fi
	export E2E_KUBELET_LOGS="$STATE/logs/*.log,$STATE/vm/*/logs/*.log"
else
	step "cluster (kind $KIND_CLUSTER, $KIND_IMAGE)"
	# The repository's kind-config.yaml: three workers in two zones, each
	# sharing local-hostpath's folder with this machine, where the suites
	# check that nothing is left (kind refuses a missing mount source).
	# lab/cluster's kind provider makes the same cluster (kind_test.go
	# checks that the names agree).
	mkdir -p $HOSTPATH
	kind create cluster --name "$KIND_CLUSTER" --image "$KIND_IMAGE" --config kind-config.yaml --kubeconfig "$WORK/kubeconfig" --wait 3m >&2
	[ "${E2E_KEEP:-0}" = 1 ] || cleanups+=("kind delete cluster --name '$KIND_CLUSTER' >&2")
	for i in "${images[@]}"; do
		kind load image-archive "$i" --name "$KIND_CLUSTER" >&2
	done
	export KUBECONFIG=$WORK/kubeconfig
	KUBECTL=$(command -v kubectl) || die "kubectl is needed with kind"
	HOST_NODE=$KIND_CLUSTER-worker
	# The simulators run on this machine; the driver's pods run in the
	# kind nodes (containers on Docker's "kind" network), which reach the
	# machine at that network's IPv4 gateway, not at 127.0.0.1.
	SIM_ADDR=$(docker network inspect kind -f '{{range .IPAM.Config}}{{.Gateway}} {{end}}' | tr ' ' '\n' | grep -m1 -E '^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$') ||
		die "no IPv4 gateway on Docker's kind network (docker network inspect kind): the driver's pods could not reach the simulators"
	VMJSON=
	VM=0
fi
kc() { noproxy "$KUBECTL" "$@"; }

# VolumeSnapshots need the snapshot CRDs and snapshot-controller (with
# distributed snapshotting: the main release's snapshotters run per node).
# lab/cluster installs the CRDs; what the cluster lacks is added here,
# from the sidecars that scripts/ensure-kube.sh built.
SIDECARS=
sidecars() { [ -n "$SIDECARS" ] || SIDECARS=$(GO=$GO scripts/ensure-kube.sh --sidecars-dir) || die "no sidecars built (scripts/ensure-kube.sh)"; }
if ! kc get crd volumesnapshots.snapshot.storage.k8s.io volumegroupsnapshots.groupsnapshot.storage.k8s.io >/dev/null 2>&1; then
	step "snapshot and group snapshot CRDs (the cluster lacks some)"
	sidecars
	kc apply -f "$SIDECARS/crd" >&2
	kc wait --for=condition=established --timeout=60s crd/volumesnapshots.snapshot.storage.k8s.io crd/volumegroupsnapshots.groupsnapshot.storage.k8s.io >&2
fi
# Only a snapshot-controller pod counts (kind's, a user's cluster): a
# process on this host may belong to an older cluster (pgrep -x never
# matched one anyway: process names stop at 15 characters).
if ! kc get pods -A -o name 2>/dev/null | grep -q snapshot-controller; then
	step "snapshot-controller (the cluster runs none)"
	sidecars
	# CSIVolumeGroupSnapshot is GA (on by default) in snapshot-controller
	# v8.7; named so the features specs' dependency is visible here.
	"${NOPROXY[@]}" "$SIDECARS/bin/snapshot-controller" --kubeconfig="$KUBECONFIG" --leader-election=false --enable-distributed-snapshotting \
		--feature-gates=CSIVolumeGroupSnapshot=true \
		>"$ART/snapshot-controller.log" 2>&1 &
	sc_pid=$!
	cleanups+=("kill $sc_pid 2>/dev/null; wait $sc_pid 2>/dev/null")
fi

step "lab file and connection files"
lab_args=(-host-node "$HOST_NODE" -out "$WORK/lab.json")
if [ "$VM" = 1 ] && [ -f "$VMJSON" ]; then
	lab_args+=(-vmnode "$VMJSON")
else
	# No VM: a ZFS simulator on the host lets the topology and limit
	# specs make volumes (nothing mounts them here).
	mkdir -p "$WORK/zfs"
	"${NOPROXY[@]}" bin/switchyard-lab zfs-ssh --listen "$SIM_ADDR:$HOST_ZFS_PORT" --state "$WORK/zfs" --password switchyard-lab \
		>"$ART/host-zfs-ssh.log" 2>&1 &
	zfs_pid=$!
	cleanups+=("kill $zfs_pid 2>/dev/null; wait $zfs_pid 2>/dev/null")
	lab_args+=(-host-zfs "$SIM_ADDR:$HOST_ZFS_PORT")
fi
(cd e2e && $GO run ./cmd/e2e-lab "${lab_args[@]}") >/dev/null
cp "$WORK/lab.json" "$ART/lab.json"
(cd e2e && $GO run ./cmd/e2e-connections -lab "$WORK/lab.json" -hostpath-base $HOSTPATH -out "$WORK/connections") >&2
cleanups+=("find $HOSTPATH >'$ART/hostpath-left.txt' 2>&1; rm -rf $HOSTPATH")

values=(-f "$IMGDIR/lab-values.yaml" -f e2e/deploy/main-values.yaml)
if grep -q '"infinia"' "$WORK/lab.json"; then
	values+=(-f e2e/deploy/infinia-values.yaml)
	# The node id's nqn part reads /etc/nvme/hostnqn on every node; the
	# host has none (no NVMe here), the VM has its own.
	if [ ! -e /etc/nvme/hostnqn ]; then
		mkdir -p /etc/nvme
		echo "nqn.2014-08.org.nvmexpress:uuid:$(cat /proc/sys/kernel/random/uuid)" >/etc/nvme/hostnqn
		# (kept with the cluster: a node plugin restarting on the host needs it)
		[ "${E2E_KEEP:-0}" = 1 ] || cleanups+=("rm -f /etc/nvme/hostnqn; rmdir /etc/nvme 2>/dev/null")
	fi
fi

step "install switchyard (helm: release switchyard, and switchyard-zones for the topology suite)"
kc create namespace $NS --dry-run=client -o yaml | kc apply -f - >&2
kc -n $NS create secret generic switchyard-e2e-connections --from-file="$WORK/connections" --dry-run=client -o yaml | kc apply -f - >&2
kc -n $NS create secret generic switchyard-e2e-zones-connections --dry-run=client -o yaml | kc apply -f - >&2
noproxy "$HELM" upgrade --install switchyard deploy/charts/switchyard -n $NS "${values[@]}" --wait --timeout 10m >&2
noproxy "$HELM" upgrade --install switchyard-zones deploy/charts/switchyard -n $NS -f "$IMGDIR/lab-values.yaml" -f e2e/deploy/zones-values.yaml \
	--set "controller.nodeSelector.kubernetes\.io/hostname=$HOST_NODE" --set "node.nodeSelector.kubernetes\.io/hostname=$HOST_NODE" --wait --timeout 10m >&2
if [ "${E2E_KEEP:-0}" != 1 ]; then
	cleanups+=("step 'uninstall'; noproxy '$HELM' uninstall -n $NS switchyard-zones switchyard --wait --timeout 5m >&2")
fi
cleanups+=("collect_logs")
collect_logs() {
	mkdir -p "$ART/logs"
	kc -n $NS get pods -o wide >"$ART/logs/driver-pods.txt" 2>&1
	kc get events -A --sort-by=.lastTimestamp >"$ART/logs/events.txt" 2>&1
	for p in $(kc -n $NS get pods -o name 2>/dev/null); do
		for c in $(kc -n $NS get "$p" -o jsonpath='{.spec.containers[*].name}' 2>/dev/null); do
			kc -n $NS logs "$p" -c "$c" >"$ART/logs/${p#pod/}_$c.log" 2>&1
		done
	done
	[ "$PROVIDER" = local ] && cp -r "$STATE/logs" "$ART/logs/cluster" 2>/dev/null
	[ "$PROVIDER" = local ] && for d in "$STATE"/vm/*/logs; do [ -d "$d" ] && cp -r "$d" "$ART/logs/vm-$(basename "$(dirname "$d")")"; done
	true
}

# helm --wait counts a pod as ready once its containers started; on the
# storage VM's emulated CPUs the driver then takes minutes to serve its
# socket, and its sidecars exit ("Lost connection to CSI driver") and
# restart meanwhile. Wait for the driver to register on the VM's node
# (node-driver-registrar does so once the socket answers) and for the pod
# to be Ready again, so that a spec's PVC→Bound measures provisioning,
# not the driver's start, and its first wait is not spent on it.
if [ "$VM" = 1 ] && [ -n "$VMJSON" ]; then
	step "the driver on storage-vm: registered (CSINode) and its pod Ready"
	for ((i = 0; ; i++)); do
		kc get csinode storage-vm -o jsonpath='{.spec.drivers[*].name}' 2>/dev/null | grep -qw e2e.switchyard.lab && break
		[ $i -lt 120 ] || die "the driver did not register on storage-vm in 10 min (CSINode storage-vm; logs in $ART/logs)"
		sleep 5
	done
	kc -n $NS wait pod --for=condition=Ready --field-selector spec.nodeName=storage-vm \
		-l app.kubernetes.io/instance=switchyard,app.kubernetes.io/component=node --timeout=5m >&2 ||
		die "the driver's pod on storage-vm is not Ready 5 min after it registered (logs in $ART/logs)"
	step "the driver serves on storage-vm"
fi

if [ "${E2E_RUN:-suites}" = conformance ]; then
	step "Kubernetes' external storage tests (e2e/conformance/run.sh)"
	export KUBECTL E2E_LAB_FILE=$WORK/lab.json E2E_ARTIFACTS=$ART
	set +e
	GO=$GO e2e/conformance/run.sh # builds e2e.test (needs the proxy), then runs it against 127.0.0.1
	rc=$?
	set -e
	exit "$rc"
fi

# Without the storage VM's node the specs labelled vm (their volumes attach
# only there) cannot run: leave them out rather than fail them.
if [ "$VM" != 1 ] && [ -z "${E2E_LABELS:-}" ]; then E2E_LABELS='!vm'; fi
step "suites (go test ./suites in e2e/, labels: ${E2E_LABELS:-all})"
export E2E_HOSTPATH_BASE=$HOSTPATH E2E_PROVIDER=$PROVIDER E2E_ARTIFACTS=$ART E2E_LAB_FILE=$WORK/lab.json E2E_IMAGE=$busybox
export E2E_RELEASE=switchyard E2E_DRIVER_NAMESPACE=$NS E2E_DRIVER_NAME=e2e.switchyard.lab E2E_CONNECTIONS=secret:switchyard-e2e-connections
export E2E_ZONES_DRIVER_NAME=zones.e2e.switchyard.lab E2E_ZONES_CONNECTIONS=secret:switchyard-e2e-zones-connections
export E2E_ZONES_PROVISIONER=switchyard-zones-controller/csi-provisioner
ginkgo_args=(-ginkgo.v -ginkgo.junit-report="$ART/junit.xml")
[ -n "${E2E_LABELS:-}" ] && ginkgo_args+=(-ginkgo.label-filter="$E2E_LABELS")
# E2E_SEED repeats the spec order of an earlier run (its log's "Random Seed").
[ -n "${E2E_SEED:-}" ] && ginkgo_args+=(-ginkgo.seed="$E2E_SEED")
# Built with the proxy (a cold module cache downloads), run without it.
(cd e2e && $GO test -c -o "$WORK/suites.test" ./suites)
set +e
(cd e2e/suites && noproxy "$WORK/suites.test" -test.v -test.count=1 -test.timeout "${E2E_TIMEOUT:-80m}" "${ginkgo_args[@]}") 2>&1 | tee "$ART/e2e.log"
rc=${PIPESTATUS[0]}
set -e
step "suites done (exit $rc); timings in $ART/timings.txt"
exit "$rc"
