{{/*
Refusals of insecure values, each naming the value that accepts the risk (issue 30), and of
values that would fail later which JSON Schema cannot see (issue 45). Included once, by services.yaml.
*/}}
{{- define "pressroom.checks" -}}
{{- if and (eq .Values.billing.provider "local") (not .Values.billing.local.allowFreeUpgrades) }}
{{- fail "billing.provider=local upgrades any key to any plan WITHOUT payment: for an evaluation, set billing.local.allowFreeUpgrades=true; in production, set billing.provider=stripe (deploy/kubernetes.md)" }}
{{- end }}
{{- if and (not .Values.nats.auth.enabled) (not .Values.nats.auth.insecureNoAuth) }}
{{- fail "nats.auth.enabled=false lets any pod that reaches NATS forge job events, serve bytes under another customer's URL or delete the streams: keep the per-service users (nats.auth.enabled=true), or set nats.auth.insecureNoAuth=true to accept that" }}
{{- end }}
{{- if and .Values.nats.auth.enabled (not .Values.nats.enabled) (not .Values.existingSecret) }}
{{- range $component := list "gateway" "identity" "metering" "render" "storage" "webhook" "provision" }}
{{- if not (get $.Values.secrets.natsPasswords $component) }}
{{- fail (printf "secrets.natsPasswords.%s is required with an external NATS (nats.enabled=false): the password of its user %q there (or put NATS_PASSWORD_%s in existingSecret)" $component $component (upper $component)) }}
{{- end }}
{{- end }}
{{- end }}
{{- /* What JSON Schema cannot compare: one value against another. */}}
{{- range $bounds := list (list "gateway.autoscaling" .Values.gateway.autoscaling) (list "render.keda" .Values.render.keda) }}
{{- $name := index $bounds 0 }}{{ $scaling := index $bounds 1 }}
{{- if gt (int $scaling.minReplicas) (int $scaling.maxReplicas) }}
{{- fail (printf "%s.minReplicas (%d) is above %s.maxReplicas (%d)" $name (int $scaling.minReplicas) $name (int $scaling.maxReplicas)) }}
{{- end }}
{{- end }}
{{- end -}}
