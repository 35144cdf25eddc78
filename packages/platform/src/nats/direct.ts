import type { JetStreamManager, StoredMsg } from "nats";

export type DirectQuery = { seq: number; next_by_subj: string } | { last_by_subj: string };

/** nats.js exposes direct get on the manager object without declaring it on the interface. */
type DirectApi = { getMessage(stream: string, query: DirectQuery): Promise<StoredMsg> };

const notFound = (err: unknown) => (err as { code?: string }).code === "404" || /no message found/i.test((err as Error).message);

/**
 * One message of a stream by direct get (any replica answers; the stream
 * needs allow_direct), or undefined when none matches.
 */
export async function directGet(jsm: JetStreamManager, stream: string, query: DirectQuery): Promise<StoredMsg | undefined> {
  const direct = (jsm as JetStreamManager & { direct?: DirectApi }).direct;
  if (!direct) throw new Error("this nats client has no direct get API");
  try {
    return await direct.getMessage(stream, query);
  } catch (err) {
    if (notFound(err)) return undefined;
    throw err;
  }
}
