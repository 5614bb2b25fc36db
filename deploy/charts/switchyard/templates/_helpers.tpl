{{/* Names: <release>-switchyard unless the release name already says it. */}}
{{- define "switchyard.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "switchyard.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "switchyard.labels" -}}
app.kubernetes.io/name: {{ include "switchyard.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* selector COMPONENT: the labels a component's pods are selected by. */}}
{{- define "switchyard.selector" -}}
app.kubernetes.io/name: {{ include "switchyard.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/*
The CSI driver name: csiDriver.name (democratic-csi), or driverName (what
other CSI charts call it). Both set and different is a mistake.
*/}}
{{- define "switchyard.driverName" -}}
{{- $a := toString (default "" .Values.csiDriver.name) -}}
{{- $b := toString (default "" .Values.driverName) -}}
{{- if and $a $b (ne $a $b) -}}
{{- fail (printf "csiDriver.name %q and driverName %q differ: set one of them" $a $b) -}}
{{- end -}}
{{- default $b $a -}}
{{- end -}}

{{/* The kubelet's root directory: democratic-csi's node.kubeletHostPath wins. */}}
{{- define "switchyard.kubeletDir" -}}
{{- default .Values.kubeletDir .Values.node.kubeletHostPath | trimSuffix "/" -}}
{{- end -}}

{{/* Where the driver's socket is, inside every container of a pod. */}}
{{- define "switchyard.socketDir" -}}/csi-data{{- end -}}
{{- define "switchyard.socket" -}}/csi-data/csi.sock{{- end -}}

{{/* image: (dict "image" <image values> "root" $ "appTag" bool). */}}
{{- define "switchyard.image" -}}
{{- $tag := .image.tag | toString -}}
{{- if and (not $tag) .appTag -}}{{- $tag = .root.Chart.AppVersion -}}{{- end -}}
{{- if not .image.registry -}}{{- fail "an image without registry (the repository, democratic-csi's spelling): set <component>.image.registry" -}}{{- end -}}
{{- if not $tag -}}{{- fail (printf "image %s has no tag: set its image.tag" .image.registry) -}}{{- end -}}
image: {{ printf "%s:%s" .image.registry $tag | quote }}
imagePullPolicy: {{ default .root.Values.imagePullPolicy .image.pullPolicy }}
{{- end -}}

{{/*
args: (dict "list" <args> "extra" <extraArgs> "root" $) renders democratic-csi
style args with tpl; the context has .Values, .Release, .csiSocketAddress,
.kubeletDir and .driverName.
*/}}
{{- define "switchyard.args" -}}
{{- $ctx := merge (dict "csiSocketAddress" (include "switchyard.socket" .root) "kubeletDir" (include "switchyard.kubeletDir" .root) "driverName" (include "switchyard.driverName" .root)) .root -}}
{{- range .list }}
- {{ tpl (toString .) $ctx | quote }}
{{- end }}
{{- range .extra }}
- {{ tpl (toString .) $ctx | quote }}
{{- end }}
{{- end -}}

{{/* The node pods' health port: hostNetwork, so unique per driver name. */}}
{{- define "switchyard.nodeHealthPort" -}}
{{- if .Values.node.livenessProbe.port -}}
{{- .Values.node.livenessProbe.port -}}
{{- else -}}
{{- add 9808 (mod (atoi (adler32sum (include "switchyard.driverName" .))) 100) -}}
{{- end -}}
{{- end -}}

{{- define "switchyard.controllerServiceAccount" -}}
{{- if .Values.controller.serviceAccount.create -}}
{{- default (printf "%s-controller" (include "switchyard.fullname" .)) .Values.controller.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.controller.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "switchyard.nodeServiceAccount" -}}
{{- if .Values.node.serviceAccount.create -}}
{{- default (printf "%s-node" (include "switchyard.fullname" .)) .Values.node.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.node.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The main config's Secret. */}}
{{- define "switchyard.configSecret" -}}
{{- default (printf "%s-driver-config" (include "switchyard.fullname" .)) .Values.driver.existingConfigSecret -}}
{{- end -}}

{{/* The connections' Secret, when the chart mounts one. */}}
{{- define "switchyard.connectionsSecret" -}}
{{- if .Values.existingSecret -}}
{{- .Values.existingSecret -}}
{{- else if .Values.connections -}}
{{- printf "%s-connections" (include "switchyard.fullname" .) -}}
{{- end -}}
{{- end -}}

{{/* The main config as the chart writes it: a proxy unless it says otherwise. */}}
{{- define "switchyard.mainConfig" -}}
{{- $c := deepCopy (default (dict) .Values.driver.config) -}}
{{- if not (hasKey $c "driver") -}}{{- $_ := set $c "driver" "proxy" -}}{{- end -}}
{{- if eq (toString $c.driver) "proxy" -}}
{{- $p := default (dict) $c.proxy -}}
{{- if not (hasKey $p "configFolder") -}}{{- $_ := set $p "configFolder" .Values.connectionsMountPath -}}{{- end -}}
{{- $_ := set $c "proxy" $p -}}
{{- end -}}
{{- toYaml $c -}}
{{- end -}}

{{/* Does the controller part run in the node DaemonSet? */}}
{{- define "switchyard.controllerOnNodes" -}}
{{- if and .Values.controller.enabled (eq .Values.controller.strategy "node") -}}true{{- end -}}
{{- end -}}

{{/*
controllerSidecars: (dict "root" $ "onNodes" bool) the controller sidecar
containers, for the Deployment or (strategy: node) the DaemonSet.
*/}}
{{- define "switchyard.controllerSidecars" -}}
{{- $root := .root -}}
{{- $c := $root.Values.controller -}}
{{- $sock := include "switchyard.socket" $root -}}
{{- /* The sidecars' metrics ports, when they serve metrics (the Deployment only). */ -}}
{{- $sm := dict -}}
{{- if and (not .onNodes) $root.Values.metrics.sidecars.enabled -}}{{- $sm = $root.Values.metrics.sidecars.ports -}}{{- end -}}
{{- if $c.externalProvisioner.enabled }}
- name: csi-provisioner
  {{- include "switchyard.image" (dict "image" $c.externalProvisioner.image "root" $root) | nindent 2 }}
  args:
    {{- with (include "switchyard.args" (dict "list" $c.externalProvisioner.args "root" $root)) }}{{ . | trim | nindent 4 }}{{- end }}
    {{- if .onNodes }}
    # One provisioner per node, each for the PVCs scheduled to its node.
    - "--node-deployment=true"
    {{- else if $c.leaderElection.enabled }}
    - "--leader-election"
    - "--leader-election-namespace={{ $root.Release.Namespace }}"
    {{- end }}
    {{- /* democratic-csi users set these in extraArgs: theirs replace the chart's. */}}
    {{- $extra := join " " (default (list) $c.externalProvisioner.extraArgs) }}
    {{- with $c.externalProvisioner.topology }}
    {{- if .enabled }}
    {{- if not (contains "--feature-gates" $extra) }}
    - "--feature-gates=Topology=true"
    {{- end }}
    {{- if not (contains "--strict-topology" $extra) }}
    - "--strict-topology={{ .strictTopology }}"
    {{- end }}
    {{- if not (contains "--immediate-topology" $extra) }}
    - "--immediate-topology={{ .immediateTopology }}"
    {{- end }}
    {{- end }}
    {{- end }}
    {{- if $root.Values.csiDriver.storageCapacity }}
    - "--enable-capacity"
    - "--capacity-ownerref-level={{ if .onNodes }}1{{ else }}2{{ end }}"
    {{- end }}
    {{- with (include "switchyard.args" (dict "list" (list) "extra" $c.externalProvisioner.extraArgs "root" $root)) }}{{ . | trim | nindent 4 }}{{- end }}
    {{- if $sm }}
    - "--http-endpoint=:{{ $sm.provisioner }}"
    {{- end }}
  env:
    - name: NAMESPACE
      valueFrom: {fieldRef: {fieldPath: metadata.namespace}}
    - name: POD_NAME
      valueFrom: {fieldRef: {fieldPath: metadata.name}}
    - name: NODE_NAME
      valueFrom: {fieldRef: {fieldPath: spec.nodeName}}
  volumeMounts:
    - name: socket-dir
      mountPath: {{ include "switchyard.socketDir" $root }}
  {{- if $sm }}
  ports:
    - name: {{ include "switchyard.sidecarPortName" "provisioner" }}
      containerPort: {{ $sm.provisioner }}
      protocol: TCP
  {{- end }}
  {{- with $c.externalProvisioner.resources }}
  resources: {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}
{{- if and $c.externalAttacher.enabled $root.Values.csiDriver.attachRequired }}
- name: csi-attacher
  {{- include "switchyard.image" (dict "image" $c.externalAttacher.image "root" $root) | nindent 2 }}
  args:
    {{- with (include "switchyard.args" (dict "list" $c.externalAttacher.args "root" $root)) }}{{ . | trim | nindent 4 }}{{- end }}
    {{- if $c.leaderElection.enabled }}
    - "--leader-election"
    - "--leader-election-namespace={{ $root.Release.Namespace }}"
    {{- end }}
    {{- with (include "switchyard.args" (dict "list" (list) "extra" $c.externalAttacher.extraArgs "root" $root)) }}{{ . | trim | nindent 4 }}{{- end }}
    {{- if $sm }}
    - "--http-endpoint=:{{ $sm.attacher }}"
    {{- end }}
  volumeMounts:
    - name: socket-dir
      mountPath: {{ include "switchyard.socketDir" $root }}
  {{- if $sm }}
  ports:
    - name: {{ include "switchyard.sidecarPortName" "attacher" }}
      containerPort: {{ $sm.attacher }}
      protocol: TCP
  {{- end }}
  {{- with $c.externalAttacher.resources }}
  resources: {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}
{{- if $c.externalResizer.enabled }}
- name: csi-resizer
  {{- include "switchyard.image" (dict "image" $c.externalResizer.image "root" $root) | nindent 2 }}
  args:
    {{- with (include "switchyard.args" (dict "list" $c.externalResizer.args "root" $root)) }}{{ . | trim | nindent 4 }}{{- end }}
    {{- if $c.leaderElection.enabled }}
    - "--leader-election"
    - "--leader-election-namespace={{ $root.Release.Namespace }}"
    {{- end }}
    {{- with (include "switchyard.args" (dict "list" (list) "extra" $c.externalResizer.extraArgs "root" $root)) }}{{ . | trim | nindent 4 }}{{- end }}
    {{- if $sm }}
    - "--http-endpoint=:{{ $sm.resizer }}"
    {{- end }}
  volumeMounts:
    - name: socket-dir
      mountPath: {{ include "switchyard.socketDir" $root }}
  {{- if $sm }}
  ports:
    - name: {{ include "switchyard.sidecarPortName" "resizer" }}
      containerPort: {{ $sm.resizer }}
      protocol: TCP
  {{- end }}
  {{- with $c.externalResizer.resources }}
  resources: {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}
{{- if $c.externalSnapshotter.enabled }}
- name: csi-snapshotter
  {{- include "switchyard.image" (dict "image" $c.externalSnapshotter.image "root" $root) | nindent 2 }}
  args:
    {{- with (include "switchyard.args" (dict "list" $c.externalSnapshotter.args "root" $root)) }}{{ . | trim | nindent 4 }}{{- end }}
    {{- if .onNodes }}
    # Each node snapshots its own volumes; snapshot-controller needs
    # --enable-distributed-snapshotting too.
    - "--node-deployment=true"
    {{- else if $c.leaderElection.enabled }}
    - "--leader-election"
    - "--leader-election-namespace={{ $root.Release.Namespace }}"
    {{- end }}
    {{- with (include "switchyard.args" (dict "list" (list) "extra" $c.externalSnapshotter.extraArgs "root" $root)) }}{{ . | trim | nindent 4 }}{{- end }}
    {{- if $sm }}
    - "--http-endpoint=:{{ $sm.snapshotter }}"
    {{- end }}
  {{- if .onNodes }}
  env:
    - name: NODE_NAME
      valueFrom: {fieldRef: {fieldPath: spec.nodeName}}
  {{- end }}
  volumeMounts:
    - name: socket-dir
      mountPath: {{ include "switchyard.socketDir" $root }}
  {{- if $sm }}
  ports:
    - name: {{ include "switchyard.sidecarPortName" "snapshotter" }}
      containerPort: {{ $sm.snapshotter }}
      protocol: TCP
  {{- end }}
  {{- with $c.externalSnapshotter.resources }}
  resources: {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}
{{- $hm := include "switchyard.healthMonitor" $root | fromYaml }}
{{- if $hm.enabled }}
{{- if .onNodes }}
{{- fail "controller.externalHealthMonitor.enabled needs controller.strategy deployment: with strategy node every node's controller knows only its own volumes, and one monitor per node would ask each about all of them" }}
{{- end }}
- name: csi-external-health-monitor-controller
  {{- include "switchyard.image" (dict "image" $hm.image "root" $root) | nindent 2 }}
  args:
    {{- with (include "switchyard.args" (dict "list" $hm.args "root" $root)) }}{{ . | trim | nindent 4 }}{{- end }}
    {{- if $c.leaderElection.enabled }}
    - "--leader-election"
    - "--leader-election-namespace={{ $root.Release.Namespace }}"
    {{- end }}
    {{- with (include "switchyard.args" (dict "list" (list) "extra" $hm.extraArgs "root" $root)) }}{{ . | trim | nindent 4 }}{{- end }}
    {{- if $sm }}
    - "--http-endpoint=:{{ $sm.healthMonitor }}"
    {{- end }}
  volumeMounts:
    - name: socket-dir
      mountPath: {{ include "switchyard.socketDir" $root }}
  {{- if $sm }}
  ports:
    - name: {{ include "switchyard.sidecarPortName" "healthMonitor" }}
      containerPort: {{ $sm.healthMonitor }}
      protocol: TCP
  {{- end }}
  {{- with $hm.resources }}
  resources: {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}
{{- with $c.extraContainers }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* livenessProbe: (dict "root" $ "port" N) the livenessprobe sidecar. */}}
{{- define "switchyard.livenessSidecar" -}}
- name: liveness-probe
  {{- include "switchyard.image" (dict "image" .root.Values.livenessProbe.image "root" .root) | nindent 2 }}
  args:
    - "--csi-address={{ include "switchyard.socket" .root }}"
    - "--health-port={{ .port }}"
    {{- with .root.Values.livenessProbe.probeTimeout }}
    - "--probe-timeout={{ . }}"
    {{- end }}
    {{- with (include "switchyard.args" (dict "list" (list) "extra" .root.Values.livenessProbe.extraArgs "root" .root)) }}{{ . | trim | nindent 4 }}{{- end }}
  volumeMounts:
    - name: socket-dir
      mountPath: {{ include "switchyard.socketDir" .root }}
  {{- with .root.Values.livenessProbe.resources }}
  resources: {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end -}}

{{/*
driverProbe: (dict "root" $) the probe on the driver container, answered by
the livenessprobe sidecar, which itself waits up to probeTimeout for the
driver: the kubelet must wait longer, or every slow Probe is a failure.
*/}}
{{- define "switchyard.driverProbe" -}}
{{- $p := .root.Values.livenessProbe -}}
{{- with $p.probeTimeout -}}
{{- $t := toString . -}}
{{- $secs := 0.0 -}}
{{- if regexMatch "^[0-9]+(\\.[0-9]+)?ms$" $t -}}{{- $secs = divf (float64 (trimSuffix "ms" $t)) 1000 -}}
{{- else if regexMatch "^[0-9]+(\\.[0-9]+)?s$" $t -}}{{- $secs = float64 (trimSuffix "s" $t) -}}
{{- else if regexMatch "^[0-9]+(\\.[0-9]+)?m$" $t -}}{{- $secs = mulf (float64 (trimSuffix "m" $t)) 60 -}}
{{- end -}}
{{- if ge $secs (float64 $p.timeoutSeconds) -}}
{{- fail (printf "livenessProbe.probeTimeout %s is not below livenessProbe.timeoutSeconds %v: the kubelet would give up before the sidecar answers; raise timeoutSeconds or lower probeTimeout" $t $p.timeoutSeconds) -}}
{{- end -}}
{{- end -}}
livenessProbe:
  httpGet:
    path: /healthz
    port: healthz
  initialDelaySeconds: {{ $p.initialDelaySeconds }}
  timeoutSeconds: {{ $p.timeoutSeconds }}
  periodSeconds: {{ $p.periodSeconds }}
  failureThreshold: {{ $p.failureThreshold }}
{{- end -}}

{{/* driverPorts: (dict "health" N-or-0 "metrics" N-or-0) the switchyard container's ports. */}}
{{- define "switchyard.driverPorts" -}}
{{- if or .health .metrics -}}
ports:
{{- if .health }}
  - name: healthz
    containerPort: {{ .health }}
    protocol: TCP
{{- end }}
{{- if .metrics }}
  - name: metrics
    containerPort: {{ .metrics }}
    protocol: TCP
{{- end }}
{{- end -}}
{{- end -}}

{{/* CA bundle mount and env, when extraCaCerts is set. */}}
{{- define "switchyard.caEnv" -}}
{{- if .Values.extraCaCerts }}
- name: SSL_CERT_DIR
  value: /etc/ssl/certs:/etc/switchyard/ca
{{- end }}
{{- end -}}

{{/* sidecarPortName SIDECAR: the port name (at most 15 characters) of a sidecar's metrics. */}}
{{- define "switchyard.sidecarPortName" -}}
{{- get (dict "provisioner" "metrics-prov" "attacher" "metrics-attach" "resizer" "metrics-resize" "snapshotter" "metrics-snap" "healthMonitor" "metrics-health") . -}}
{{- end -}}

{{/*
controllerMetricsPorts: the controller pod's metrics ports as "name:port"
lines, the order of the Service (empty when nothing serves metrics).
*/}}
{{- define "switchyard.controllerMetricsPorts" -}}
{{- $c := .Values.controller -}}
{{- if .Values.metrics.enabled }}
metrics:{{ .Values.metrics.port }}
{{- end }}
{{- if .Values.metrics.sidecars.enabled }}
{{- $p := .Values.metrics.sidecars.ports }}
{{- if $c.externalProvisioner.enabled }}
{{ include "switchyard.sidecarPortName" "provisioner" }}:{{ $p.provisioner }}
{{- end }}
{{- if and $c.externalAttacher.enabled .Values.csiDriver.attachRequired }}
{{ include "switchyard.sidecarPortName" "attacher" }}:{{ $p.attacher }}
{{- end }}
{{- if $c.externalResizer.enabled }}
{{ include "switchyard.sidecarPortName" "resizer" }}:{{ $p.resizer }}
{{- end }}
{{- if $c.externalSnapshotter.enabled }}
{{ include "switchyard.sidecarPortName" "snapshotter" }}:{{ $p.snapshotter }}
{{- end }}
{{- if (include "switchyard.healthMonitor" . | fromYaml).enabled }}
{{ include "switchyard.sidecarPortName" "healthMonitor" }}:{{ $p.healthMonitor }}
{{- end }}
{{- end }}
{{- end -}}

{{/*
checkPorts: (dict "what" "the controller pod" "ports" (dict name port)) fails
when two of a pod's listeners share a port; they would not start.
*/}}
{{- define "switchyard.checkPorts" -}}
{{- $seen := dict -}}
{{- range $name, $port := .ports -}}
{{- $k := toString $port -}}
{{- if hasKey $seen $k -}}
{{- fail (printf "%s: %s and %s both listen on port %s: give one of them another port" $.what (get $seen $k) $name $k) -}}
{{- end -}}
{{- $_ := set $seen $k $name -}}
{{- end -}}
{{- end -}}

{{/* The label the ServiceMonitor selects the metrics Services by. */}}
{{- define "switchyard.metricsLabel" -}}
switchyard-csi.github.io/metrics: "true"
{{- end -}}

{{/*
podEnv: the driver container's own Pod (downward API), which the Kubernetes
Events it posts about broken connection files regard (driver/events).
*/}}
{{- define "switchyard.podEnv" -}}
- name: POD_NAME
  valueFrom: {fieldRef: {fieldPath: metadata.name}}
- name: POD_NAMESPACE
  valueFrom: {fieldRef: {fieldPath: metadata.namespace}}
- name: POD_UID
  valueFrom: {fieldRef: {fieldPath: metadata.uid}}
{{- end -}}

{{/*
checkDriverNameFree refuses an install whose driver name another release
already serves. Helm alone refuses it too, but late and in its own words
("CSIDriver ... exists and cannot be imported into the current release:
invalid ownership metadata"), after the namespaced objects are checked, and
not at all with csiDriver.enabled=false, where two node plugins would then
register one name on every node. lookup answers only against a cluster
(helm install/upgrade); helm template and --dry-run=client see nothing and
pass. The CSIDriver belongs to this release on an upgrade; one that Helm
did not install (made by hand, or by another tool) is refused only when
this chart would create it.
*/}}
{{- define "switchyard.checkDriverNameFree" -}}
{{- $name := include "switchyard.driverName" . -}}
{{- $found := lookup "storage.k8s.io/v1" "CSIDriver" "" $name -}}
{{- if $found -}}
{{- $ann := default (dict) $found.metadata.annotations -}}
{{- $rel := toString (default "" (get $ann "meta.helm.sh/release-name")) -}}
{{- $ns := toString (default "" (get $ann "meta.helm.sh/release-namespace")) -}}
{{- if $rel -}}
{{- if not (and (eq $rel .Release.Name) (eq $ns .Release.Namespace)) -}}
{{- fail (printf "csiDriver.name %s is already installed by release %s in namespace %s: choose another csiDriver.name (several installs run side by side with different names), or upgrade that release instead (helm upgrade %s -n %s)" $name $rel $ns $rel $ns) -}}
{{- end -}}
{{- else if .Values.csiDriver.enabled -}}
{{- fail (printf "csiDriver.name %s: a CSIDriver of that name exists in the cluster, not installed by Helm: choose another csiDriver.name, or keep that object and set csiDriver.enabled=false" $name) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
healthMonitor: the external-health-monitor-controller's values as YAML
(fromYaml them): controller.externalHealthMonitor, with democratic-csi's
controller.externalHealthMonitorController over it when a democratic-csi
values file sets that, so its enabled, image, extraArgs and resources keep
their meaning here.
*/}}
{{- define "switchyard.healthMonitor" -}}
{{- $hm := deepCopy .Values.controller.externalHealthMonitor -}}
{{- with .Values.controller.externalHealthMonitorController -}}
{{- $hm = mergeOverwrite $hm (deepCopy .) -}}
{{- end -}}
{{- toYaml $hm -}}
{{- end -}}
