{{/*
The release's base name: fullnameOverride, else the release name, or release-chart when the release
name lacks the chart's; at most 41 characters, so that <fullname>-postgresql, the longest StatefulSet
name, stays within the 52 a StatefulSet may have (its pods' controller-revision-hash label is the
name and a 10-character hash, within a label's 63).
*/}}
{{- define "pressroom.fullname" -}}
{{- $name := .Values.fullnameOverride -}}
{{- if not $name -}}
{{- $name = ternary .Release.Name (printf "%s-%s" .Release.Name .Chart.Name) (contains .Chart.Name .Release.Name) -}}
{{- end -}}
{{- $name | trunc 41 | trimSuffix "-" -}}
{{- end -}}

{{/* Name of one component's objects: pressroom.name (dict "root" $ "component" "gateway"). */}}
{{- define "pressroom.name" -}}
{{- printf "%s-%s" (include "pressroom.fullname" .root) .component -}}
{{- end -}}

{{- define "pressroom.selectorLabels" -}}
app.kubernetes.io/name: pressroom
app.kubernetes.io/instance: {{ .root.Release.Name }}
{{- if .component }}
app.kubernetes.io/component: {{ .component }}
{{- end }}
{{- end -}}

{{- define "pressroom.labels" -}}
{{ include "pressroom.selectorLabels" . }}
app.kubernetes.io/part-of: pressroom
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version }}
{{- end -}}

{{/* One of Pressroom's images: [<registry>/]<repository>/<component>:<tag>. */}}
{{- define "pressroom.image" -}}
{{- $image := .root.Values.image -}}
{{- $repository := $image.repository -}}
{{- with trimSuffix "/" $image.registry }}{{ $repository = printf "%s/%s" . $repository }}{{ end -}}
{{- printf "%s/%s:%s" $repository .component (default .root.Chart.AppVersion $image.tag) -}}
{{- end -}}

{{- define "pressroom.secretName" -}}
{{- default (include "pressroom.name" (dict "root" . "component" "secrets")) .Values.existingSecret -}}
{{- end -}}

{{- define "pressroom.natsUrl" -}}
{{- if .Values.nats.enabled -}}
{{- printf "nats://%s:4222" (include "pressroom.name" (dict "root" . "component" "nats")) -}}
{{- else -}}
{{- required "nats.url is required when nats.enabled is false" .Values.nats.url -}}
{{- end -}}
{{- end -}}

{{/* The security context of every container: non-root, read-only, nothing to escalate. */}}
{{- define "pressroom.containerSecurityContext" -}}
runAsNonRoot: true
readOnlyRootFilesystem: true
allowPrivilegeEscalation: false
seccompProfile:
  type: RuntimeDefault
capabilities:
  drop: ["ALL"]
{{- end -}}

{{- define "pressroom.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: {{ .uid }}
runAsGroup: {{ .uid }}
fsGroup: {{ .uid }}
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* NATS credentials of one component, from the Secret, when nats.auth.enabled. */}}
{{- define "pressroom.natsAuthEnv" -}}
{{- if .root.Values.nats.auth.enabled }}
- name: NATS_USER
  value: {{ .component }}
- name: NATS_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ include "pressroom.secretName" .root }}
      key: NATS_PASSWORD_{{ upper .component }}
{{- end }}
{{- end -}}

{{/* A Secret key as an env var: pressroom.secretEnv (dict "root" $ "name" "OUTPUT_SIGNING_SECRET"); "key" when the key has another name, "optional" when it may be absent. */}}
{{- define "pressroom.secretEnv" -}}
- name: {{ .name }}
  valueFrom:
    secretKeyRef:
      name: {{ include "pressroom.secretName" .root }}
      key: {{ .key | default .name }}
      {{- if .optional }}
      optional: true
      {{- end }}
{{- end -}}

{{/* A service's DATABASE_URL: its own role's URL, under DATABASE_URL_<SERVICE> in the Secret. */}}
{{- define "pressroom.databaseEnv" -}}
{{- include "pressroom.secretEnv" (dict "root" .root "name" "DATABASE_URL" "key" (printf "DATABASE_URL_%s" (upper .component))) -}}
{{- end -}}

{{/* The migrated services, in the order the provision Job runs their migrations. */}}
{{- define "pressroom.migrated" -}}identity metering render storage webhook{{- end -}}

{{/* A NetworkPolicy peer: the pods of one component of this release. */}}
{{- define "pressroom.peer" -}}
- podSelector:
    matchLabels:
      {{- include "pressroom.selectorLabels" . | nindent 6 }}
{{- end -}}

{{/* The bundled NATS server's configuration. */}}
{{- define "pressroom.natsConf" -}}
port: 4222
http_port: 8222
server_name: $POD_NAME
jetstream {
  store_dir: /data/jetstream
}
{{- if .Values.nats.auth.enabled }}
{{- /*
nats-server reads a $VARIABLE's value as configuration, not as text: a password such as 7K9…
or 3e5… would be a number, and the server would not start. So each password reaches it
single-quoted (NATS_PASSWORD_<COMPONENT>_QUOTED, pressroom.natsPasswordEnv), a raw string
whatever its characters but a single quote or a line break (the values schema refuses those).
*/}}
{{- /* One user per component, allowed only what it uses (files/nats-topology.json, written from packages/platform/src/nats/access.ts). */}}
{{- $users := (.Files.Get "files/nats-topology.json" | fromJson).users }}
{{- /* The file names the default output bucket; storage's OUTPUT_BUCKET, when set, replaces it. */}}
{{- $bucket := .Values.storage.env.OUTPUT_BUCKET | default "outputs" }}
authorization {
  users = [
    {{- range $component := list "gateway" "identity" "metering" "render" "storage" "webhook" "provision" }}
    {{- $permissions := get $users $component }}
    { user: {{ $component }}, password: $NATS_PASSWORD_{{ upper $component }}_QUOTED, permissions: { publish: { allow: [{{ range $i, $subject := $permissions.publish }}{{ if $i }}, {{ end }}"{{ $subject | replace "$O.outputs." (printf "$O.%s." $bucket) | replace "OBJ_outputs" (printf "OBJ_%s" $bucket) }}"{{ end }}] }, subscribe: { allow: [{{ range $i, $subject := $permissions.subscribe }}{{ if $i }}, {{ end }}"{{ $subject }}"{{ end }}] } } }
    {{- end }}
  ]
}
{{- end }}
{{- end -}}

{{/* The peers holding a gRPC certificate: the six services and the operator CLI's admin pod. */}}
{{- define "pressroom.grpcPeers" -}}gateway identity metering render storage webhook admin{{- end -}}

{{/* The Secret of one peer's gRPC certificate: pressroom.grpcTlsSecret (dict "root" $ "component" "gateway"). */}}
{{- define "pressroom.grpcTlsSecret" -}}
{{- if eq .root.Values.grpcTls.source "secrets" -}}
{{- required (printf "grpcTls.secrets.%s is required with grpcTls.source=secrets" .component) (get .root.Values.grpcTls.secrets .component) -}}
{{- else -}}
{{- printf "%s-grpc-tls" (include "pressroom.name" .) -}}
{{- end -}}
{{- end -}}

{{/* Where a peer's certificate is mounted, and the settings naming its files. */}}
{{/* The URI naming one peer of this release in its gRPC certificate: pressroom.grpcIdentity (dict "root" $ "component" "gateway"). */}}
{{- define "pressroom.grpcIdentity" -}}
spiffe://{{ .root.Values.grpcTls.trustDomain }}/ns/{{ .root.Release.Namespace }}/release/{{ .root.Release.Name }}/service/{{ .component }}
{{- end -}}

{{- define "pressroom.grpcTlsDir" -}}/etc/pressroom/grpc-tls{{- end -}}

{{- define "pressroom.grpcTlsEnv" -}}
- name: GRPC_TLS_CA
  value: {{ include "pressroom.grpcTlsDir" . }}/ca.crt
- name: GRPC_TLS_CERT
  value: {{ include "pressroom.grpcTlsDir" . }}/tls.crt
- name: GRPC_TLS_KEY
  value: {{ include "pressroom.grpcTlsDir" . }}/tls.key
{{- end -}}

{{/* The volume of one peer's certificate Secret, readable by the pod's group (fsGroup) only. */}}
{{- define "pressroom.grpcTlsVolume" -}}
- name: grpc-tls
  secret:
    secretName: {{ include "pressroom.grpcTlsSecret" . }}
    defaultMode: 0440
{{- end -}}

{{- define "pressroom.grpcTlsMount" -}}
- name: grpc-tls
  mountPath: {{ include "pressroom.grpcTlsDir" . }}
  readOnly: true
{{- end -}}

{{/*
The sealing key pairs (sealing.yaml), each named by its `pair`: render's ("sealing") and the webhook
service's ("destination-sealing"). Each has its holder, its private key's Secret (the chart's, or
sealing.<holder>.existingSecret), its public key's ConfigMap and the directory it is mounted at, the
volume named after the pair.
*/}}
{{- define "pressroom.sealingHolder" -}}{{ get (dict "sealing" "render" "destination-sealing" "webhook") .pair }}{{- end -}}
{{- /* The pair's own values (sealing.render, sealing.webhook): an operator's Secret and certificate, or none. */}}
{{- define "pressroom.sealingOwn" -}}{{ index .root.Values.sealing (include "pressroom.sealingHolder" .) | toJson }}{{- end -}}
{{- define "pressroom.sealingKeySecret" -}}
{{- $own := include "pressroom.sealingOwn" . | fromJson }}
{{- default (include "pressroom.name" (dict "root" .root "component" (printf "%s-key" .pair))) $own.existingSecret }}
{{- end -}}
{{- define "pressroom.sealingPublicKey" -}}{{ include "pressroom.name" (dict "root" .root "component" (printf "%s-public-key" .pair)) }}{{- end -}}
{{- define "pressroom.sealingDir" -}}/etc/pressroom/{{ .pair }}{{- end -}}

{{/* The sealing pairs each component mounts: render and the webhook service the private key of their own, the gateway the public key of both. */}}
{{- define "pressroom.sealingPairs" -}}
{{- get (dict "render" "sealing" "webhook" "destination-sealing" "gateway" "sealing destination-sealing") .component -}}
{{- end -}}

{{/* A sealing pair's volume: for render and the webhook service their private key alone (readable by the pod's group), for the gateway the public key's certificate. */}}
{{- define "pressroom.sealingVolume" -}}
- name: {{ .pair }}
{{- if eq .component "gateway" }}
  configMap:
    name: {{ include "pressroom.sealingPublicKey" . }}
{{- else }}
  secret:
    secretName: {{ include "pressroom.sealingKeySecret" . }}
    items:
      - key: sealing.key
        path: sealing.key
    defaultMode: 0440
{{- end }}
{{- end -}}

{{- define "pressroom.sealingMount" -}}
- name: {{ .pair }}
  mountPath: {{ include "pressroom.sealingDir" . }}
  readOnly: true
{{- end -}}

{{/* The bundled NATS server's password variables: each component's from the Secret, and the same single-quoted for nats.conf (pressroom.natsConf). */}}
{{- define "pressroom.natsPasswordEnv" -}}
{{- range $i, $component := list "gateway" "identity" "metering" "render" "storage" "webhook" "provision" }}
{{- $name := printf "NATS_PASSWORD_%s" (upper $component) }}
{{- if $i }}{{ "\n" }}{{ end }}
{{- include "pressroom.secretEnv" (dict "root" $ "name" $name) }}
- name: {{ $name }}_QUOTED
  value: {{ printf "'$(%s)'" $name | quote }}
{{- end }}
{{- end -}}

{{/* The port of otel.endpoint: the one it names, else its scheme's (http 80, https 443). */}}
{{- define "pressroom.otelPort" -}}
{{- $url := urlParse .Values.otel.endpoint -}}
{{- $hostPort := splitList ":" $url.host -}}
{{- if gt (len $hostPort) 1 }}{{ last $hostPort }}{{ else }}{{ ternary "443" "80" (eq $url.scheme "https") }}{{ end -}}
{{- end -}}

{{/* The OpenTelemetry collector as NetworkPolicy peers: its pods (otel.collector.namespace, podLabels) and its addresses (cidrs). */}}
{{- define "pressroom.otelCollectorPeers" -}}
{{- $collector := .Values.otel.collector -}}
{{- if not (or $collector.podLabels $collector.cidrs) -}}
{{- fail "otel.endpoint is set with networkPolicy.enabled: name its collector, otel.collector.podLabels (with otel.collector.namespace) or otel.collector.cidrs, the only destination the NetworkPolicies open for telemetry" -}}
{{- end -}}
{{- if $collector.podLabels }}
- namespaceSelector:
    matchLabels:
      kubernetes.io/metadata.name: {{ required "otel.collector.namespace is required with otel.collector.podLabels" $collector.namespace }}
  podSelector:
    matchLabels:
      {{- toYaml $collector.podLabels | nindent 6 }}
{{- end }}
{{- range $cidr := $collector.cidrs }}
- ipBlock:
    cidr: {{ $cidr }}
{{- end }}
{{- end -}}
