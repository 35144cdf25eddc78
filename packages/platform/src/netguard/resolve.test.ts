import assert from "node:assert/strict";
import type * as dns from "node:dns";
import { describe, it } from "node:test";
import { guardedLookup, NetGuardError, resolvePublic, resolvePublicAll, type LookupAllFunction } from "./index";

/** A fake resolver answering from a table, recording what it was asked. */
function fakeLookup(table: Record<string, string[]>, calls: { hostname: string; options: dns.LookupAllOptions }[] = []): LookupAllFunction {
  return (hostname, options, callback) => {
    calls.push({ hostname, options });
    const answers = table[hostname];
    setImmediate(() => {
      if (!answers) {
        const err: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
        err.code = "ENOTFOUND";
        return callback(err, []);
      }
      const filtered = answers
        .map((address) => ({ address, family: address.includes(":") ? 6 : 4 }))
        .filter((a) => !options.family || a.family === options.family);
      callback(null, filtered);
    });
  };
}

const TABLE = {
  "public.test": ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"],
  "mixed.test": ["93.184.215.14", "10.0.0.1"],
  "mixed-last.test": ["2606:4700:4700::1111", "1.1.1.1", "::ffff:169.254.169.254"],
  "metadata.test": ["169.254.169.254"],
  "private.test": ["192.168.10.20"],
  "mapped.test": ["::ffff:7f00:1"],
  "empty.test": [],
};

async function rejectsWithGuard(promise: Promise<unknown>, check: (err: NetGuardError) => void): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof NetGuardError, `expected NetGuardError, got ${String(err)}`);
    check(err);
    return true;
  });
}

describe("resolvePublic", () => {
  const lookup = fakeLookup(TABLE);

  it("returns the first address of a public name, asking verbatim for all addresses", async () => {
    const calls: { hostname: string; options: dns.LookupAllOptions }[] = [];
    const result = await resolvePublic("public.test", { lookup: fakeLookup(TABLE, calls) });
    assert.deepEqual(result, { address: "93.184.215.14", family: 4 });
    assert.equal(calls.length, 1);
    assert.equal(calls[0]?.options.all, true);
    assert.equal(calls[0]?.options.verbatim, true);
  });

  it("rejects a name with mixed public and private answers", async () => {
    await rejectsWithGuard(resolvePublic("mixed.test", { lookup, label: "webhook host" }), (err) => {
      assert.equal(err.hostname, "mixed.test");
      assert.equal(err.address, "10.0.0.1");
      assert.match(err.reason, /10\.0\.0\.0\/8/);
      assert.equal(err.code, "ERR_NETGUARD_BLOCKED");
      assert.equal(err.message, 'webhook host "mixed.test" resolves to a private address (10.0.0.1)');
    });
  });

  it("rejects when the denied answer comes last, and for mapped answers", async () => {
    await rejectsWithGuard(resolvePublic("mixed-last.test", { lookup }), (err) => {
      assert.equal(err.kind, "metadata");
      assert.match(err.message, /cloud metadata address/);
    });
    await rejectsWithGuard(resolvePublic("mapped.test", { lookup }), (err) => assert.equal(err.kind, "loopback"));
  });

  it("rejects metadata even with both relaxations on", async () => {
    await rejectsWithGuard(resolvePublic("metadata.test", { lookup, allowLoopback: true, allowPrivate: true }), (err) =>
      assert.equal(err.reason, "cloud metadata"),
    );
  });

  it("allowPrivate lets a test name resolve to a private address", async () => {
    await rejectsWithGuard(resolvePublic("private.test", { lookup }), (err) => assert.equal(err.kind, "private"));
    assert.deepEqual(await resolvePublic("private.test", { lookup, allowPrivate: true }), { address: "192.168.10.20", family: 4 });
  });

  it("classifies IP literals without a lookup", async () => {
    const calls: { hostname: string; options: dns.LookupAllOptions }[] = [];
    const spy = fakeLookup(TABLE, calls);
    assert.deepEqual(await resolvePublic("8.8.8.8", { lookup: spy }), { address: "8.8.8.8", family: 4 });
    assert.deepEqual(await resolvePublic("[2606:4700:4700::1111]", { lookup: spy }), { address: "2606:4700:4700::1111", family: 6 });
    await rejectsWithGuard(resolvePublic("[::ffff:a9fe:a9fe]", { lookup: spy }), (err) => {
      assert.equal(err.kind, "metadata");
      assert.equal(err.message, 'host "[::ffff:a9fe:a9fe]" is a cloud metadata address');
    });
    await rejectsWithGuard(resolvePublic("127.0.0.1", { lookup: spy }), (err) => assert.equal(err.kind, "loopback"));
    assert.equal(calls.length, 0);
  });

  it("rejects empty answers and bad input; passes resolver errors through", async () => {
    await rejectsWithGuard(resolvePublic("empty.test", { lookup }), (err) => assert.match(err.message, /no addresses/));
    await rejectsWithGuard(resolvePublic("", { lookup }), (err) => assert.match(err.message, /empty host name/));
    await rejectsWithGuard(resolvePublic("[example.com]", { lookup }), (err) => assert.match(err.message, /brackets/));
    await assert.rejects(resolvePublic("nxdomain.test", { lookup }), (err: NodeJS.ErrnoException) => {
      assert.ok(!(err instanceof NetGuardError));
      assert.equal(err.code, "ENOTFOUND");
      return true;
    });
  });

  it("quotes the customer's host name safely in the message", async () => {
    const evil = 'a"b\n.test';
    await rejectsWithGuard(resolvePublic(evil, { lookup: fakeLookup({ [evil]: ["10.1.1.1"] }) }), (err) => {
      assert.equal(err.message, 'host "a\\"b\\n.test" resolves to a private address (10.1.1.1)');
    });
  });

  it("resolvePublicAll returns every checked address", async () => {
    assert.deepEqual(await resolvePublicAll("public.test", { lookup }), [
      { address: "93.184.215.14", family: 4 },
      { address: "2606:2800:21f:cb07:6820:80da:af6b:8b2c", family: 6 },
    ]);
  });

  it("rejects localhost (real DNS) by default and allows it with allowLoopback", async () => {
    await rejectsWithGuard(resolvePublic("localhost"), (err) => {
      assert.equal(err.kind, "loopback");
      assert.equal(err.hostname, "localhost");
    });
    const result = await resolvePublic("localhost", { allowLoopback: true });
    assert.ok(["127.0.0.1", "::1"].includes(result.address), result.address);
    // allowPrivate alone does not cover loopback.
    await rejectsWithGuard(resolvePublic("localhost", { allowPrivate: true }), (err) => assert.equal(err.kind, "loopback"));
  });

  it("rejects the resolver's readings of odd IPv4 spellings (real getaddrinfo)", async () => {
    for (const host of ["127.1", "2130706433", "0x7f.0.0.1", "0177.0.0.1"]) {
      await assert.rejects(resolvePublic(host), (err: unknown) => {
        // glibc reads these as 127.0.0.1 (inet_aton); another libc may say
        // ENOTFOUND. Either way the name must never pass.
        if (err instanceof NetGuardError) assert.equal(err.kind, "loopback");
        else assert.equal((err as NodeJS.ErrnoException).code, "ENOTFOUND");
        return true;
      });
    }
  });
});

describe("guardedLookup", () => {
  const lookup = guardedLookup({ lookup: fakeLookup(TABLE) });

  function call(hostname: string, options?: unknown): Promise<{ err: NodeJS.ErrnoException | null; args: unknown[] }> {
    return new Promise((resolve) => {
      const cb = (err: NodeJS.ErrnoException | null, ...args: unknown[]) => resolve({ err, args });
      if (options === undefined) (lookup as (h: string, cb: unknown) => void)(hostname, cb);
      else (lookup as (h: string, o: unknown, cb: unknown) => void)(hostname, options, cb);
    });
  }

  it("supports (hostname, callback)", async () => {
    const { err, args } = await call("public.test");
    assert.equal(err, null);
    assert.deepEqual(args, ["93.184.215.14", 4]);
  });

  it("supports (hostname, family, callback) and (hostname, { family }, callback)", async () => {
    assert.deepEqual((await call("public.test", 6)).args, ["2606:2800:21f:cb07:6820:80da:af6b:8b2c", 6]);
    assert.deepEqual((await call("public.test", { family: 6 })).args, ["2606:2800:21f:cb07:6820:80da:af6b:8b2c", 6]);
    assert.deepEqual((await call("public.test", { family: "IPv4" })).args, ["93.184.215.14", 4]);
  });

  it("supports { all: true }", async () => {
    const { err, args } = await call("public.test", { all: true });
    assert.equal(err, null);
    assert.deepEqual(args[0], [
      { address: "93.184.215.14", family: 4 },
      { address: "2606:2800:21f:cb07:6820:80da:af6b:8b2c", family: 6 },
    ]);
  });

  it("hands denials to the callback as NetGuardError", async () => {
    for (const options of [undefined, {}, { all: true }]) {
      const { err } = await call("mixed.test", options);
      assert.ok(err instanceof NetGuardError);
      assert.equal(err.address, "10.0.0.1");
    }
    const { err } = await call("169.254.169.254");
    assert.ok(err instanceof NetGuardError);
    assert.equal(err.reason, "cloud metadata");
  });

  it("passes resolver errors through", async () => {
    const { err } = await call("nxdomain.test");
    assert.equal(err?.code, "ENOTFOUND");
  });

  it("throws when there is no callback", () => {
    assert.throws(() => (lookup as (h: string) => void)("public.test"), TypeError);
  });
});
