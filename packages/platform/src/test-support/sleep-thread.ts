/** A ThreadPool thread for thread-pool.test.ts: answers a number with itself after spinning that many milliseconds. */
import { serveThread } from "../thread-pool";

serveThread<number, number>((ms) => {
  const until = Date.now() + ms;
  while (Date.now() < until);
  return ms;
});
