{{/*
Chromium in a container of its own in the render pod (issue 30): its own user, no Secret
referenced or mounted, no service-account token (the pod mounts none), a read-only root with
its own /tmp, no capabilities, no shared process namespace. Its own sandbox
(render.chromiumSandbox, pressroom.chromiumSandboxMode) runs under the chart's seccomp profile
(chromium-seccomp.yaml), or, set on without one, with SYS_CHROOT under the runtime's default.
When Chromium exits unasked, the container exits and the kubelet starts it again. It runs the render image's dist/chromium-main.js, which starts
chromium-headless-shell with a minimal environment and its DevTools endpoint on 127.0.0.1:
the worker (RENDER_CHROMIUM_URL) connects to it there, and nothing outside the pod can.
When the pod stops, Chromium waits (preStop) until the worker has finished its renders and
exited, within the pod's grace period, so a rollout fails no job in flight.
*/}}
{{- define "pressroom.chromiumContainer" -}}
{{- $chromium := .Values.render.chromium -}}
{{- $mode := include "pressroom.chromiumSandboxMode" . -}}
{{- /* Until the worker has drained (its health port stops answering), Chromium keeps rendering its jobs. */}}
{{- $drain := "const up=()=>fetch('http://127.0.0.1:9090/livez').then(()=>true,()=>false);(async()=>{while(await up())await new Promise((r)=>setTimeout(r,500))})()" -}}
{{- $probe := printf "fetch('http://127.0.0.1:%d/json/version',{signal:AbortSignal.timeout(2000)}).then((r)=>process.exit(r.ok?0:1),()=>process.exit(1))" (int $chromium.port) -}}
- name: chromium
  image: {{ include "pressroom.image" (dict "root" . "component" "render") }}
  imagePullPolicy: {{ .Values.image.pullPolicy }}
  args: ["node", "dist/chromium-main.js"]
  env:
    - name: LOG_LEVEL
      value: {{ .Values.logLevel | quote }}
    - name: RENDER_CHROMIUM_PORT
      value: {{ $chromium.port | toString | quote }}
    - name: RENDER_CHROMIUM_SANDBOX
      value: {{ ne $mode "off" | toString | quote }}
  lifecycle:
    preStop:
      exec:
        command: ["node", "-e", {{ $drain | quote }}]
  startupProbe:
    exec:
      command: ["node", "-e", {{ $probe | quote }}]
    periodSeconds: 2
    timeoutSeconds: 3
    failureThreshold: 30
  livenessProbe:
    exec:
      command: ["node", "-e", {{ $probe | quote }}]
    periodSeconds: 10
    timeoutSeconds: 5
    failureThreshold: 3
  resources:
    {{- toYaml $chromium.resources | nindent 4 }}
  securityContext:
    runAsUser: {{ $chromium.uid }}
    runAsGroup: {{ $chromium.uid }}
    runAsNonRoot: true
    readOnlyRootFilesystem: true
    allowPrivilegeEscalation: false
    seccompProfile:
      {{- if eq $mode "operator" }}
      type: Localhost
      localhostProfile: {{ printf "operator/%s/%s.json" .Release.Namespace (include "pressroom.chromiumSeccompName" .) }}
      {{- else if eq $mode "localhost" }}
      type: Localhost
      localhostProfile: {{ .Values.render.chromiumSeccomp.localhostProfile }}
      {{- else }}
      type: RuntimeDefault
      {{- end }}
    capabilities:
      drop: ["ALL"]
      {{- if eq $mode "capability" }}
      {{- /* Chromium's sandbox chroots its renderers: the runtime's default profile allows that only with the capability (deploy/README.md). */}}
      add: ["SYS_CHROOT"]
      {{- end }}
  volumeMounts:
    - name: chromium-tmp
      mountPath: /tmp
    - name: shm
      mountPath: /dev/shm
{{- end -}}

{{/* The chromium container's volumes: its own /tmp (profiles, HOME), and a memory-backed /dev/shm. */}}
{{- define "pressroom.chromiumVolumes" -}}
- name: chromium-tmp
  emptyDir: {}
- name: shm
  emptyDir:
    medium: Memory
    sizeLimit: {{ .Values.render.shmSizeLimit }}
{{- end -}}

{{/*
How Chromium's own sandbox runs in this release: "localhost" (the profile installed on the nodes,
render.chromiumSeccomp.localhostProfile), "operator" (the Security Profiles Operator's SeccompProfile,
when the cluster serves its API), "capability" (render.chromiumSandbox=true without either: SYS_CHROOT
under the runtime's default profile), or "off" (render.chromiumSandbox=false, or auto without a profile).
*/}}
{{- define "pressroom.chromiumSandboxMode" -}}
{{- $setting := toString .Values.render.chromiumSandbox -}}
{{- if eq $setting "false" -}}off
{{- else if .Values.render.chromiumSeccomp.localhostProfile -}}localhost
{{- else if .Capabilities.APIVersions.Has "security-profiles-operator.x-k8s.io/v1beta1/SeccompProfile" -}}operator
{{- else if eq $setting "true" -}}capability
{{- else -}}off
{{- end -}}
{{- end -}}

{{/* The name of the chart's seccomp profile for Chromium (the SeccompProfile, or the ConfigMap holding it). */}}
{{- define "pressroom.chromiumSeccompName" -}}
{{- include "pressroom.name" (dict "root" . "component" "chromium-seccomp") -}}
{{- end -}}
