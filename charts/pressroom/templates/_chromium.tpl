{{/*
Chromium in a container of its own in the render pod (issue 30): its own user, no Secret
referenced or mounted, no service-account token (the pod mounts none), a read-only root with
its own /tmp, no capabilities (but SYS_CHROOT for its own sandbox, render.chromiumSandbox),
no shared process namespace. It runs the render image's dist/chromium-main.js, which starts
chromium-headless-shell with a minimal environment and its DevTools endpoint on 127.0.0.1:
the worker (RENDER_CHROMIUM_URL) connects to it there, and nothing outside the pod can.
When the pod stops, Chromium waits (preStop) until the worker has finished its renders and
exited, within the pod's grace period, so a rollout fails no job in flight.
*/}}
{{- define "pressroom.chromiumContainer" -}}
{{- $chromium := .Values.render.chromium -}}
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
      value: {{ .Values.render.chromiumSandbox | toString | quote }}
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
    {{- include "pressroom.containerSecurityContext" . | nindent 4 }}
    {{- if .Values.render.chromiumSandbox }}
    {{- /* Chromium's sandbox chroots its renderers (deploy/README.md). */}}
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
