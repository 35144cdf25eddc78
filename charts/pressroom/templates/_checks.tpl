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
{{- range $holder := list "render" "webhook" }}
{{- $own := index $.Values.sealing $holder }}
{{- if and $own.existingSecret (not $own.publicKey) }}
{{- fail (printf "sealing.%s.publicKey is required with sealing.%s.existingSecret: its public key in PEM (or a certificate of it), which the gateway seals to" $holder $holder) }}
{{- end }}
{{- if and $own.publicKey (not $own.existingSecret) }}
{{- fail (printf "sealing.%s.publicKey is given without sealing.%s.existingSecret: the Secret holding its private key as sealing.key" $holder $holder) }}
{{- end }}
{{- end }}
{{- /* What JSON Schema cannot compare: one value against another. */}}
{{- range $bounds := list (list "gateway.autoscaling" .Values.gateway.autoscaling) (list "render.keda" .Values.render.keda) }}
{{- $name := index $bounds 0 }}{{ $scaling := index $bounds 1 }}
{{- if gt (int $scaling.minReplicas) (int $scaling.maxReplicas) }}
{{- fail (printf "%s.minReplicas (%d) is above %s.maxReplicas (%d)" $name (int $scaling.minReplicas) $name (int $scaling.maxReplicas)) }}
{{- end }}
{{- end }}
{{- /* The database services' pools at their most replicas, within PostgreSQL's max_connections (docs/capacity.md). */}}
{{- $pools := include "pressroom.databasePools" . | fromJson }}
{{- $total := int .Values.postgresql.reservedConnections }}
{{- range $c, $n := $pools }}{{ $total = add $total (int $n) }}{{ end }}
{{- if gt (int $total) (int .Values.postgresql.maxConnections) }}
{{- fail (printf "PostgreSQL connections: the pools at their most replicas (%s) and postgresql.reservedConnections (%d) come to %d, over postgresql.maxConnections (%d): lower a databasePool (webhook.concurrency), the replicas or render.keda.maxReplicas, or raise max_connections and postgresql.maxConnections (docs/capacity.md)" (include "pressroom.databasePoolsText" .) (int .Values.postgresql.reservedConnections) (int $total) (int .Values.postgresql.maxConnections)) }}
{{- end }}
{{- end -}}

{{/* Each database service's most PostgreSQL connections: its pool times its most replicas (render's: KEDA's maximum), as JSON. */}}
{{- define "pressroom.databasePools" -}}
{{- $pools := dict }}
{{- range $c := list "identity" "metering" "render" "storage" "webhook" }}
{{- $values := index $.Values $c }}
{{- /* webhook's pool: one connection per callback in flight, and 4 (databasePoolSize in services/webhook/src/config.ts). */}}
{{- $pool := ternary (add (int $values.concurrency) 4) (int $values.databasePool) (eq $c "webhook") }}
{{- $replicas := ternary $.Values.render.keda.maxReplicas $values.replicas (and (eq $c "render") $.Values.render.keda.enabled) }}
{{- $_ := set $pools $c (mul (int $replicas) $pool) }}
{{- end }}
{{- toJson $pools }}
{{- end -}}

{{- define "pressroom.databasePoolsText" -}}
{{- $parts := list }}
{{- range $c, $n := include "pressroom.databasePools" . | fromJson }}{{ $parts = append $parts (printf "%s %d" $c (int $n)) }}{{ end }}
{{- join ", " $parts }}
{{- end -}}
