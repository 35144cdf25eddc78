import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { RenderFailure, byteSize } from "../engine";
import { readOutput, runTool, ToolFailed, withWorkDir, type ToolLimits } from "./tools";
import type { Encryption } from "./options";

/** qpdf exits 3 when it wrote its output with warnings (e.g. a damaged input it repaired). */
const QPDF_OK = [0, 3];

const yn = (allowed: boolean) => (allowed ? "y" : "n");

/**
 * Encrypts with AES-256 (qpdf, PDF 2.0's revision 6 security handler). The passwords reach qpdf
 * through an argument file (`@file`, one argument a line) in the job's private directory, never
 * its command line (which any process may read in /proc), and are gone with the directory.
 * Permissions: print (full quality or none), copy (text and graphics extraction; extraction
 * for accessibility stays allowed, as AES-256 requires), modify (the document and page
 * assembly), annotate (comments and form filling).
 */
export async function encrypt(pdf: Uint8Array, encryption: Encryption, limits: ToolLimits): Promise<Uint8Array> {
  // Each password is one positional argument (qpdf 11.3 has no --user-password=): a leading -
  // makes it an option, which qpdf quotes back on stderr, and a control character (a line
  // break) splits it. The gateway refuses both; this holds should a job carry one anyway.
  if ([encryption.userPassword, encryption.ownerPassword].some((password) => password.startsWith("-") || /\p{Cc}/u.test(password)))
    throw new RenderFailure("invalid_document", "an encryption password starts with - or holds a control character");
  return withWorkDir(async (dir) => {
    const input = join(dir, "in.pdf");
    const output = join(dir, "out.pdf");
    const argfile = join(dir, "args");
    const { print, copy, modify, annotate } = encryption.permissions;
    await writeFile(input, pdf, { mode: 0o600 });
    const args = [
      input,
      "--encrypt",
      encryption.userPassword,
      encryption.ownerPassword,
      "256",
      `--print=${print ? "full" : "none"}`,
      `--extract=${yn(copy)}`,
      `--modify-other=${yn(modify)}`,
      `--assemble=${yn(modify)}`,
      `--annotate=${yn(annotate)}`,
      `--form=${yn(annotate)}`,
      "--",
      output,
    ];
    await writeFile(argfile, args.join("\n") + "\n", { mode: 0o600 });
    await runTool("qpdf", [`@${argfile}`], limits, QPDF_OK).catch((err: unknown) => Promise.reject(withoutPasswords(err)));
    return readOutput(output, "qpdf", limits.maxOutputBytes);
  });
}

/**
 * The encrypt step's failure as it may be logged: qpdf's stderr (and a failed run's message,
 * which quotes it) can hold a password, so only the exit code is kept.
 */
function withoutPasswords(err: unknown): unknown {
  if (err instanceof RenderFailure) return err;
  return new Error(
    `qpdf could not encrypt the document (${err instanceof ToolFailed ? `exit code ${err.exitCode}` : "it did not run"}; its output is not kept)`,
  );
}

/** A merge whose parts add up to more than the output cap. */
export function partsOverCap(maxOutputBytes: number): RenderFailure {
  return new RenderFailure("output_cap", `the documents add up to more than ${byteSize(maxOutputBytes)} (the output size cap)`);
}

/** Takes the next part of a merge: written to disk at once, its bytes not kept. */
export type AddPart = (part: Uint8Array) => Promise<void>;

/**
 * The pages of the parts `produce` adds, in order, as one PDF (qpdf --empty --pages): each
 * part's pages, fonts and images, none of its document-level structure. Each part goes to the
 * job's scratch directory as it comes (the parts are never all in memory), and their total is
 * held to the output cap as they come: past it the merge fails `output_cap` at once, before the
 * parts left are rendered.
 */
export async function mergeParts(
  produce: (add: AddPart) => Promise<void>,
  limits: ToolLimits,
  joining: (join: () => Promise<Uint8Array>) => Promise<Uint8Array> = (join) => join(),
): Promise<Uint8Array> {
  return withWorkDir(async (dir) => {
    const inputs: string[] = [];
    let total = 0;
    await produce(async (part) => {
      total += part.byteLength;
      if (total > limits.maxOutputBytes) throw partsOverCap(limits.maxOutputBytes);
      const input = join(dir, `part-${inputs.length}.pdf`);
      await writeFile(input, part, { mode: 0o600 });
      inputs.push(input);
    });
    const output = join(dir, "merged.pdf");
    return joining(async () => {
      await runTool("qpdf", ["--empty", "--pages", ...inputs, "--", output], limits, QPDF_OK);
      return readOutput(output, "qpdf", limits.maxOutputBytes);
    });
  });
}
