/** Types of schema-check.mjs, which browsers load as it is. */
export interface Problem {
  path: string;
  message: string;
}

export function validate(schema: unknown, value: unknown, path?: string): Problem[];
