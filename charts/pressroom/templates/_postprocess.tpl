{{/*
Merging and post-processing in a container of their own in the render pod (issue 39, item 3):
qpdf, Ghostscript and pdf-lib parse what Chromium printed here, never in the worker container
beside its database URL, NATS password and gRPC key. Its own user, no Secret referenced or
mounted, no service-account token (the pod mounts none), a read-only root with its own bounded
/tmp (its scratch: render.scratchSizeLimit), no capabilities, no shared process namespace. It
runs the render image's dist/postprocess-main.js, listening on 127.0.0.1 only: the worker
(RENDER_POSTPROCESS_URL) sends it each job's PDFs there, and nothing outside the pod can.
When the pod stops, it waits (preStop) until the worker has finished its renders and exited.
*/}}
{{- define "pressroom.postprocessContainer" -}}
{{- $postprocess := .Values.render.postprocess -}}
{{- /* Until the worker has drained (its health port stops answering), post-processing keeps serving its jobs. */}}
{{- $drain := "const up=()=>fetch('http://127.0.0.1:9090/livez').then(()=>true,()=>false);(async()=>{while(await up())await new Promise((r)=>setTimeout(r,500))})()" -}}
{{- $probe := printf "fetch('http://127.0.0.1:%d/healthz',{signal:AbortSignal.timeout(2000)}).then((r)=>process.exit(r.ok?0:1),()=>process.exit(1))" (int $postprocess.port) -}}
- name: postprocess
  image: {{ include "pressroom.image" (dict "root" . "component" "render") }}
  imagePullPolicy: {{ .Values.image.pullPolicy }}
  args: ["node", "dist/postprocess-main.js"]
  env:
    - name: LOG_LEVEL
      value: {{ .Values.logLevel | quote }}
    - name: RENDER_POSTPROCESS_PORT
      value: {{ $postprocess.port | toString | quote }}
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
    {{- toYaml $postprocess.resources | nindent 4 }}
  securityContext:
    runAsUser: {{ $postprocess.uid }}
    runAsGroup: {{ $postprocess.uid }}
    runAsNonRoot: true
    readOnlyRootFilesystem: true
    allowPrivilegeEscalation: false
    seccompProfile:
      type: RuntimeDefault
    capabilities:
      drop: ["ALL"]
  volumeMounts:
    - name: postprocess-tmp
      mountPath: /tmp
{{- end -}}

{{/* The post-processing container's volume: its own /tmp (the scratch of its tools and a merge's parts), bounded, so no job fills the node's disk. */}}
{{- define "pressroom.postprocessVolumes" -}}
- name: postprocess-tmp
  emptyDir:
    sizeLimit: {{ .Values.render.scratchSizeLimit }}
{{- end -}}
