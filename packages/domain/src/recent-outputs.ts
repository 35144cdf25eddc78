/** What a download answers before the bytes (the size is the bytes' length). */
export interface RecentOutputInfo {
  contentType: string;
  filename: string;
  /** Content-Disposition: attachment rather than inline. */
  attachment: boolean;
  expiresAt: Date;
}

export interface RecentOutput<I extends RecentOutputInfo = RecentOutputInfo> {
  info: I;
  bytes: Buffer;
}

export interface RecentOutputsOptions {
  /** Total bytes kept; 0 keeps nothing. */
  maxBytes: number;
  /** Outputs larger than this are not kept. */
  maxEntryBytes: number;
  /** Milliseconds since the epoch; tests move it. */
  now?: () => number;
}

/**
 * Outputs a replica saw recently, in memory (storage: those it read from the
 * object store for a download; the gateway: those announced to it): a
 * document is often downloaded more than once within minutes, and serving it
 * from here skips a read of the object store.
 * Bounded by total bytes, the least recently used leaving first; an expired
 * output is never served.
 */
export class RecentOutputs<I extends RecentOutputInfo = RecentOutputInfo> {
  /** A Map iterates in insertion order and get() re-inserts, so the first entry is the least recently used. */
  private readonly entries = new Map<string, RecentOutput<I>>();
  private bytes = 0;
  private readonly now: () => number;

  constructor(private readonly options: RecentOutputsOptions) {
    this.now = options.now ?? Date.now;
  }

  /** Bytes held by all entries. */
  get totalBytes(): number {
    return this.bytes;
  }

  /** Whether an output of this size would be kept, so a writer can stop collecting its chunks early. */
  accepts(sizeBytes: number): boolean {
    return this.options.maxBytes > 0 && sizeBytes <= this.options.maxEntryBytes && sizeBytes <= this.options.maxBytes;
  }

  /** Keeps the output (replacing one under the same id), evicting the least recently used until the total fits. */
  add(outputId: string, output: RecentOutput<I>): void {
    this.delete(outputId);
    if (!this.accepts(output.bytes.length) || this.isExpired(output)) return;
    this.entries.set(outputId, output);
    this.bytes += output.bytes.length;
    // The new entry fits on its own (accepts), so this stops before reaching it.
    for (const id of this.entries.keys()) {
      if (this.bytes <= this.options.maxBytes) break;
      this.delete(id);
    }
  }

  /** The output if it is kept and not expired (an expired one is dropped); counts as a use. */
  get(outputId: string): RecentOutput<I> | undefined {
    const output = this.entries.get(outputId);
    if (!output) return undefined;
    if (this.isExpired(output)) {
      this.delete(outputId);
      return undefined;
    }
    // Re-inserting moves it to the most recently used end.
    this.entries.delete(outputId);
    this.entries.set(outputId, output);
    return output;
  }

  delete(outputId: string): void {
    const output = this.entries.get(outputId);
    if (!output) return;
    this.entries.delete(outputId);
    this.bytes -= output.bytes.length;
  }

  /** Expired the same way as the download path's row check: strictly past expires_at. */
  private isExpired(output: RecentOutput<I>): boolean {
    return output.info.expiresAt.getTime() < this.now();
  }
}
