{{/* The chart's name, for the app.kubernetes.io/name label. */}}
{{- define "eventsched.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The prefix of every object's name: <release>-<name>, or the release name alone when it
contains the chart's name (release "eventsched" gives deploy/'s names).
*/}}
{{- define "eventsched.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* The labels every object carries (deploy/base's, nothing Helm-specific). */}}
{{- define "eventsched.labels" -}}
app.kubernetes.io/name: {{ include "eventsched.name" . }}
{{- end }}

{{/* The scheduler pods' labels, also the Deployment's selector and the Service's. */}}
{{- define "eventsched.schedulerLabels" -}}
{{ include "eventsched.labels" . }}
app.kubernetes.io/component: scheduler
{{- end }}

{{/* The web page's pods' labels, also its Deployment's selector and its Service's. */}}
{{- define "eventsched.uiLabels" -}}
{{ include "eventsched.labels" . }}
app.kubernetes.io/component: ui
{{- end }}

{{/* The shadow's pods' labels, also its Deployment's selector and its Service's. */}}
{{- define "eventsched.shadowLabels" -}}
{{ include "eventsched.labels" . }}
app.kubernetes.io/component: shadow
{{- end }}

{{- define "eventsched.serviceAccountName" -}}
{{- default (include "eventsched.fullname" .) .Values.serviceAccount.name }}
{{- end }}

{{- define "eventsched.databaseSecret" -}}
{{- default (printf "%s-database" (include "eventsched.fullname" .)) .Values.database.secretName }}
{{- end }}

{{/* The EVENTSCHED_DATABASE_URL variable, from the database Secret. */}}
{{- define "eventsched.databaseEnv" -}}
- name: EVENTSCHED_DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "eventsched.databaseSecret" . }}
      key: {{ .Values.database.secretKey }}
{{- end }}

{{/* The pod securityContext of every pod: the restricted Pod Security Standard. */}}
{{- define "eventsched.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: {{ .uid }}
runAsGroup: {{ .uid }}
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{- define "eventsched.containerSecurityContext" -}}
runAsNonRoot: true
runAsUser: {{ .uid }}
runAsGroup: {{ .uid }}
readOnlyRootFilesystem: true
allowPrivilegeEscalation: false
capabilities:
  drop: ["ALL"]
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{/* The one writable place of a read-only root filesystem. */}}
{{- define "eventsched.tmpVolume" -}}
- name: tmp
  emptyDir:
    sizeLimit: 64Mi
{{- end }}

{{/* A plugin list entry: a name, or a {name, weight} map. */}}
{{- define "eventsched.pluginList" -}}
{{- range . }}
{{- if kindIs "string" . }}
- name: {{ . }}
{{- else }}
- {{ toYaml . | nindent 2 | trim }}
{{- end }}
{{- end }}
{{- end }}
