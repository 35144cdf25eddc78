/**
 * KEDA's nats-jetstream scaler and the HPA it feeds, reproduced from their sources (KEDA's
 * pkg/scalers/nats_jetstream_scaler.go, Kubernetes' replica calculator) because neither can
 * run here: how many render replicas KEDA would ask for, read from a real nats-server.
 *
 * The scaler reads `http://<natsServerMonitoringEndpoint>/jsz?acc=<account>&consumers=true&config=true`,
 * finds the account by name, the stream in its stream_detail, the consumer in the stream's
 * consumer_detail, and reports the lag num_pending + num_ack_pending (the stream's last
 * sequence when the consumer is missing; an error when the stream is). It is active while the
 * lag is above activationLagThreshold (0 by default). The HPA's target is an AverageValue of
 * lagThreshold per replica: it keeps the current count while lag / (threshold × current) is
 * within 10 % of 1, else asks for ceil(lag / threshold); KEDA keeps minReplicaCount while the
 * scaler is inactive. Both are clamped to the ScaledObject's bounds.
 */

export interface NatsJetStreamTrigger {
  natsServerMonitoringEndpoint: string;
  account: string;
  stream: string;
  consumer: string;
  lagThreshold: string;
  activationLagThreshold?: string;
}

interface JszConsumer {
  name: string;
  num_pending: number;
  num_ack_pending: number;
}
interface JszStream {
  name: string;
  state: { last_seq: number };
  consumer_detail?: JszConsumer[];
}
interface Jsz {
  account_details?: { name: string; stream_detail?: JszStream[] }[];
}

/** The scaler's metric: the consumer's lag as KEDA reads it from the monitoring endpoint `monitoring` (host:port). */
export async function kedaLag(trigger: NatsJetStreamTrigger, monitoring = trigger.natsServerMonitoringEndpoint): Promise<number> {
  const response = await fetch(`http://${monitoring}/jsz?acc=${trigger.account}&consumers=true&config=true`);
  if (!response.ok) throw new Error(`/jsz answered ${response.status}`);
  const jsz = (await response.json()) as Jsz;
  const stream = jsz.account_details?.find((a) => a.name === trigger.account)?.stream_detail?.find((s) => s.name === trigger.stream);
  if (!stream) throw new Error(`stream not found: account ${trigger.account}, stream ${trigger.stream}`);
  const consumer = stream.consumer_detail?.find((c) => c.name === trigger.consumer);
  return consumer ? consumer.num_pending + consumer.num_ack_pending : stream.state.last_seq;
}

/** The replicas KEDA and the HPA would set for `lag`, from `current`, within the ScaledObject's bounds. */
export function desiredReplicas(trigger: NatsJetStreamTrigger, bounds: { min: number; max: number }, current: number, lag: number): number {
  const threshold = Number(trigger.lagThreshold);
  const activation = Number(trigger.activationLagThreshold ?? 0);
  const clamp = (n: number) => Math.min(bounds.max, Math.max(bounds.min, n));
  if (lag <= activation) return bounds.min;
  const ratio = lag / (threshold * current);
  return clamp(Math.abs(ratio - 1) <= 0.1 ? current : Math.ceil(lag / threshold));
}
