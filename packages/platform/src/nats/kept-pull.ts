import { createInbox, nanos, type JsMsg, type Msg, type NatsConnection, type Subscription } from "nats";
// nats.js makes its own JsMsg this way; it is not re-exported from the package's root (nats 2.29, the last 2.x).
import { toJsMsg } from "nats/lib/jetstream/jsmsg";

/**
 * How long one pull waits on the server for a message before it expires and another is asked
 * for. Not shorter: with 1 s, a command once stayed queued past 10 s in the worker's test under
 * CI's load, for a reason not found.
 */
const PULL_EXPIRES_MS = 5_000;
/** A pull neither answered nor expired this long after it was asked for was lost (the server restarted, the connection dropped). */
const PULL_LOST_MS = PULL_EXPIRES_MS + 2_000;
/** The pause before asking again after the server refused a pull (409: the consumer deleted, too many waiting pulls). */
const REFUSED_RETRY_MS = 1_000;
/** The JetStream acknowledgement timeout of the messages' ackAck() (nats.js's default). */
const ACK_TIMEOUT_MS = 5_000;

/**
 * Messages of a durable pull consumer asked for one at a time, over one subscription kept for
 * the process's life. nats.js's fetch() subscribes and unsubscribes a new inbox for every pull;
 * its consume() asks for the next message as soon as one arrives and holds it while the
 * handlers are busy. Here each pull is one publish on the consumer's MSG.NEXT subject, replied
 * to under the kept subscription's wildcard with the pull's own number, where its message or
 * its end (a status: 408 expired, 409 refused) comes back. One pull waits at a time: the owner
 * asks for the next with pull() when it has room, and is told by onIdle() when the waiting one
 * ended without a message.
 */
export class KeptPull {
  private readonly inbox = createInbox();
  private readonly subject: string;
  private readonly subscription: Subscription;
  /** The number of the last pull asked for; its answer is the one awaited. */
  private pulls = 0;
  /** The last pull's watchdog, while it waits: it is taken for lost when this fires. */
  private waiting: ReturnType<typeof setTimeout> | undefined;
  private refused: ReturnType<typeof setTimeout> | undefined;
  private closed = false;

  constructor(
    private readonly nc: NatsConnection,
    stream: string,
    consumer: string,
    private readonly onMessage: (msg: JsMsg) => void,
    private readonly onIdle: () => void,
  ) {
    this.subject = `$JS.API.CONSUMER.MSG.NEXT.${stream}.${consumer}`;
    this.subscription = nc.subscribe(`${this.inbox}.*`, { callback: (err, msg) => (err ? undefined : this.received(msg)) });
  }

  /** Asks for one message, unless a pull waits already or the last was refused a moment ago. */
  pull(): void {
    if (this.closed || this.waiting || this.refused) return;
    // A connection closed for good gets no more pulls; its owner is stopping.
    if (this.nc.isClosed()) return;
    const pull = ++this.pulls;
    this.waiting = setTimeout(() => this.ended(pull), PULL_LOST_MS);
    try {
      this.nc.publish(this.subject, JSON.stringify({ batch: 1, expires: nanos(PULL_EXPIRES_MS) }), { reply: `${this.inbox}.${pull}` });
    } catch {
      // Draining: the watchdog asks again, or finds the connection closed.
    }
  }

  private received(msg: Msg): void {
    const status = msg.data.length === 0 ? (msg.headers?.code ?? 0) : 0;
    if (status === 0) {
      // A message keeps its own subject, so it does not say which pull it answers: taken for the
      // awaited one. (Only a pull taken for lost that was merely late can make that wrong, and
      // then a second message may come while the owner has no room for it.)
      this.stopWaiting();
      this.onMessage(toJsMsg(msg, ACK_TIMEOUT_MS));
      return;
    }
    // A status comes on the reply subject of the pull it ends.
    const pull = Number(msg.subject.slice(this.inbox.length + 1));
    if (status === 409 && pull === this.pulls && !this.closed) {
      this.refused = setTimeout(() => {
        this.refused = undefined;
        this.onIdle();
      }, REFUSED_RETRY_MS);
    }
    this.ended(pull);
  }

  /** Pull `pull` ended without a message: if it was the one awaited, the owner may ask again. */
  private ended(pull: number): void {
    if (pull !== this.pulls || !this.waiting) return;
    this.stopWaiting();
    if (!this.closed && !this.refused) this.onIdle();
  }

  private stopWaiting(): void {
    clearTimeout(this.waiting);
    this.waiting = undefined;
  }

  /**
   * Asks for no more. A pull still waiting on the server then finds no interest in its reply
   * subject and is skipped (nats-server 2.9.10, checked by consumer-loop.test.ts); a message
   * already on its way still goes to onMessage. On a connection closed already, the subscription
   * went with it (nats.js refuses to drain it).
   */
  async close(): Promise<void> {
    this.closed = true;
    this.stopWaiting();
    clearTimeout(this.refused);
    if (!this.nc.isClosed()) await this.subscription.drain();
  }
}
