// Package cluster gives a test a running Kubernetes cluster and a
// kubeconfig, through one interface with providers:
//
//	p, _ := cluster.Get("local")          // or "kind"
//	if ok, why := p.Available(); !ok { testtier.Need(t, testtier.Cluster, ok, why) }
//	c, err := p.Start(ctx, cluster.Options{StateDir: t.TempDir()})
//	defer c.Stop(ctx)
//	kubeconfig := c.Kubeconfig()
//
// # The local provider
//
// Processes on this machine, all at Kubernetes KubernetesVersion: Debian's
// etcd 3.4 (127.0.0.1:23791), kube-apiserver (https://127.0.0.1:16443,
// Node and RBAC authorization, privileged pods allowed),
// kube-controller-manager (every controller) and kube-scheduler, and a real
// node on the host ("lab-host", node IP 10.250.0.1 on a veth: its own
// containerd with root, state and socket under the state dir, a CNI bridge,
// the kubelet with cgroupfs and its default root dir /var/lib/kubelet, which
// a CSI node plugin's DaemonSet names by host path). The binaries are built from the Go module
// proxy by scripts/ensure-kube.sh (the nested modules kubebuild/ and
// sidecarbuild/; the driver's module never requires k8s.io/kubernetes) and
// cached by content key under /var/cache/switchyard-lab/kube/<key>/bin.
// Certificates are made here with crypto/x509 and kept in the state dir,
// so a second start on the same dir is a warm start.
//
// The processes outlive the program that started them (`switchyard-lab
// cluster up` returns while they run): each is recorded in
// <state>/run/<seq>-<name>.pid and logs to <state>/logs/<name>.log. Attach
// gives another program the running cluster; Stop stops it from anywhere.
// One local cluster runs per machine (its ports, cgroups and devices are
// machine-wide): a second Start names the running one.
//
// There is no kube-proxy and no cluster DNS: pods reach the apiserver at
// the kubernetes service's ClusterIP (10.96.0.1:443), which a forwarder on
// the host node passes to the apiserver. Images come from docker-archive
// tarballs (ImportImage, Options.Images; pods use imagePullPolicy: Never);
// the sandbox image is the lab's own pause (BuildPauseImage, WriteImageTar)
// unless Options.PauseImage gives one.
//
// Extra nodes: Options.ExtraNodes take NodeStarters (the storage VM's node,
// vmnode*.go), started once the control plane is ready; a starter writes a
// node's bootstrap files with Local.WriteNodeFiles (kubeconfig with the
// node's client certificate, ca.crt, kubelet-config.yaml, kubelet.args),
// finds the kubelet in Local.BinDir and the images to import in
// Local.NodeImages, and starts its processes with Local.Spawn so that Stop
// stops them. `switchyard-lab cluster up --vm` gets the storage VM's
// starter from VMNode, which vmnode*.go provides by setting newVMNode.
// Start waits until each node is Ready. AddFakeNode adds Node and CSINode
// objects for zones that have no machine (pods bound there never run).
//
// # The kind provider
//
// For laptops and GitHub Actions runners (Docker with a full kernel and
// the kindest/node image). Its Available says why it cannot run on the
// lab machines; its Start is left to a later issue.
package cluster
