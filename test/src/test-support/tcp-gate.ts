import { connect, createServer, type Server, type Socket } from "node:net";

/**
 * A loopback port standing for a server that is not there yet: while shut, each connection is
 * reset at once (what a client sees of a server still starting); once opened, connections are
 * passed to the real server's port. It counts the attempts, so a test opens it after a client
 * has retried instead of after a guessed delay.
 */
export interface TcpGate {
  port: number;
  /** Resolves once `count` connections have been attempted. */
  attempts(count: number): Promise<void>;
  open(targetPort: number): void;
  close(): Promise<void>;
}

export async function tcpGate(): Promise<TcpGate> {
  let target: number | undefined;
  let seen = 0;
  const waiting: { count: number; resolve: () => void }[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    seen++;
    for (const w of waiting.filter((w) => seen >= w.count)) {
      waiting.splice(waiting.indexOf(w), 1);
      w.resolve();
    }
    if (target === undefined) {
      socket.resetAndDestroy();
      return;
    }
    const upstream = connect(target, "127.0.0.1");
    sockets.add(socket).add(upstream);
    for (const s of [socket, upstream]) {
      s.on("error", () => undefined);
      s.on("close", () => sockets.delete(s));
    }
    socket.pipe(upstream).pipe(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  return {
    port: typeof address === "object" && address ? address.port : 0,
    attempts: (count) => (seen >= count ? Promise.resolve() : new Promise((resolve) => waiting.push({ count, resolve }))),
    open: (targetPort) => {
      target = targetPort;
    },
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
