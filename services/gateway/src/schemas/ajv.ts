import { Ajv2020 } from "ajv/dist/2020";
import addFormats from "ajv-formats";
import { RE2JS } from "re2js";

/**
 * Ajv's regular expressions (`pattern`, `patternProperties`) on RE2 (re2js, pure JavaScript): matching
 * takes time linear in the string, whatever the pattern, where V8's backtracking engine can take
 * exponential time (`^(a+)+$`). Patterns are written in ECMAScript syntax and translated; what RE2
 * cannot run (backreferences, lookaround) throws when compiled, so such a schema is refused.
 */
export const re2RegExp = Object.assign((pattern: string) => RE2JS.compile(RE2JS.translateRegExp(pattern)), {
  code: 'require("re2js").RE2JS.compile',
});

/**
 * A JSON Schema (draft 2020-12) validator with linear-time patterns and the formats of ajv-formats.
 * `forCustomer`: a customer's schema, checked against the meta-schema apart, gets an instance of its
 * own (compiling adds to an instance's registry for good, removeSchema or not), dropped with it.
 */
export function newAjv(forCustomer = false): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: false, strict: false, code: { regExp: re2RegExp }, ...(forCustomer ? { meta: false, validateSchema: false } : {}) });
  addFormats(ajv);
  return ajv;
}

/**
 * The gateway's validator of the public catalog's data schemas (ours, a bounded set), compiled on
 * the event loop for admissions (template-directory.ts). Customers' schemas never come here: they are
 * compiled and run on the schema threads (schema-thread.ts), each with an instance of its own.
 */
export const ajv = newAjv();
